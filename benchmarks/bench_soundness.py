"""Replay soundness on the red-team suite: how often does a replay do what the agent alone would not?

Each scenario of ``tests/soundness`` (branches, loops, computed values, choices, params, relations,
the agent's context, identities, the task-w1-1 case, the MCP-proxy-like refund, harmless noise) builds
its cache from recording runs, then probes it with changed worlds. Every run goes through the engine
and through the agent alone on a ``copy.deepcopy`` of the same world: a run is **unsafe** when the
final worlds or the answers differ. A **needless miss** is a probe a replay would have got right (a
timestamp, request id or etag in a read, key order, an unrelated field, float noise, an identity, the
same task again) that was not a full hit although the agent alone made a recorded run's calls.

Both check modes run: *narrow* (a write's pre-check captures the state its own decision depends on,
a read's that the entity exists) and *none*. Beside each figure, in brackets, the same run with
``Engine(observations="ignored")`` (today's behaviour: no observation comparison), when the engine
takes that option. Hidden-state scenarios (the difference lives in state no tool output shows) are
left out of the class rows and counted on their own line; scenarios marked as a tradeoff (a harmless
probe no sound engine can tell from a harmful one) are counted and named.

With ``--proven 1 3``, every scenario runs again through ``Engine(mode="proven", proof=N)`` for each
N: the recording runs and probes are shadow runs until a family is proven, and the table shows what
was replayed, whether any family was replayed before ``proof`` agreements since a disagreement in
shadow (never), and the unsafe runs.

Run: python benchmarks/bench_soundness.py [--quick] [--only NAME ...] [--list] [--proven N ...]
"""

from __future__ import annotations

import argparse
import inspect
import logging
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


from muscle_mem import Engine
from soundness import ATTACKS_ALL, BY_NAME, LIMITS, SCENARIOS
from soundness.harness import CHECK_MODES, CheckMode, Report, Scenario, run_scenario
from soundness.proven import HEADER as PROVEN_HEADER
from soundness.proven import Proven

BASELINE_OPTIONS: dict[str, Any] = {"observations": "ignored"}
QUICK_PER_CLASS = 2


@dataclass
class Figures:
    """The tally of one class in one configuration."""

    scenarios: int = 0
    unsafe: int = 0
    unsafe_runs: int = 0
    needless: int = 0
    harmless: int = 0
    hits: int = 0
    partial: int = 0
    misses: int = 0
    failing: list[str] = field(default_factory=list)

    def add(self, report: Report) -> None:
        self.scenarios += 1
        self.unsafe_runs += len(report.unsafe)
        if report.unsafe:
            self.unsafe += 1
            self.failing.append(report.scenario.name)
        self.needless += len(report.needless)
        self.harmless += sum(1 for o in report.probes if o.harmless)
        self.hits += report.count("hit")
        self.partial += report.count("partial")
        self.misses += report.count("miss")


Config = tuple[CheckMode, str]
"""(check mode, "now" or "today")."""


def baseline_available() -> bool:
    """Whether this engine takes the option that gives today's behaviour."""
    return "observations" in inspect.signature(Engine.__init__).parameters


