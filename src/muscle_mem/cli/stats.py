"""``muscle-mem stats``: what the cache holds, and what it has done (from the engine's events)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from muscle_mem.cache.ledger import Family, ledger
from muscle_mem.cache.shadow_report import FamilyShadow, shadow_report
from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import analysis, untrusted
from muscle_mem.cli.common import store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.cli.prices import add_price_argument
from muscle_mem.cli.untrusted import shown
from muscle_mem.model._spend import Prices
from muscle_mem.stores import Store

NAME = "stats"
HELP = (
    "Counts, size, hit rate, agent time, tokens and money spent and saved (by task family), "
    "why calls missed and runs were not stored, and how shadow runs compared with a replay."
)
TOP = 8


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--since",
        type=cache.since_arg,
        metavar="AGE",
        help="only engine calls in the last AGE (30m, 24h, 7d)",
    )
    add_price_argument(parser)
    parser.add_argument("--json", action="store_true", help="the figures as a JSON object")


def run(args: argparse.Namespace) -> int:
    with cache.opened(args) as store:
        figures = gather(store, args.since or 0.0, dict(args.price))
    if args.json:
        json.dump(figures, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    _print(Output(), figures, cache.display_url(store_url(args)))
    return 0


def gather(store: Store, since: float, prices: Prices | None = None) -> dict[str, Any]:
    """Every figure ``stats`` shows, JSON-compatible; money at ``prices`` (per million tokens in and out)."""
    summaries = untrusted.summaries(store.summaries())
    every = untrusted.events(
        store.events()
    )  # a hit's savings are the median of its family's runs: all of them
    events = [e for e in every if e.at >= since]
    t = analysis.totals(events)
    book = ledger(every, prices or {}, since)
    not_stored = analysis.not_stored_reasons(events)
    shadow = shadow_report(events)
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
            "tokens_saved": book.total.saved.tokens,
            "tokens_spent": book.total.spent.tokens,
            "stored": sum(1 for e in events if not e.hit and e.trajectory_id),
            "not_stored": sum(not_stored.values()),
        },
        "ledger": {
            "priced": book.priced,
            "spent": dataclasses.asdict(book.total.spent),
            "saved": dataclasses.asdict(book.total.saved),
            "unpriced": list(book.total.unpriced),
            "top_savings": [_family(f) for f in book.top_savings(TOP)],
            "top_misses": [_family(f) for f in book.top_misses(TOP)],
        },
        "miss_reasons": [(shown(r), n) for r, n in analysis.miss_reasons(events).most_common(TOP)],
        "miss_tools": [(shown(t), n) for t, n in analysis.miss_tools(events).most_common(TOP)],
        "not_stored_reasons": [(shown(r), n) for r, n in not_stored.most_common()],
        "shadow": {
            "total": _shadow_family(shadow.total),
            "families": [_shadow_family(f) for f in shadow.families[:TOP]],
        },
    }


def _shadow_family(family: FamilyShadow) -> dict[str, Any]:
    """A family's shadow figures, its texts escaped."""
    figures = family.as_dict()
    parting = family.first_disagreement
    return figures | {
        "family": shown(family.family),
        "task": shown(family.task),
        "first_disagreement": None
        if parting is None
        else {
            "step": parting.step,
            "expected": shown(parting.expected),
            "actual": shown(parting.actual),
            "at": parting.at,
        },
    }


def _family(family: Family) -> dict[str, Any]:
    """A family's row of the ledger, its texts escaped."""
    figures = family.as_dict()
    return figures | {
        "family": shown(family.family),
        "task": shown(family.task),
        "misses_by_reason": {shown(r): n for r, n in family.misses_by_reason.items()},
        "unpriced": [shown(m) for m in family.unpriced],
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
            ["LLM tokens", _tokens(f["ledger"]["spent"]) + ", " + _tokens(f["ledger"]["saved"], "saved")],
            [
                "model requests",
                f"{f['ledger']['spent']['requests']:,} made, {f['ledger']['saved']['requests']:,} saved",
            ],
            *_money(f["ledger"]),
        ],
    )
    _families(out, f["ledger"])
    for title, what, counted, rows in (
        ("Top miss reasons", "reason", "misses", f["miss_reasons"]),
        ("Misses by tool", "tool", "misses", f["miss_tools"]),
        ("Why runs were not stored", "reason", "runs", f["not_stored_reasons"]),
    ):
        if rows:
            out.line()
            out.table(title, [what, counted], [[name, f"{n:,}"] for name, n in rows])
    _shadows(out, f["shadow"])


