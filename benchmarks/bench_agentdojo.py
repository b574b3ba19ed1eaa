"""Replay safety on AgentDojo: does muscle-mem ever replay a task wrong on an external suite?

No LLM: an oracle agent runs each user task's ground-truth calls through muscle-mem-instrumented
tools (``agentdojo_harness.py`` documents the tools, checks and params). For each suite:

1. **record**: every task once, on its initial environment (the agent runs, the engine stores);
2. **unperturbed**: every task again on a fresh copy of the same environment: reuse = full hits / tasks;
3. **perturbed**: every task on a copy changed by each perturbation of ``agentdojo_perturb.py``, run
   through the engine and judged against the oracle alone on another copy of the same environment.
   A run is **safe** when the environment after it and its answer (the last call's output) equal the
   oracle's. A *needless miss* is a run that was not a full hit although the oracle's calls were the
   same as calls already recorded for the task.

Every unperturbed and perturbed run is judged; each unsafe one is listed with the first call that
differs from the oracle's and, for each wrong argument, where the oracle's value came from.

With ``--mode shadow`` the engine never replays: the oracle runs every time, and each run after the
recording is compared with what a replay would have done. The shadow table gives, per suite, the runs
a replay would have matched (agreed), done otherwise (disagreed: each would have been an unsafe
replay) and handed to the agent (missed); ``--mode proven`` replays a task once it agreed
``--proof`` times.

Run: python benchmarks/bench_agentdojo.py [--quick] [--suites workspace banking] [--no-params]
[--mode shadow]
(needs ``pip install 'muscle-mem[agentdojo]'``; without it the script says so and exits).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

QUICK_TASKS = 4
"""Tasks per suite with --quick (the first ones, by number)."""


@dataclass
class Tally:
    """Counts of one suite (or of all)."""

    tasks: int = 0
    stored: int = 0
    reuse: int = 0
    unperturbed_unsafe: int = 0
    runs: int = 0
    hits: int = 0
    partial: int = 0
    misses: int = 0
    unsafe: int = 0
    needless: int = 0
    skipped: int = 0
    agreed: int = 0
    disagreed: int = 0
    shadow_missed: int = 0
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Unsafe:
    """One run whose result differs from the oracle's."""

    suite: str
    task: str
    perturbation: str
    kind: str
    details: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = f"{self.suite} {self.task} [{self.perturbation}] {self.kind}"
        return "\n".join([head, *(f"    {d}" for d in self.details)])


def _task_number(task_id: str) -> int:
    return int(re.sub(r"\D", "", task_id) or 0)


def explain(made: Sequence[Any], expected: Sequence[Any], outputs: Sequence[Any], prompt: str) -> list[str]:
    """The first call that differs from the oracle's, and where each right argument came from."""
    from _lib.agentdojo_harness import plain

    for i, (got, want) in enumerate(zip(made, expected, strict=False)):
        if got == want:
            continue
        if got.function != want.function:
            return [f"call {i}: {got.function} made, the oracle calls {want.function}"]
        lines = [f"call {i} {want.function}:"]
        got_args = dict(got.args)
        for name, value in want.args:
            if got_args.get(name) != value:
                lines.append(
                    f"  {name}={got_args.get(name)!r}, the oracle passes {value!r} "
                    f"({_origin(value, outputs[:i], expected, prompt, plain)})"
                )
        return lines
    if len(made) != len(expected):
        return [f"{len(made)} calls made, the oracle makes {len(expected)}"]
    return ["same calls, different answer or environment"]


def _origin(value: Any, outputs: Sequence[Any], calls: Sequence[Any], prompt: str, plain: Any) -> str:
    """Where the oracle's value came from: an earlier output, the task text, or neither."""
    texts = [str(v) for v in value] if isinstance(value, tuple) else [str(value)]
    for j, output in reversed(list(enumerate(outputs))):
        seen = str(plain(output))
        if all(text in seen for text in texts):
            return f"in the output of call {j} {calls[j].function}"
    if all(text in prompt for text in texts):
        return "in the task text"
    return "chosen by the ground truth from the environment, not copied from one earlier output"


