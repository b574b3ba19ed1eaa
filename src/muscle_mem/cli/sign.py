"""``muscle-mem sign --yes``: sign the stored trajectories not yet signed with the first key."""

from __future__ import annotations

import argparse
from typing import Any

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import verify
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.model.trajectory import from_record
from muscle_mem.stores import StoredRecord
from muscle_mem.stores.signing import Signer, Verdict

NAME = "sign"
HELP = (
    "Sign the stored trajectories that are unsigned (adopting signing on a store) or signed with an "
    "older key (retiring it); never one whose signature is bad. Asks for --yes."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verify.add_key_argument(parser)
    parser.add_argument(
        "--yes",
        action="store_true",
        help="really sign them (this vouches for unsigned records as they are now)",
    )


def run(args: argparse.Namespace) -> int:
    signer = verify.signer_of(args)
    out = Output()
    where = cache.display_url(store_url(args))
    with cache.opened(args) as opened:
        store = verify.signable(opened, args)
        signed: list[tuple[StoredRecord, str]] = []
        unsigned = left = 0
        for record, verdict, data in verify.judged(store, signer):
            if verdict.accepted and verdict is not Verdict.OLDER_KEY:
                continue
            text = _signed(signer, record, data) if verdict in (Verdict.UNSIGNED, Verdict.OLDER_KEY) else None
            if text is None:
                left += 1
                out.line(f"{verify.printable(record.id)}  left unchanged: {_why(verdict)}")
                continue
            signed.append((record, text))
            unsigned += verdict is Verdict.UNSIGNED
        if signed and not args.yes:
            raise UsageError(
                f"this signs {plural(unsigned, 'unsigned trajectory')} in {where} as they are now, vouching for "
                f"them, and re-signs {plural(len(signed) - unsigned, 'trajectory')} signed with an older key: "
                "add --yes to confirm"
            )
        done = store.replace_records(signed)
    out.line(f"Signed {plural(done, 'trajectory')} in {where}; {plural(left, 'trajectory')} left unchanged.")
    return 1 if left else 0


def _signed(signer: Signer, record: StoredRecord, data: dict[str, Any] | None) -> str | None:
    """The record's text signed with the first key, or None if it is not a trajectory filed where it is."""
    if data is None or data.get("id") != record.id or data.get("task_key") != record.task_key:
        return None
    try:
        from_record(data)
    except Exception:  # any failure to decode: the record is not signed
        return None
    return signer.stamp(record.task_key, data)


def _why(verdict: Verdict) -> str:
    if verdict in (Verdict.BAD, Verdict.UNREADABLE, Verdict.REMOVED):
        return str(verdict.value)
    return "it does not decode as a trajectory filed under its own id and task key"
