"""``muscle-mem ls``: the stored trajectories, most recently used first.

Stored texts are printed escaped (control characters) and redacted (secret-looking texts).
"""

from __future__ import annotations

import argparse
import json
import sys

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import untrusted
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.cli.untrusted import shown
from muscle_mem.record._task_templates import stored_proofs
from muscle_mem.secrecy.patterns import scrub
from muscle_mem.stores import Store
from muscle_mem.stores.base import Summary

NAME = "ls"
HELP = "List the stored trajectories: task, tags, steps, hits, last use, agent time saved."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tag", action="append", default=[], help="only trajectories with this tag (repeatable)"
    )
    parser.add_argument("--limit", type=int, metavar="N", help="at most N trajectories")
    parser.add_argument("--json", action="store_true", help="a JSON array, with full ids and exact figures")


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be 0 or more, got {args.limit}")
    with cache.opened(args) as store:
        rows = [s for s in untrusted.summaries(store.summaries()) if all(t in s.tags for t in args.tag)]
        templates = [] if args.json else _template_rows(store)
    if args.limit is not None:
        rows = rows[: args.limit]
    if args.json:
        json.dump([_record(s) for s in rows], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    out = Output()
    where = cache.display_url(store_url(args))
    if not rows:
        out.line(f"No trajectories in {where}" + (" with those tags." if args.tag else "."))
        return 0
    out.table(
        f"{plural(len(rows), 'trajectory')} in {where}",
        ["id", "task<", "tags<", "steps", "hits", "last use", "saved"],
        [
            [
                shown(cache.short_id(s.id)),
                cache.clip(shown(s.task), 60),
                shown(", ".join(s.tags)),
                str(s.steps),
                str(s.usage.hits),
                cache.ago(s.usage.last_used) if s.usage.hits else "never",
                cache.seconds(s.usage.saved_seconds),
            ]
            for s in rows
        ],
    )
    if templates:
        out.table(
            f"{plural(len(templates), 'template')} learned from the agent's runs",
            ["template<", "slots<", "runs", "proved by<"],
            templates,
        )
    return 0


def _template_rows(store: Store) -> list[list[str]]:
    """One row per template: its text, what each slot takes, its runs, and the runs that proved it."""
    rows = []
    for _, proof in stored_proofs(store):
        proven = [f for f in proof.families if f.proven]
        family = proven[0] if proven else proof.families[0]
        slots = ", ".join(f"{{{n}}} {r}" for n, r in enumerate(family.ranges(proof.numeric), 1))
        runs = sum(len(f.runs) for f in proof.families)
        by = "; ".join("/".join(map(str, run)) for run in family.runs[:4]) if proven else "not yet proven"
        rows.append(
            [cache.clip(shown(scrub(proof.text)), 50), shown(scrub(slots)), str(runs), shown(scrub(by))]
        )
    return rows


def _record(s: Summary) -> dict[str, object]:
    return {
        "id": s.id,
        "task": scrub(s.task),
        "tags": [scrub(t) for t in s.tags],
        "steps": s.steps,
        "created_at": s.created_at,
        "hits": s.usage.hits,
        "last_used": s.usage.last_used,
        "saved_seconds": s.usage.saved_seconds,
        "priority": s.usage.priority,
        "attention": s.usage.attention,
    }
