"""``muscle-mem rm ID...``: delete trajectories."""

from __future__ import annotations

import argparse

from muscle_mem.cli import cache
from muscle_mem.cli.output import Output

NAME = "rm"
HELP = "Delete trajectories by id (or unique id prefix)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ids", nargs="+", metavar="ID", help="trajectory ids or unique prefixes (see `muscle-mem ls`)"
    )


def run(args: argparse.Namespace) -> int:
    with cache.opened(args) as store:
        ids = [cache.resolve_id(store, ref) for ref in args.ids]  # every id is checked before any is deleted
        removed = store.remove(ids)
    Output().line(f"Removed {removed} {'trajectory' if removed == 1 else 'trajectories'}.")
    return 0