def _shadows(out: Output, shadow: dict[str, Any]) -> None:
    """How the shadow runs compared with what a replay would have done, by task family."""
    total = shadow["total"]
    if not total["runs"]:
        return
    out.line()
    rows = [
        [
            cache.clip(f["task"], 40),
            f"{f['runs']:,}",
            f"{f['agreements']:,}",
            f"{f['disagreements']:,}",
            f"{f['streak']:,}",
            cache.count(f["tokens_saved"]),
        ]
        for f in shadow["families"]
    ]
    out.table(
        f"Shadow runs: {total['agreements']:,} of {total['runs']:,} agreed with what a replay would have done "
        "(agreed since the last disagreement; tokens a replay would have saved)",
        ["task family<", "runs", "agreed", "disagreed", "agreed since", "tokens saved"],
        rows,
    )
    parted = [f for f in shadow["families"] if f["first_disagreement"] is not None]
    if parted:
        out.line("First disagreements (a replay's call, then the agent's):")
    for f in parted:
        p = f["first_disagreement"]
        out.line(f"  {cache.clip(f['task'], 48)}, step {p['step']}: {p['expected']} / agent: {p['actual']}")


def _tokens(spent: dict[str, Any], verb: str = "spent") -> str:
    """Tokens spent or saved, with their split in and out when the agent reported one."""
    split = spent["input_tokens"] + spent["output_tokens"]
    detail = (
        f" ({cache.count(spent['input_tokens'])} in, {cache.count(spent['output_tokens'])} out)"
        if split
        else ""
    )
    return f"{cache.count(spent['tokens'])} {verb}{detail}"


def _money(book: dict[str, Any]) -> list[list[str]]:
    """The money row: spent and saved at the prices given, and the models without one."""
    if not book["priced"]:
        return []
    row = f"{_dollars(book['spent']['money'])} spent, {_dollars(book['saved']['money'])} saved"
    if book["unpriced"]:
        row += f" (no price for {', '.join(book['unpriced'])})"
    return [["money", row]]


def _dollars(amount: float) -> str:
    return f"{amount:,.2f}" if amount >= 1 or amount == 0 else f"{amount:.4g}"


def _families(out: Output, book: dict[str, Any]) -> None:
    """The task families that saved the most, and those that missed the most."""
    priced = book["priced"]
    if book["top_savings"]:
        out.line()
        headers = ["task family<", "hits", "tokens saved", *(["money saved"] if priced else []), "time saved"]
        rows = [
            [
                cache.clip(f["task"], 48),
                f"{f['hits']:,}",
                cache.count(f["saved"]["tokens"]),
                *([_dollars(f["saved"]["money"])] if priced else []),
                cache.seconds(f["saved"]["seconds"]),
            ]
            for f in book["top_savings"]
        ]
        out.table("Top task families by savings", headers, rows)
    if book["top_misses"]:
        out.line()
        rows = [
            [
                cache.clip(f["task"], 48),
                f"{f['misses']:,}",
                next(iter(f["misses_by_reason"]), ""),
                cache.count(f["spent"]["tokens"]),
            ]
            for f in book["top_misses"]
        ]
        out.table(
            "Top task families by misses", ["task family<", "misses", "first reason<", "tokens spent"], rows
        )


def _pairs(out: Output, title: str, rows: list[list[str]]) -> None:
    out.line(title, style="bold")
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        out.line(f"  {name.ljust(width)}  {value}")
