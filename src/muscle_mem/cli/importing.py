"""``muscle-mem import FILE``: add the trajectories of an ``export`` file to the store."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import records
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural

NAME = "import"
HELP = "Add the trajectories of a JSON Lines file written by `export` (ids already stored are skipped)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the file to read (- for stdin)")


def run(args: argparse.Namespace) -> int:
    source = "stdin" if args.file == "-" else args.file
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read {source}: {why}") from None
    entries = list(records.parse(text.split("\n"), source))  # every line is checked before any is added
    with cache.opened(args, create=True) as store:
        added = store.add_many(entries)  # one transaction: all or nothing
    present = len(entries) - added
    note = f" ({present} already stored)" if present else ""
    Output().line(f"Imported {plural(added, 'trajectory')} into {cache.display_url(store_url(args))}{note}.")
    return 0