def quick(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The first few scenarios of each class."""
    taken: dict[str, int] = {}
    chosen = []
    for s in scenarios:
        if taken.get(s.cls, 0) < QUICK_PER_CLASS:
            taken[s.cls] = taken.get(s.cls, 0) + 1
            chosen.append(s)
    return chosen


def run_all(scenarios: Sequence[Scenario], baseline: bool, tmp_dir: Path) -> dict[Config, list[Report]]:
    """Every scenario in both check modes, with the engine's defaults and (if given) today's behaviour."""
    configs: list[tuple[Config, Mapping[str, Any]]] = []
    for checks in CHECK_MODES:
        configs.append(((checks, "now"), {}))
        if baseline:
            configs.append(((checks, "today"), BASELINE_OPTIONS))
    reports: dict[Config, list[Report]] = {config: [] for config, _ in configs}
    for scenario in scenarios:
        for config, options in configs:
            reports[config].append(run_scenario(scenario, config[0], options, tmp_dir))
    return reports


def tally(reports: Sequence[Report]) -> tuple[dict[str, Figures], Figures, Figures]:
    """Figures per class (hidden-state scenarios left out), their total, and the hidden-state line."""
    by_class: dict[str, Figures] = {}
    total, hidden = Figures(), Figures()
    for report in reports:
        if report.scenario.hidden_state is not None:
            hidden.add(report)
            continue
        by_class.setdefault(report.scenario.cls, Figures()).add(report)
        total.add(report)
    return by_class, total, hidden


def _cell(now: int, today: int | None) -> str:
    return f"{now}" if today is None else f"{now} ({today})"


def _hpm(f: Figures) -> str:
    return f"{f.hits}/{f.partial}/{f.misses}"


def table(reports: Mapping[Config, list[Report]]) -> str:
    """The table: per class, per check mode, unsafe, needless misses and hits/partial/misses."""
    has_today = any(kind == "today" for _, kind in reports)
    header = ["class", "scenarios"]
    for checks in CHECK_MODES:
        header += [f"unsafe, {checks}", f"needless, {checks}", f"hit/part/miss, {checks}"]
    rows = [header, ["---"] + ["---:"] * (len(header) - 1)]
    now = {checks: tally(reports[(checks, "now")]) for checks in CHECK_MODES}
    today = {checks: tally(reports[(checks, "today")]) for checks in CHECK_MODES} if has_today else {}
    classes = list(now[CHECK_MODES[0]][0])

    def line(label: str, pick: Any) -> list[str]:
        first: Figures = pick(now[CHECK_MODES[0]])
        cells = [label, str(first.scenarios)]
        for checks in CHECK_MODES:
            f: Figures = pick(now[checks])
            t: Figures | None = pick(today[checks]) if has_today else None
            cells += [
                _cell(f.unsafe, t.unsafe if t else None),
                _cell(f.needless, t.needless if t else None),
                _hpm(f) + (f" ({_hpm(t)})" if t else ""),
            ]
        return cells

    for cls in classes:
        rows.append(line(cls, lambda tallied, cls=cls: tallied[0][cls]))
    rows.append(line("**total**", lambda tallied: tallied[1]))
    if now[CHECK_MODES[0]][2].scenarios:
        rows.append(line("hidden state", lambda tallied: tallied[2]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join(
        "| "
        + " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        + " |"
        for r in rows
    )


def attacks(reports: Mapping[Config, list[Report]]) -> str:
    """The independent attacker's scenarios: unsafe and needless per configuration, and the known limits."""
    judged = [r for r in reports[(CHECK_MODES[0], "now")] if r.scenario.name not in LIMITS]
    lines = [f"an independent attacker's scenarios: {len(judged)} judged, {len(LIMITS)} known limits"]
    for (checks, kind), batch in reports.items():
        counted = [r for r in batch if r.scenario.name not in LIMITS]
        unsafe = sum(1 for r in counted if r.unsafe)
        needless = sum(len(r.needless) for r in counted)
        still = sum(1 for r in batch if r.scenario.name in LIMITS and r.unsafe)
        lines.append(
            f"  {kind:5} {checks:6} checks: {unsafe} unsafe of {len(counted)}, {needless} needless misses;"
            f" known limits still unsafe: {still} of {len(LIMITS)}"
        )
    lines.append("known limits (why no engine that generalises as the runs showed passes them):")
    lines += [f"  {name}: {why}" for name, why in LIMITS.items()]
    return "\n".join(lines)


def failing(reports: Mapping[Config, list[Report]]) -> list[str]:
    """A paragraph per configuration naming its unsafe scenarios and its needless misses."""
    lines = []
    for (checks, kind), batch in reports.items():
        _, total, hidden = tally(batch)
        needless = sorted({r.scenario.name for r in batch if r.needless})
        text = (
            f"{kind}, {checks} checks: {total.unsafe} unsafe scenarios ({total.unsafe_runs} runs)"
            f" of {total.scenarios}: {', '.join(total.failing) or '-'}; needless misses in: {', '.join(needless) or '-'}"
            + (f"; hidden state unsafe: {', '.join(hidden.failing) or '-'}" if hidden.scenarios else "")
        )
        lines.append(textwrap.fill(text, width=110, subsequent_indent="  ", break_on_hyphens=False))
    return lines


def proven_table(scenarios: Sequence[Scenario], proofs: Sequence[int], tmp_dir: Path) -> str:
    """Every scenario in both check modes through ``Engine(mode="proven", proof=N)``: what it replayed.

    With observations compared (the default) and ignored: a replay that ignores them is where a
    shadow run disagrees, and proven mode then keeps the family in shadow.
    """
    lines = [PROVEN_HEADER, "| --- " * 10 + "|"]
    notes = []
    for proof in proofs:
        for checks in CHECK_MODES:
            for observations in ("compared", "ignored"):
                options = {"mode": "proven", "proof": proof, "observations": observations}
                tallied = Proven()
                for scenario in scenarios:
                    report = run_scenario(scenario, checks, options, tmp_dir)
                    tallied.add(scenario.name, report.events, proof, len(report.unsafe))
                label = f"proof={proof}, {checks} checks, observations {observations}"
                lines.append(tallied.row(label))
                if tallied.disagreed_in:
                    notes.append(f"{label}: disagreed in shadow in {', '.join(tallied.disagreed_in)}")
    return "\n".join(lines + [""] + [textwrap.fill(n, width=110, subsequent_indent="  ") for n in notes])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help=f"the first {QUICK_PER_CLASS} scenarios of each class"
    )
    parser.add_argument("--only", nargs="*", help="scenario names")
    parser.add_argument("--list", action="store_true", help="name every scenario and what it probes")
    parser.add_argument("--verbose", action="store_true", help="print every unsafe run")
    parser.add_argument(
        "--proven",
        nargs="*",
        type=int,
        default=[],
        metavar="N",
        help="also run every scenario with Engine(mode='proven', proof=N) for each N, and show what it replayed",
    )
    args = parser.parse_args(argv)

    scenarios = list(SCENARIOS)
    if args.only:
        unknown = [name for name in args.only if name not in BY_NAME]
        if unknown:
            parser.error(f"no scenario named {', '.join(unknown)} (--list names them)")
        scenarios = [s for s in scenarios if s.name in set(args.only)]
    if args.quick:
        scenarios = quick(scenarios)
    if args.list:
        for s in scenarios:
            note = f" [hidden state: {s.hidden_state}]" if s.hidden_state else ""
            print(f"{s.cls:11} {s.front:13} {s.name}: {s.doc}{note}")
        return 0

    baseline = baseline_available()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        reports = run_all(scenarios, baseline, Path(tmp))
    print(f"{len(scenarios)} scenarios, check modes {', '.join(CHECK_MODES)}")
    print(
        "baseline (in brackets): Engine(observations='ignored'), in the same run"
        if baseline
        else "baseline: n/a (this Engine takes no observations= option)"
    )
    print()
    print(table(reports))
    print()
    print("\n\n".join(failing(reports)))
    hidden = [sc for sc in scenarios if sc.hidden_state]
    if hidden:
        print("\nhidden-state scenarios (left out of the rows above):")
        for sc in hidden:
            print(f"  {sc.name}: {sc.hidden_state}")
    tradeoffs = [sc for sc in scenarios if sc.tradeoff]
    if tradeoffs:
        print(
            "\nharmless probes a sound engine must miss (counted in the rows above, not failed by the tests):"
        )
        for sc in tradeoffs:
            print(f"  {sc.name}: {sc.tradeoff}")
    if not args.only and not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            print("\n" + attacks(run_all(ATTACKS_ALL, baseline, Path(tmp))))
    if args.proven:
        with tempfile.TemporaryDirectory() as tmp:
            print("\n" + proven_table(scenarios, args.proven, Path(tmp)))
    if args.verbose:
        for (checks, kind), batch in reports.items():
            for report in batch:
                for o in report.unsafe:
                    print(f"[{kind}, {checks}] {o.describe()}")
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    logging.getLogger("muscle_mem").setLevel(logging.ERROR)  # each stop is logged at INFO: thousands
    sys.exit(main())
