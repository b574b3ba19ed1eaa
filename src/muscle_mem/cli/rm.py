"""``muscle-mem rm ID...``: delete trajectories."""

from __future__ import annotations

import argparse

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.record._task_templates import with_template_runs

NAME = "rm"
HELP = "Delete trajectories by id (or unique id prefix), each with its template copy."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ids", nargs="+", metavar="ID", help="trajectory ids or unique prefixes (see `muscle-mem ls`)"
    )


def run(args: argparse.Namespace) -> int:
    with cache.opened(args) as store:
        ids = [cache.resolve_id(store, ref) for ref in args.ids]  # every id is checked before any is deleted
        removed = store.remove(with_template_runs(ids))
    Output().line(f"Removed {plural(removed, 'trajectory')}.")
    return 0
