"""``muscle-mem verify``: check the signature of every stored trajectory; exit status 1 if one fails."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.stores import Signable, StepIndexed, Store, StoreDamaged, StoredRecord, steps
from muscle_mem.stores.signing import ENV, Signer, SigningKeyError, Verdict, env_keys

NAME = "verify"
HELP = (
    f"Check the signature of every stored trajectory (key: --key, else ${ENV}); "
    "list those unsigned, bad or put back after their removal, and exit with status 1 if there is "
    "one, or if the store is damaged."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_key_argument(parser)


def add_key_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--key`` option (signing and verifying commands)."""
    parser.add_argument(
        "--key",
        action="append",
        default=[],
        metavar="KEY",
        help=f"a signing key (repeatable, or several separated by commas; the first signs, all verify); "
        f"default ${ENV}, which is safer: a command line is visible to other users of the machine",
    )


def signer_of(args: argparse.Namespace) -> Signer:
    """The signer of ``--key``, else of ``$MUSCLE_MEM_SIGNING_KEY``; a usage error without one."""
    try:
        keys = [key.strip() for given in args.key for key in given.split(",")] or env_keys()
        if keys is None:
            raise UsageError(f"no signing key: pass --key KEY or set ${ENV}")
        return Signer(keys)
    except SigningKeyError as exc:
        raise UsageError(str(exc)) from None


def signable(store: Store, args: argparse.Namespace) -> Signable:
    """The store as one whose records carry signatures; a usage error for a memory store."""
    if not isinstance(store, Signable):
        raise UsageError(f"{cache.display_url(store_url(args))} keeps no records between commands")
    return store


def judged(store: Signable, signer: Signer) -> Iterator[tuple[StoredRecord, Verdict, dict[str, Any] | None]]:
    """Each stored record, how it stands against the signer, and its parsed JSON (signature removed)."""
    for record in store.records():
        if record.removed:
            yield record, Verdict.REMOVED, None
            continue
        try:
            data = json.loads(record.text)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            yield record, Verdict.UNREADABLE, None
        else:
            yield record, signer.verdict(data, record.task_key, record.id), data


def readable(store: Store) -> None:
    """Read once what a worker reads besides the records (listing, size, tasks, a task's steps): a
    table missing or altered raises :class:`StoreDamaged`."""
    for _ in store.summaries():
        pass
    store.nbytes()
    keys = list(store.tasks())[:1]
    if isinstance(store, StepIndexed):
        for key in keys:
            store.task_state(key, 0)
            store.heads_at(steps.root(key))


def printable(text: str) -> str:
    """``text`` as is if every character prints, else its escaped form (a stored id is not trusted)."""
    return text if text.isprintable() else ascii(text)


def run(args: argparse.Namespace) -> int:
    signer = signer_of(args)
    out = Output()
    counts: Counter[Verdict] = Counter()
    try:
        with cache.opened(args) as opened:
            for record, verdict, _ in judged(signable(opened, args), signer):
                counts[verdict] += 1
                if not verdict.accepted:
                    out.line(f"{printable(record.id)}  {verdict.value}")
            readable(opened)
    except StoreDamaged as exc:
        out.line(f"{cache.display_url(store_url(args))} is damaged: {' '.join(str(exc).split())}")
        out.line(
            "Workers treat it as unavailable (the agent serves every call) until it is repaired or replaced."
        )
        return 1
    failed = sum(n for verdict, n in counts.items() if not verdict.accepted)
    parts = [f"{counts[Verdict.SIGNED]:,} signed"]
    if counts[Verdict.OLDER_KEY]:
        parts.append(
            f"{counts[Verdict.OLDER_KEY]:,} signed with an older key (`muscle-mem sign` re-signs them)"
        )
    parts.append(f"{failed:,} unsigned or bad")
    total = sum(counts.values())
    out.line(
        f"Checked {plural(total, 'trajectory')} in {cache.display_url(store_url(args))}: {', '.join(parts)}."
    )
    return 1 if failed else 0