def run_suite(name: str, suite: Any, args: argparse.Namespace, unsafe: list[Unsafe]) -> Tally:
    """Record, replay unperturbed and replay perturbed every task of one suite."""
    from _lib.agentdojo_harness import EnvHolder, Oracle, params_for, plain, plan, register_tools, run_alone
    from _lib.agentdojo_perturb import PERTURBATIONS

    from muscle_mem import Engine

    started = time.perf_counter()
    tally = Tally()
    engine = Engine(mode=getattr(args, "mode", "replay"), proof=getattr(args, "proof", 3))
    holder = EnvHolder()
    oracle = Oracle(register_tools(engine, suite, holder, checks=args.checks))
    engine.set_agent(oracle)

    tasks = sorted(suite.user_tasks.items(), key=lambda item: _task_number(item[0]))
    if args.quick:
        tasks = tasks[:QUICK_TASKS]
    base = suite.load_and_inject_default_environment({})
    initial = {tid: task.init_environment(base.model_copy(deep=True)) for tid, task in tasks}
    recorded: dict[str, set[tuple[Any, ...]]] = {tid: set() for tid, _ in tasks}
    params = {
        tid: ({} if args.no_params else params_for(t.PROMPT, plan(t, initial[tid]))) for tid, t in tasks
    }

    def judged(result: Any) -> None:
        """Count a run's shadow verdict (none in replay mode, nor for a run that replayed)."""
        verdict = result.shadow.verdict.value if result.shadow is not None else None
        tally.agreed += verdict == "agreed"
        tally.disagreed += verdict == "disagreed"
        tally.shadow_missed += verdict == "missed"

    def run(tid: str, task: Any, env: Any, label: str) -> Any:
        """One engine run on ``env``, judged against the oracle alone on a copy of it."""
        calls = plan(task, env)
        expected_env = env.model_copy(deep=True)
        outputs = run_alone(suite, calls, expected_env)
        holder.env, holder.log, oracle.calls = env, [], calls
        result = engine(task.PROMPT, params=params[tid])
        if not result.hit:
            recorded[tid].add(tuple(calls))
        answer = outputs[-1] if outputs else None
        same_env = plain(env) == plain(expected_env)
        if not same_env or plain(result.output) != plain(answer):
            kind = "full hit" if result.hit else f"partial ({result.steps_replayed} steps replayed)"
            what = "environment" if not same_env else "answer"
            details = [f"{what} differs; {kind}", *explain(holder.log, calls, outputs, task.PROMPT)]
            unsafe.append(Unsafe(name, tid, label, what, details))
            return result, True
        return result, False

    for tid, task in tasks:
        result, _ = run(tid, task, initial[tid].model_copy(deep=True), "record")
        tally.tasks += 1
        tally.stored += bool(result.stored)
    for tid, task in tasks:
        result, wrong = run(tid, task, initial[tid].model_copy(deep=True), "unperturbed")
        judged(result)
        tally.reuse += bool(result.hit)
        tally.unperturbed_unsafe += wrong
    for label, perturb in PERTURBATIONS[name].items():
        for tid, task in tasks:
            env = initial[tid].model_copy(deep=True)
            perturb(env)
            try:
                calls = tuple(plan(task, env))
            except Exception:
                tally.skipped += 1  # the ground truth itself does not apply to this environment
                continue
            needless = calls in recorded[tid]
            result, wrong = run(tid, task, env, label)
            judged(result)
            tally.runs += 1
            tally.unsafe += wrong
            if result.hit:
                tally.hits += 1
            else:
                tally.partial += result.steps_replayed > 0
                tally.misses += result.steps_replayed == 0
                tally.needless += needless
    tally.seconds = time.perf_counter() - started
    return tally


HEADER = (
    "| suite | tasks | stored | reuse (unperturbed) | perturbed runs | hits | partial | misses | unsafe "
    "| needless misses | s |"
)


def row(name: str, t: Tally) -> str:
    reuse = f"{t.reuse}/{t.tasks}" + (f" ({t.unperturbed_unsafe} unsafe)" if t.unperturbed_unsafe else "")
    return (
        f"| {name} | {t.tasks} | {t.stored} | {reuse} | {t.runs} | {t.hits} | {t.partial} | {t.misses} "
        f"| **{t.unsafe}** | {t.needless} | {t.seconds:.0f} |"
    )


SHADOW_HEADER = "| suite | shadow runs | agreed | disagreed | a replay would have missed |"


def shadow_row(name: str, t: Tally) -> str:
    runs = t.agreed + t.disagreed + t.shadow_missed
    share = f" ({t.agreed / runs:.0%})" if runs else ""
    return f"| {name} | {runs} | {t.agreed}{share} | **{t.disagreed}** | {t.shadow_missed} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_TASKS} tasks of each suite")
    parser.add_argument("--suites", nargs="*", help="suite names (default: all)")
    parser.add_argument("--version", default=None, help="AgentDojo benchmark version (default v1.2.2)")
    parser.add_argument("--no-params", action="store_true", help="run every task without params")
    parser.add_argument(
        "--checks",
        choices=("all", "reads", "none"),
        default="all",
        help="which tools get their pre-check: all (default), reads only, or none (a control)",
    )
    parser.add_argument(
        "--mode",
        choices=("replay", "shadow", "proven"),
        default="replay",
        help="the engine's mode: replay (default); shadow: the oracle runs every time and each run is "
        "compared with what a replay would have done; proven: a task replays after --proof agreements",
    )
    parser.add_argument("--proof", type=int, default=3, help="agreements before --mode proven replays (3)")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("agentdojo") is None:
        print("agentdojo is not installed: pip install 'muscle-mem[agentdojo]'; nothing measured")
        return 0
    logging.disable(logging.WARNING)  # the suites' own warnings; muscle-mem logs misses at INFO
    from _lib.agentdojo_harness import BENCHMARK_VERSION, freeze_clock, load_suites

    freeze_clock()
    version, suites = load_suites(args.version or BENCHMARK_VERSION)
    print(
        f"AgentDojo {_package_version()}, benchmark version {version}, pre-checks on {args.checks} tools, "
        f"mode {args.mode}"
    )
    names = args.suites or list(suites)
    unsafe: list[Unsafe] = []
    total = Tally()
    lines = [HEADER, "| --- " * 11 + "|"]
    tallies = []
    for name in names:
        tally = run_suite(name, suites[name], args, unsafe)
        tallies.append(tally)
        total.add(tally)
        lines.append(row(name, tally))
        print(lines[-1], flush=True)
    lines.append(row("total", total))
    print()
    print("\n".join(lines))
    if args.mode != "replay":
        shadows = [SHADOW_HEADER, "| --- " * 5 + "|"]
        shadows += [shadow_row(name, tally) for name, tally in zip(names, tallies, strict=True)]
        print(
            "\nShadow runs after the recording (unperturbed and perturbed), against what a replay would have done:"
        )
        print("\n".join([*shadows, shadow_row("total", total)]))
    if total.skipped:
        print(f"\n{total.skipped} perturbed runs skipped: the task's ground truth raised on that environment")
    print(f"\n{len(unsafe)} unsafe runs" + (":" if unsafe else ""))
    for case in unsafe:
        print(case)
    return 0


def _package_version() -> str:
    from importlib.metadata import version

    return version("agentdojo")


if __name__ == "__main__":
    raise SystemExit(main())
