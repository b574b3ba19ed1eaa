"""``muscle-mem export``: the store as JSON Lines, or one trajectory as a Python function.

``muscle-mem export [FILE]`` writes every trajectory; ``--python ID`` writes one as a function. A
trajectory holding a secret-looking text is left out (exporting it redacted would replay other values),
and use statistics that are not numbers are left out of their line.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import records, script, untrusted
from muscle_mem.cli.common import UsageError
from muscle_mem.cli.phrases import plural
from muscle_mem.model.codec import CodecError
from muscle_mem.secrecy.declared import looks_secret
from muscle_mem.stores import Store

logger = logging.getLogger(__name__)

NAME = "export"
HELP = (
    "Write every trajectory with its use statistics as JSON Lines (for `import`), or with --python ID "
    "one trajectory as a Python function to review."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", default="-", metavar="FILE", help="where to write (default: stdout)"
    )
    parser.add_argument("--python", metavar="ID", help="write this trajectory as a Python function instead")


def run(args: argparse.Namespace) -> int:
    target = Path(args.file)
    if args.file != "-" and target.is_dir():
        raise UsageError(f"{target} is a directory")
    with cache.opened(args) as store:
        if args.python is not None:
            trajectory = cache.load(store, args.python)
            text = script.render(trajectory, untrusted.figures_of(store.usage(trajectory.id)))
            with _writing(args.file) as stream:
                stream.write(text)
            if args.file != "-":
                print(f"Exported trajectory {trajectory.id} as Python to {args.file}.", file=sys.stderr)
            return 0
        with _writing(args.file) as stream:
            written, skipped, withheld = _export(store, stream)
    if args.file != "-":
        print(f"Exported {plural(written, 'trajectory')} to {args.file}.", file=sys.stderr)
    if skipped:
        print(
            f"Skipped {plural(skipped, 'trajectory')} that cannot be decoded or written (see the warnings).",
            file=sys.stderr,
        )
    if withheld:
        print(
            f"Left out {plural(withheld, 'trajectory')} holding what looks like a secret (see the warnings): "
            "record the task again with the secret declared, then remove them with `muscle-mem rm`.",
            file=sys.stderr,
        )
    return 0


def _export(store: Store, stream: TextIO) -> tuple[int, int, int]:
    """Write every trajectory, oldest first (so an export of an import is the same file).

    Returns how many were written, skipped (undecodable) and left out (holding a secret-looking text).
    """
    summaries = sorted(untrusted.summaries(store.summaries()), key=lambda s: (s.created_at, s.id))
    written = skipped = withheld = 0
    for summary in summaries:
        secret = line = None
        try:
            trajectory = store.get(summary.id)
            secret = None if trajectory is None else looks_secret(trajectory)
            if trajectory is not None and secret is None:
                line = records.line(trajectory, untrusted.figures_of(store.usage(summary.id)))
        except (ValueError, TypeError, RecursionError, CodecError) as exc:  # a row's data, not the store
            logger.warning("skipping trajectory %s: it cannot be exported (%s)", summary.id, exc)
        if secret is not None:
            logger.warning("leaving out trajectory %s: it holds what looks like %s", summary.id, secret)
            withheld += 1
            continue
        if line is None:
            skipped += 1
            continue
        stream.write(line + "\n")
        written += 1
    return written, skipped, withheld


@contextmanager
def _writing(name: str) -> Iterator[TextIO]:
    """stdout for ``-``; else a file, replaced only once it is complete."""
    if name == "-":
        yield sys.stdout
        return
    path = Path(name)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8") as stream:
            yield stream
        os.replace(partial, path)
    except OSError as exc:
        raise UsageError(f"cannot write {name}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
