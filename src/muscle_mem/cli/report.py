"""``muscle-mem report``: one self-contained HTML page with the cache's figures and charts.

The page loads nothing (its Content-Security-Policy forbids it): styles and inline SVG charts only,
no script, so it opens the same from a file, an e-mail attachment or a CI artifact. Every stored text
on it is escaped and redacted of secret-looking texts, and only rows whose figures are numbers count.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from html import escape
from pathlib import Path

from muscle_mem.cache.ledger import Ledger, Spent, ledger, savings, spent_by
from muscle_mem.cache.shadow_report import FamilyShadow, ShadowReport, shadow_report
from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import analysis, svg, untrusted
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.cli.prices import add_price_argument
from muscle_mem.cli.untrusted import shown
from muscle_mem.model._spend import Prices
from muscle_mem.stores import Store
from muscle_mem.stores.base import Event, Summary

NAME = "report"
HELP = (
    "Write an HTML report: hit rate, agent time, tokens and money spent and saved over time, task families, "
    "misses by reason and tool."
)
DEFAULT_OUT = "muscle-mem-report.html"
TOP = 10
GREEN, BLUE, ORANGE, RED, GREY = "#16a34a", "#2563eb", "#ea580c", "#dc2626", "#6b7280"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="FILE", help=f"where to write ({DEFAULT_OUT})")
    parser.add_argument(
        "--since",
        type=cache.since_arg,
        metavar="AGE",
        help="only engine calls in the last AGE (30m, 24h, 7d)",
    )
    add_price_argument(parser)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory")
    where = cache.display_url(store_url(args))
    with cache.opened(args) as store:
        page = render(store, where, since=args.since or 0.0, prices=dict(args.price))
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    Output().line(f"Wrote {out} ({cache.size(len(page.encode()))}).")
    return 0


def render(
    store: Store, where: str, *, since: float = 0.0, now: float | None = None, prices: Prices | None = None
) -> str:
    """The report page for ``store`` (``where`` names it on the page); money at ``prices``."""
    now = time.time() if now is None else now
    every = untrusted.events(
        store.events()
    )  # a hit's savings are the median of its family's runs: all of them
    saved = [
        save
        for event, (save, _) in zip(every, savings(every, prices or {}), strict=True)
        if event.at >= since
    ]
    events = [e for e in every if e.at >= since]
    spent = [Spent() if e.hit else spent_by(e, prices or {})[0] for e in events]
    book = ledger(every, prices or {}, since)
    summaries = untrusted.summaries(store.summaries())
    t = analysis.totals(events)
    body = [
        "<header><h1>muscle-mem cache report</h1>",
        f"<p>Store <code>{escape(where)}</code>, generated {escape(cache.zoned_timestamp(now))}. {_period(t)}</p></header>",
        _cards(store, summaries, t, book),
    ]
    if not events:
        body.append(
            '<p class="note">No engine calls are recorded in this store yet: run your agent through an '
            "<code>Engine</code> using it, or <code>muscle-mem demo</code>, then write the report again.</p>"
        )
    body += _charts(events, t, spent, saved, book.priced)
    body.append(_families_table(book))
    body.append(_shadow_table(shadow_report(events)))
    body.append(_top_table(summaries))
    body.append(
        "<footer>Events are written by the engine (one per call) and the newest 100,000 are kept. "
        "Saved figures are estimates: a hit saves the LLM tokens, requests and money of the median of its "
        "family's runs that the agent made from the start, and the agent time the replayed trajectory cost "
        "when it was recorded, less the time the replay took. Money is at the prices given to the report "
        "(<code>--price MODEL=IN,OUT</code>).</footer>"
    )
    return _PAGE.format(style=_STYLE, body="\n".join(body))


def _period(t: analysis.Totals) -> str:
    if t.first is None or t.last is None:
        return ""
    return f"Engine calls from {escape(cache.zoned_timestamp(t.first))} to {escape(cache.zoned_timestamp(t.last))}."


def _cards(store: Store, summaries: Sequence[Summary], t: analysis.Totals, book: Ledger) -> str:
    spent, saved = book.total.spent, book.total.saved
    money = [("money saved", _money(saved.money), f"{_money(spent.money)} spent")] if book.priced else []
    cards = [
        ("hit rate", cache.share(t.hits, t.calls), f"{plural(t.hits, 'hit')} of {plural(t.calls, 'call')}"),
        ("agent time saved", cache.seconds(t.saved_seconds), f"{cache.seconds(t.agent_seconds)} spent"),
        ("LLM tokens saved", cache.count(saved.tokens), f"{cache.count(spent.tokens)} spent"),
        *money,
        ("misses", f"{t.misses:,}", f"{plural(t.partial, 'partial replay')}"),
        ("trajectories", f"{len(summaries):,}", f"{cache.size(store.nbytes())} stored"),
    ]
    items = "".join(
        f'<div class="card"><div class="label">{escape(name)}</div><div class="value">{escape(value)}</div>'
        f'<div class="sub">{escape(sub)}</div></div>'
        for name, value, sub in cards
    )
    return f'<section class="cards">{items}</section>'


def _money(amount: float) -> str:
    return f"{amount:,.2f}" if amount >= 1 or amount == 0 else f"{amount:.4g}"


def _charts(
    events: Sequence[Event], t: analysis.Totals, spent: Sequence[Spent], saved: Sequence[Spent], priced: bool
) -> list[str]:
    """The charts: hit rate, agent time, tokens and (when priced) money over time, misses by reason and tool."""
    span = (t.last or 0.0) - (t.first or 0.0)
    when = _time_format(span)
    percent: svg.Format = lambda v: f"{v:.0%}"  # noqa: E731
    buckets = analysis.buckets(events, max(1, min(40, len(events) // 8)))
    hit_rate = svg.line_chart(
        [
            svg.Series(
                "hit rate in each interval",
                [(b.start + (b.end - b.start) / 2, b.hit_rate) for b in buckets],
                BLUE,
                dots=True,
            ),
            svg.Series("hit rate so far", analysis.running_hit_rate(events), GREY, dashed=True, steps=True),
        ],
        label="Hit rate over time",
        x_format=when,
        y_format=percent,
        y_range=(0.0, 1.0),
    )
    unit, per = _time_unit(max(t.saved_seconds, t.agent_seconds))
    seconds = svg.line_chart(
        [
            svg.Series(
                "agent time saved",
                analysis.cumulative(events, [e.saved_seconds / per for e in events]),
                GREEN,
                steps=True,
            ),
            svg.Series(
                "agent time spent",
                analysis.cumulative(events, [e.agent_seconds / per for e in events]),
                ORANGE,
                steps=True,
            ),
        ],
        label="Agent time saved and spent, cumulative",
        x_format=when,
        y_format=lambda v: f"{v:g} {unit}",
    )
    tokens = svg.line_chart(
        [
            svg.Series(
                "tokens saved",
                analysis.cumulative(events, [float(s.tokens) for s in saved]),
                GREEN,
                steps=True,
            ),
            svg.Series(
                "tokens spent",
                analysis.cumulative(events, [float(e.tokens_spent) for e in events]),
                ORANGE,
                steps=True,
            ),
        ],
        label="LLM tokens saved and spent, cumulative",
        x_format=when,
        y_format=cache.count,
    )
    money = svg.line_chart(
        [
            svg.Series(
                "money saved", analysis.cumulative(events, [s.money for s in saved]), GREEN, steps=True
            ),
            svg.Series(
                "money spent", analysis.cumulative(events, [s.money for s in spent]), ORANGE, steps=True
            ),
        ],
        label="Money saved and spent, cumulative",
        x_format=when,
        y_format=_money,
    )
    whole: svg.Format = lambda v: f"{v:,.0f}"  # noqa: E731
    reasons = [(shown(r), n) for r, n in analysis.miss_reasons(events).most_common(TOP)]
    tools = [(shown(r), n) for r, n in analysis.miss_tools(events).most_common(TOP)]
    untold = t.misses - sum(analysis.miss_tools(events).values())
    return [
        _section(
            "Hit rate over time",
            hit_rate,
            f"Calls grouped into {plural(len(buckets), 'interval')} of equal length.",
        ),
        _section("Agent time saved", seconds, "Running totals over the period."),
        _section("LLM tokens saved", tokens, "Running totals; tokens as the agent reports them."),
        *(
            [_section("Money saved", money, "Running totals, at the prices given to the report.")]
            if priced
            else []
        ),
        _section(
            "Misses by reason",
            svg.bar_chart(
                [(r, float(n)) for r, n in reasons], label="Misses by reason", color=RED, value_format=whole
            ),
            "Each miss counts under the kind of its first cause.",
        ),
        _section(
            "Misses by tool",
            svg.bar_chart(
                [(r, float(n)) for r, n in tools], label="Misses by tool", color=ORANGE, value_format=whole
            ),
            f"The tool whose check failed or that raised; {plural(untold, 'miss')} had none to blame (new tasks).",
        ),
    ]


def _section(title: str, chart: str, note: str) -> str:
    return (
        f'<section class="chart"><h2>{escape(title)}</h2>{chart}<p class="note">{escape(note)}</p></section>'
    )


def _time_unit(most: float) -> tuple[str, float]:
    """The unit a time axis reaching ``most`` seconds is labelled in, and its size in seconds."""
    return ("s", 1.0) if most < 180 else ("min", 60.0) if most < 3 * 3600 else ("h", 3600.0)


def _time_format(span: float) -> svg.Format:
    """Tick labels for a time axis covering ``span`` seconds (tenths of seconds on short spans)."""
    if span < 60:
        return lambda x: time.strftime("%H:%M:%S", time.localtime(x)) + f".{int(x * 10) % 10}"
    pattern = (
        "%H:%M:%S"
        if span < 600
        else "%H:%M"
        if span < 86400
        else "%m-%d %H:%M"
        if span < 7 * 86400
        else "%Y-%m-%d"
    )
    return lambda x: time.strftime(pattern, time.localtime(x))


def _families_table(book: Ledger) -> str:
    """The task families that saved the most, with what they spent and how often they missed."""
    top = book.top_savings(TOP) or list(book.families[:TOP])
    if not top:
        return ""
    money = book.priced
    rows = "".join(
        "<tr>"
        f"<td>{escape(cache.clip(shown(f.task), 80))}</td><td class=n>{f.hits:,}</td>"
        f"<td class=n>{f.partial_replays:,}</td><td class=n>{f.misses:,}</td>"
        f"<td class=n>{escape(cache.count(f.saved.tokens))}</td><td class=n>{escape(cache.count(f.spent.tokens))}</td>"
        + (
            f"<td class=n>{escape(_money(f.saved.money))}</td><td class=n>{escape(_money(f.spent.money))}</td>"
            if money
            else ""
        )
        + "</tr>"
        for f in top
    )
    heads = "<th class=n>money saved</th><th class=n>money spent</th>" if money else ""
    return (
        "<section><h2>Task families by savings</h2><table><thead><tr><th>task</th><th class=n>hits</th>"
        "<th class=n>partial</th><th class=n>misses</th><th class=n>tokens saved</th><th class=n>tokens spent</th>"
        f"{heads}</tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _shadow_table(report: ShadowReport) -> str:
    """How shadow runs compared with what a replay would have done, by task family (empty with none)."""
    total = report.total
    if not total.runs:
        return ""
    rows = "".join(
        "<tr>"
        f"<td>{escape(cache.clip(shown(f.task), 80))}</td><td class=n>{f.runs:,}</td>"
        f"<td class=n>{f.agreements:,}</td><td class=n>{f.disagreements:,}</td><td class=n>{f.streak:,}</td>"
        f"<td class=n>{escape(cache.count(f.tokens_saved))}</td>"
        f"<td>{escape(_parting(f))}</td>"
        "</tr>"
        for f in report.families[:TOP]
    )
    return (
        f"<section><h2>Shadow runs: {total.agreements:,} of {total.runs:,} agreed with a replay</h2>"
        "<table><thead><tr><th>task</th><th class=n>runs</th><th class=n>agreed</th>"
        "<th class=n>disagreed</th><th class=n>agreed since last disagreement</th>"
        "<th class=n>tokens a replay saves</th><th>first disagreement</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _parting(family: FamilyShadow) -> str:
    """Where a replay would first have parted from the agent, as text (empty if it never did)."""
    parting = family.first_disagreement
    if parting is None:
        return ""
    text = f"step {parting.step}: {shown(parting.expected)} / agent: {shown(parting.actual)}"
    return cache.clip(text, 100)


def _top_table(summaries: Sequence[Summary]) -> str:
    top = sorted(summaries, key=lambda s: (s.usage.hits, s.usage.saved_seconds), reverse=True)[:TOP]
    if not top:
        return '<section><h2>Most used trajectories</h2><p class="note">The store holds no trajectories.</p></section>'
    rows = "".join(
        "<tr>"
        f"<td><code>{escape(shown(cache.short_id(s.id)))}</code></td><td>{escape(cache.clip(shown(s.task), 80))}</td>"
        f"<td>{escape(shown(', '.join(s.tags)))}</td><td class=n>{s.steps:,}</td><td class=n>{s.usage.hits:,}</td>"
        f"<td class=n>{escape(cache.seconds(s.usage.saved_seconds))}</td>"
        f"<td>{escape(cache.zoned_timestamp(s.usage.last_used) if s.usage.hits else 'never')}</td>"
        "</tr>"
        for s in top
    )
    return (
        "<section><h2>Most used trajectories</h2><table><thead><tr><th>id</th><th>task</th><th>tags</th>"
        "<th class=n>steps</th><th class=n>hits</th><th class=n>saved</th><th>last use</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


_STYLE = """
body{margin:0 auto;max-width:820px;padding:24px;font:14px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;
color:#111827;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 8px}
header p,.note,footer{color:#6b7280}.note{font-size:12px;margin:4px 0 0}
section{margin:20px 0}.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{flex:1 1 100px;border:1px solid #e5e7eb;border-radius:8px;padding:10px 12px}
.card .label{color:#6b7280;font-size:12px}.card .value{font-size:22px;font-weight:600}
.card .sub{color:#6b7280;font-size:12px}
.chart{border:1px solid #e5e7eb;border-radius:8px;padding:12px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;
border-bottom:1px solid #e5e7eb}.n{text-align:right}code{font-size:12px}
footer{margin-top:24px;font-size:12px}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>muscle-mem cache report</title>
<style>{style}</style>
</head>
<body>
{body}
</body>
</html>
"""
