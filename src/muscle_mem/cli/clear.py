"""``muscle-mem clear --yes``: delete every trajectory."""

from __future__ import annotations

import argparse

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural

NAME = "clear"
HELP = "Delete every stored trajectory (asks for --yes). The engine's event log is kept."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="really delete them")


def run(args: argparse.Namespace) -> int:
    where = cache.display_url(store_url(args))
    with cache.opened(args) as store:
        n = len(store)
        if not args.yes:
            raise UsageError(f"this deletes all {plural(n, 'trajectory')} in {where}: add --yes to confirm")
        store.clear()
    Output().line(f"Deleted {plural(n, 'trajectory')} from {where}.")
    return 0
