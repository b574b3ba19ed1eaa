"""``muscle-mem stats``: what the cache holds, and what it has done (from the engine's events)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from muscle_mem.cli import analysis, cache, untrusted
from muscle_mem.cli.common import store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.cli.untrusted import shown
from muscle_mem.stores import Store

NAME = "stats"
HELP = "Counts, size, hit rate, agent time and tokens saved, why calls missed and runs were not stored."
TOP = 8


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        type=cache.since_arg,
        metavar="AGE",
        help="only engine calls in the last AGE (30m, 24h, 7d)",
    )
    parser.add_argument("--json", action="store_true", help="the figures as a JSON object")


def run(args: argparse.Namespace) -> int:
    with cache.opened(args) as store:
        figures = gather(store, args.since or 0.0)
    if args.json:
        json.dump(figures, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    _print(Output(), figures, cache.display_url(store_url(args)))
    return 0


def gather(store: Store, since: float) -> dict[str, Any]:
    """Every figure ``stats`` shows, JSON-compatible."""
    summaries = untrusted.summaries(store.summaries())
    events = untrusted.events(store.events(since))
    t = analysis.totals(events)
    not_stored = analysis.not_stored_reasons(events)
    return {
        "cache": {
            "trajectories": len(summaries),
            "tasks": len(store.tasks()),
            "steps": sum(s.steps for s in summaries),
            "bytes": store.nbytes(),
            "hits": sum(s.usage.hits for s in summaries),
            "saved_seconds": sum(s.usage.saved_seconds for s in summaries),
        },
        "calls": {
            "since": since or None,
            "first": t.first,
            "last": t.last,
            "calls": t.calls,
            "hits": t.hits,
            "misses": t.misses,
            "partial_replays": t.partial,
            "hit_rate": t.hit_rate,
            "steps_replayed": t.steps_replayed,
            "saved_seconds": t.saved_seconds,
            "agent_seconds": t.agent_seconds,
            "tokens_saved": t.tokens_saved,
            "tokens_spent": t.tokens_spent,
            "stored": sum(1 for e in events if not e.hit and e.trajectory_id),
            "not_stored": sum(not_stored.values()),
        },
        "miss_reasons": [(shown(r), n) for r, n in analysis.miss_reasons(events).most_common(TOP)],
        "miss_tools": [(shown(t), n) for t, n in analysis.miss_tools(events).most_common(TOP)],
        "not_stored_reasons": [(shown(r), n) for r, n in not_stored.most_common()],
    }


def _print(out: Output, f: dict[str, Any], where: str) -> None:
    c, e = f["cache"], f["calls"]
    _pairs(
        out,
        f"Cache {where}",
        [
            [
                "trajectories",
                f"{c['trajectories']:,} for {plural(c['tasks'], 'task')}, {plural(c['steps'], 'step')} in all",
            ],
            ["size", cache.size(c["bytes"])],
            ["hits", f"{c['hits']:,} (kept with the trajectories still stored)"],
            ["agent time saved", cache.seconds(c["saved_seconds"])],
        ],
    )
    out.line()
    if not e["calls"]:
        out.line("No engine calls recorded" + (" in that period." if e["since"] else " yet."))
        return
    calls = e["calls"]
    _pairs(
        out,
        f"Engine calls from {cache.timestamp(e['first'])} to {cache.timestamp(e['last'])}",
        [
            ["calls", f"{calls:,}"],
            ["hits", f"{e['hits']:,} ({cache.share(e['hits'], calls)} hit rate)"],
            ["misses", f"{e['misses']:,}, of which {plural(e['partial_replays'], 'partial replay')}"],
            ["agent runs", f"{e['stored']:,} stored, {e['not_stored']:,} not stored"],
            ["steps replayed", f"{e['steps_replayed']:,}"],
            [
                "agent time",
                f"{cache.seconds(e['agent_seconds'])} spent, {cache.seconds(e['saved_seconds'])} saved",
            ],
            ["LLM tokens", f"{cache.count(e['tokens_spent'])} spent, {cache.count(e['tokens_saved'])} saved"],
        ],
    )
    for title, what, counted, rows in (
        ("Top miss reasons", "reason", "misses", f["miss_reasons"]),
        ("Misses by tool", "tool", "misses", f["miss_tools"]),
        ("Why runs were not stored", "reason", "runs", f["not_stored_reasons"]),
    ):
        if rows:
            out.line()
            out.table(title, [what, counted], [[name, f"{n:,}"] for name, n in rows])


def _pairs(out: Output, title: str, rows: list[list[str]]) -> None:
    out.line(title, style="bold")
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        out.line(f"  {name.ljust(width)}  {value}")
