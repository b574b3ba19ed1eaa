"""``muscle-mem demo``: a support agent works through a stream of requests, with muscle memory.

The agent's "LLM" is scripted (no network) but takes a model's time and tokens. Every request on
which the engine replayed steps is done again by the agent alone, on a copy of the desk made just
before the request; the two desks and answers must be equal. The exit status is 1 if any differ.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from muscle_mem import MissReason, Verdict
from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.cli.family import generality
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural, speedup
from muscle_mem.demo.runner import DemoRunner, Outcome, Tally
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.modes import MODES
from muscle_mem.stores.base import Browsable, CoreStore

SHOW_UNSAFE = 5

NAME = "demo"
HELP = "Run a support agent on a stream of requests with muscle memory, and verify every replay."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", type=_positive(int), default=60, metavar="N", help="requests to run (60)")
    parser.add_argument(
        "--text-only",
        type=int,
        default=30,
        metavar="N",
        help="then N more requests as plain text, no params declared, for templates to serve (30)",
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the desk and of the request stream (7)")
    parser.add_argument(
        "--speed",
        type=_positive(float),
        default=1.0,
        metavar="F",
        help="divide the LLM's latency by F (1: a hosted model's 0.2-0.8 s per call)",
    )
    parser.add_argument("--fresh", action="store_true", help="empty the store first")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(".muscle-mem/demo"),
        help="where the desk lives (.muscle-mem/demo)",
    )
    parser.add_argument(
        "--no-checks",
        action="store_true",
        help="register the tools without their Checks, on a throwaway in-memory store: replays rest on what "
        "the tools return alone",
    )
    parser.add_argument(
        "--ignore-observations",
        action="store_true",
        help="replay as far as the Checks allow, not comparing what the tools return (with --no-checks: shows "
        "what that comparison prevents)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="replay",
        help="replay (default); shadow: the agent handles every request and each run is compared with what a "
        "replay would have done; proven: a family replays after 3 shadow agreements; frozen: replay, write nothing",
    )
    parser.add_argument("--plain", action="store_true", help="plain text output, even if rich is installed")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per request")


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def run(args: argparse.Namespace) -> int:
    out = Output(fancy=False if args.plain else None)
    throwaway = args.no_checks or args.ignore_observations
    if throwaway and args.store:
        raise UsageError(
            "--no-checks and --ignore-observations always use a throwaway in-memory store; drop --store"
        )
    store = "memory://" if throwaway else store_url(args)
    if args.fresh and args.mode == "frozen":
        raise UsageError("--fresh empties the store, which --mode frozen never writes: drop one of them")
    if args.workdir.exists() and not args.workdir.is_dir():
        raise UsageError(f"--workdir {args.workdir} is not a directory")
    runner = DemoRunner(
        args.workdir,
        store,
        seed=args.seed,
        speed=args.speed,
        fresh=args.fresh,
        checks=not args.no_checks,
        observations=not args.ignore_observations,
        mode=args.mode,
    )
    with runner:
        cached = len(runner.engine.store)
        without = [
            w for w, off in (("Checks", args.no_checks), ("observations", args.ignore_observations)) if off
        ]
        checks = f"WITHOUT {' or '.join(without)}, " if without else ""
        checks += f"mode {args.mode}, " if args.mode != "replay" else ""
        out.line(
            f"Support desk demo: {plural(args.tasks, 'request')}, {checks}store {store} "
            f"({plural(cached, 'trajectory')} cached)"
        )
        with out.progress("requests", args.tasks) as bar:

            def on_task(outcome: Outcome) -> None:
                if args.verbose:
                    out.line(_describe(outcome))
                bar.advance(_running(runner.tally, runner.verifying))

            runner.stream(args.tasks, on_task)
        if args.text_only > 0:
            with out.progress("plain-text requests", args.text_only) as bar:
                runner.stream(
                    args.text_only, lambda o: on_task(o) if args.verbose else bar.advance(), plain=True
                )
        with out.progress("verifying replays", runner.pending) as bar:
            tally = runner.finish(lambda _: bar.advance())
        _summary(out, tally, store, runner.engine.store)
    return 1 if tally.unsafe or tally.plain_unsafe else 0


def _running(tally: Tally, verifying: int) -> str:
    return (
        f"hits {tally.count('hit')}  partial {tally.count('partial')}  misses {tally.count('miss')}"
        f"  verifying {verifying}"
    )


def _describe(o: Outcome) -> str:
    line = f"{o.index + 1:4} {o.kind:7} {o.result.steps_replayed:2} replayed  {o.task.text}"
    if o.task.event:
        line += f"\n     changed: {o.task.event}"
    if o.result.reason and o.kind != "hit":
        line += f"\n     engine: {o.result.reason}"
    return line


def _tokens(n: int) -> str:
    return f"{n / 1000:,.1f}k" if n >= 1000 else str(n)


def _summary(out: Output, t: Tally, store: str, cache: CoreStore) -> None:
    n, verified = len(t.outcomes), len(t.verified)
    hits, partial, misses = t.count("hit"), t.count("partial"), t.count("miss")
    new = t.misses_by(MissReason.NO_TRAJECTORY)
    shadowed = t.misses_by(MissReason.SHADOW)
    shadow_runs = f"{plural(shadowed, 'shadow run')}, " if shadowed else ""
    out.line()
    out.table(
        f"Summary of {plural(n, 'task')}",
        ["", "tasks", "share", "<"],
        [
            ["full hits", str(hits), _share(hits, n), "replayed to the end, no LLM call"],
            [
                "partial replays",
                str(partial),
                _share(partial, n),
                "replay stopped mid-way, the agent resumed",
            ],
            [
                "fallbacks",
                str(misses),
                _share(misses, n),
                f"{plural(new, 'new task')}, {shadow_runs}{misses - new - shadowed} failed the first check",
            ],
            [
                "unsafe replays",
                str(len(t.unsafe)),
                "",
                f"of {plural(verified, 'replay')}, each checked vs the agent alone",
            ],
        ],
    )
    out.line(
        f"The engine replayed {plural(t.steps_replayed, 'tool call')} that the LLM would otherwise have chosen."
    )
    out.line()
    spent, avoided = t.llm_spent, t.llm_avoided
    out.table(
        "Agent cost",
        ["", "spent", "avoided"],
        [
            ["LLM calls", str(spent.calls), str(avoided.calls)],
            ["tokens (prompt + completion)", _tokens(spent.tokens), _tokens(avoided.tokens)],
            ["agent time", _seconds(t.agent_seconds), _seconds(t.agent_seconds_avoided)],
        ],
    )
    out.line(
        f"Avoided is measured: the agent alone on copies of the desk for the {plural(verified, 'replayed task')}, "
        f"minus what those tasks still spent. The engine counted the {_tokens(t.spent_tokens_counted)} tokens "
        f"spent as the agent reported them; its own estimate of what was saved, from the recorded runs: "
        f"{_seconds(t.saved_seconds_estimate)} and {_tokens(t.saved_tokens_estimate)} tokens "
        "(`muscle-mem stats` adds up the store's events)."
    )
    out.line()
    with_cache, without = t.seconds_with_cache, t.seconds_without_cache
    out.table(
        "Wall time of the tasks",
        ["", "seconds"],
        [["with the cache", f"{with_cache:.1f}"], ["without the cache", f"{without:.1f}"]],
    )
    ratio = speedup(without, with_cache)
    note = f" ({ratio})" if ratio else ""
    out.line(
        f"Both measured{note}: with = each engine call; without = the agent alone on copies for the "
        f"{plural(verified, 'replayed task')}, plus the agent's own runs for the other {n - verified}."
    )
    _shadows(out, t)
    reasons = t.reasons()
    if reasons:
        out.line()
        out.table(
            "Why the cache was not, or not fully, used",
            ["reason<", "tasks"],
            [[reason, str(count)] for reason, count in reasons.most_common()],
        )
    _families(out, t, cache)
    if t.plain:
        out.line()
        out.line(_templates_line(t))
    for o in (t.unsafe + t.plain_unsafe)[:SHOW_UNSAFE]:
        out.line()
        out.line(f"UNSAFE replay on task {o.index + 1}: {o.task.text}", style="bold red")
        for difference in o.differences:
            out.line(f"  {difference}")
    if len(t.unsafe) > SHOW_UNSAFE:
        out.line(f"... and {plural(len(t.unsafe) - SHOW_UNSAFE, 'more unsafe replay')}", style="bold red")
    out.line()
    out.line(
        f"Finished in {t.wall_seconds:.1f} s, verification included. The cache stays in {store}: "
        "run the demo again to start from it, or add --fresh to start empty."
    )


def _shadows(out: Output, t: Tally) -> None:
    """The shadow runs' agreement figures: how often a replay would have done what the agent did."""
    verdicts = t.shadows()
    runs = sum(verdicts.values())
    if not runs:
        return
    agreed, disagreed = verdicts[Verdict.AGREED], verdicts[Verdict.DISAGREED]
    out.line()
    out.line(
        f"Shadow: {plural(runs, 'agent run')} compared with what a replay would have done: {agreed} agreed "
        f"({_share(agreed, runs)}), {disagreed} disagreed, {verdicts[Verdict.MISSED]} a replay would have "
        "handed to the agent."
    )
    first = t.first_disagreement()
    if first is not None and first.result.shadow is not None:
        s = first.result.shadow
        out.line(
            f"  First disagreement, task {first.index + 1} step {s.step}: a replay would have made "
            f"{s.expected}, the agent {s.actual}."
        )


