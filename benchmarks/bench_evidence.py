"""What judging a replay on evidence costs: one check of what it saw against many recorded runs.

Where an output matches no single recorded run, a replay weighs every run that made the same calls
(up to 64) and checks that together they cover what it saw: the values as a whole, each number's
range, and every relation between the numbers that differ from the runs (their orders, and each
combination of two against a third). The cost grows with the runs and with the numbers that differ.
Each case here is a family of recorded runs of one read whose output holds ``moving`` numbers that
differ from run to run beside 40 steady ones, and a replay whose numbers lie inside what the runs
saw, so every rule is judged to the end (the verdict: covered). The figure is the best of
``--repeats`` checks, in ms; with ``--baseline SRC`` the same cases run on the code in ``SRC`` in a
subprocess, side by side, with the ratio. A last column weighs the same check where the next call
holds constants (a count and a date) the runs may have computed from the numbers that differ, so
each computation of them is made too, with its ratio to the check without.

Run: python benchmarks/bench_evidence.py [--repeats 5] [--quick] [--baseline ../base/src]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from muscle_mem.model._evidence import uncovered
from muscle_mem.model._observations import Observer, kept_leaves
from muscle_mem.model._run_observations import observe_run
from muscle_mem.model.provenance import Const

CASES = ((4, 12), (8, 22), (64, 22))
"""(recorded runs, numbers that differ) per case."""
QUICK = ((4, 12), (8, 12))
STEADY = 40


def output(shift: int, moving: int) -> dict[str, Any]:
    """A read's output: ``moving`` numbers that move together with ``shift``, and steady ones."""
    return {
        "lines": [{"kind": "part", "amount": (i + 1) * 1000 + shift} for i in range(moving)],
        "limits": [{"cap": 17 + i} for i in range(STEADY)],
    }


def check_ms(runs: int, moving: int, repeats: int, constants: bool = False) -> float:
    """The best of ``repeats`` checks of a replay (shift 3) against ``runs`` runs (shifts 0, 2, 4, ...).

    ``constants``: the next call holds a count and a date, as constants.
    """
    held: tuple[Any, ...] = ()
    if constants:  # imported here: a baseline from before constants were weighed runs without it
        from muscle_mem.model._evidence_computed import constants_of

        held = constants_of([Const(7), Const("due by 2026-03-31")])
    histories = []
    for run in range(runs):
        _, observed = observe_run({}, [output(2 * run, moving)], [], Const(None), [], [])
        histories.append((None, *observed))
    live = [(), kept_leaves(Observer({}).flatten(0, output(3, moving)), frozenset())]
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        verdict = (
            uncovered(live, histories, ["the params", "step 0 read"], held)
            if held
            else uncovered(live, histories, ["the params", "step 0 read"])
        )
        best = min(best, (time.perf_counter() - started) * 1e3)
        assert verdict is None, verdict
    return best


def measure(cases: tuple[tuple[int, int], ...], repeats: int) -> list[float]:
    return [check_ms(runs, moving, repeats) for runs, moving in cases]


def baseline(src: str, cases: tuple[tuple[int, int], ...], repeats: int) -> list[float]:
    """The same cases on the code in ``src``, in a subprocess."""
    ran = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(cases), "--repeats", str(repeats)],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        text=True,
        check=True,
    )
    return [float(ms) for ms in json.loads(ran.stdout.strip().splitlines()[-1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="checks per case (the best is kept)")
    parser.add_argument("--quick", action="store_true", help="small cases only")
    parser.add_argument("--baseline", help="the src folder of other code, measured beside this one")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(tuple(tuple(c) for c in json.loads(args.worker)), args.repeats)))
        return
    if args.baseline and not Path(args.baseline, "muscle_mem").is_dir():
        raise SystemExit(f"--baseline {args.baseline}: no muscle_mem package there")
    cases = QUICK if args.quick else CASES
    ours = measure(cases, args.repeats)
    held = [check_ms(runs, moving, args.repeats, constants=True) for runs, moving in cases]
    theirs = baseline(args.baseline, cases, args.repeats) if args.baseline else None
    print(f"one check of a replay on evidence (covered), ms, best of {args.repeats}; {STEADY} steady numbers")
    for index, ((runs, moving), ms) in enumerate(zip(cases, ours, strict=True)):
        line = f"  {runs:3} runs, {moving:2} numbers that differ: this code {ms:8.2f} ms"
        if theirs is not None:
            line += f" | baseline {theirs[index]:8.2f} ms | this code / baseline {ms / theirs[index]:5.2f}x"
        line += f" | constants in the next call {held[index]:8.2f} ms ({held[index] / ms:4.2f}x)"
        print(line)


if __name__ == "__main__":
    main()