def _families(out: Output, t: Tally, store: CoreStore) -> None:
    """How each kind of request earned its generality: its runs, the ways they went, the leaves they freed."""
    if not isinstance(store, Browsable):
        return
    by_kind: dict[str, dict[str, list[Trajectory]]] = defaultdict(lambda: defaultdict(list))
    for summary in store.summaries():
        trajectory = store.get(summary.id) if summary.tags else None
        if trajectory is not None:
            by_kind[summary.tags[0]][trajectory.task_key].append(trajectory)
    rows, stops = [], []
    for kind, families in sorted(by_kind.items()):
        ways = free = 0
        for runs in families.values():
            went, freed = generality(runs)
            ways, free = ways + went, free + freed
        outcomes = [o for o in t.outcomes if o.task.kind == kind]
        stop = next(
            (
                o
                for o in outcomes
                if o.result.miss_reason is MissReason.OBSERVATION_CHANGED and o.result.reason
            ),
            None,
        )
        if stop is not None:
            stops.append(f"  {kind}, request {stop.index + 1}: {stop.result.reason}")
        rows.append(
            [
                kind,
                str(len(families)),
                str(sum(len(r) for r in families.values())),
                str(ways),
                str(free),
                str(sum(o.result.hit for o in outcomes)),
            ]
        )
    if not rows:
        return
    out.line()
    out.table(
        "How the families earned their generality",
        ["request kind<", "families", "runs", "ways", "free leaves", "full hits"],
        rows,
    )
    out.line(
        "A family is one task key; its runs are the agent's own, and each way they went is one a replay can "
        "take. A leaf is free where runs that went the same way saw it vary (ids, names); any other leaf "
        "must hold a value a run saw, or the replay stops after that step. `muscle-mem show ID --family` "
        "prints a family's evidence."
    )
    if stops:
        out.line("The first stop on a changed observation, per kind of request:")
        for line in stops:
            out.line(line)


def _templates_line(t: Tally) -> str:
    """What templates learned from the agent's runs did for the requests asked as plain text."""
    n = len(t.plain)
    hits = [o for o in t.plain if o.kind == "hit"]
    served = [o.result.template for o in hits if o.result.template is not None]
    templates = list(dict.fromkeys(served))
    such = f" (such as {templates[0]!r})" if templates else ""
    return (
        f"Templates: {plural(n, 'more request')} asked as plain text, no params declared: "
        f"{plural(len(hits), 'full hit')}, {len(served)} of them by {plural(len(templates), 'template')} "
        f"learned from the agent's own runs{such}; {len(t.plain_unsafe)} unsafe. A template serves new "
        "values once two runs of the agent proved it."
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else ""


def _seconds(value: float) -> str:
    return f"{value:.1f} s"
