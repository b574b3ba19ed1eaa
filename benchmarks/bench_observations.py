"""What comparing observations costs a hit whose tools return records (dicts of ids, names, amounts, lists).

A 5-step task (look a customer up, read a policy, open a ticket, refund, note) whose outputs are small
dicts, as most tools return, replayed in memory with equality pre-checks. Each round times batches of
hits on three engines side by side: observations compared (the default), observations ignored (the
checks alone decide: the floor of a hit here), and, with ``--baseline SRC``, the compared engine of
other code (the ``src`` of a ``git worktree`` at a release, say) in a subprocess between them. The
figures are the best batch per hit, and the ratios are taken within the run.

``--params``: the customer is a declared param (``params={"customer": ...}``, the agent reading it
from the task's text) instead of an argument of the task.

Run: python benchmarks/bench_observations.py [--rounds 7] [--baseline ../base/src] [--params]
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

from muscle_mem import Check, Engine

BATCH = 500
TASK = "refund the customer"


def call(engine: Engine, params: bool) -> Any:
    """One request for customer cus_41: an argument of the task, or a declared param."""
    if params:
        return engine(f"{TASK} cus_41", params={"customer": "cus_41"})
    return engine(TASK, "cus_41")


def build(observations: str, params: bool = False) -> Engine:
    """The refund desk's engine, its task recorded once and hit once."""
    state = {"version": 0}
    engine = Engine(observations=observations)  # type: ignore[arg-type]
    check = Check.equal(lambda *args: state["version"])

    @engine.tool(pre_check=check)
    def lookup(customer: str) -> dict[str, Any]:
        return {
            "id": customer,
            "name": "Ada Lovelace",
            "email": "ada@example.com",
            "plan": "Growth",
            "balance": 120.5,
            "status": "active",
            "tags": ["vip", "eu"],
        }

    @engine.tool(pre_check=check)
    def refund_policy(customer: str) -> dict[str, Any]:
        return {"Starter": 25, "Growth": 100, "Enterprise": 500}

    @engine.tool(pre_check=check)
    def open_ticket(customer: str) -> str:
        return "TCK-1001"

    @engine.tool(pre_check=check)
    def refund(customer: str, amount: float) -> dict[str, Any]:
        return {"refund_id": "rf_7731", "status": "issued", "amount": amount}

    @engine.tool(pre_check=check)
    def add_note(ticket: str, text: str) -> None:
        return None

    def agent(task: str, customer: str | None = None) -> str:
        customer = customer or task.split()[-1]
        found = lookup(customer)
        limits = refund_policy(customer)
        ticket = open_ticket(customer)
        done = refund(found["id"], min(10.0, limits[found["plan"]]))
        add_note(ticket, f"refunded {done['refund_id']}")
        return "refunded"

    engine.set_agent(agent)
    first = call(engine, params)
    hit = call(engine, params)
    if not (first.stored and hit.hit):
        raise SystemExit(f"the benchmark's task does not hit: {hit.reason or first.not_stored}")
    return engine


def best_batch(engine: Engine, batches: int, params: bool = False) -> float:
    """The fastest of ``batches`` batches, in µs per hit."""
    best = float("inf")
    for _ in range(batches):
        started = time.perf_counter()
        for _ in range(BATCH):
            call(engine, params)
        best = min(best, (time.perf_counter() - started) / BATCH * 1e6)
    return best


def baseline(src: str, batches: int, params: bool) -> float:
    """The compared engine of the code in ``src``, measured in a subprocess."""
    env = {**os.environ, "PYTHONPATH": src}
    ran = subprocess.run(
        [sys.executable, __file__, "--worker", str(batches), *(["--params"] if params else [])],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(ran.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds of batches, alternating the engines")
    parser.add_argument("--batches", type=int, default=5, help="batches per engine per round")
    parser.add_argument("--baseline", help="the src folder of other code, measured beside this one")
    parser.add_argument("--params", action="store_true", help="the customer as a declared param")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(best_batch(build("compared", args.params), args.worker, args.params)))
        return
    if args.baseline and not Path(args.baseline, "muscle_mem").is_dir():
        raise SystemExit(f"--baseline {args.baseline}: no muscle_mem package there")
    compared, ignored = build("compared", args.params), build("ignored", args.params)
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        figures = {
            "compared": best_batch(compared, args.batches, args.params),
            "ignored": best_batch(ignored, args.batches, args.params),
        }
        if args.baseline:
            figures["baseline"] = baseline(args.baseline, args.batches, args.params)
        for name, value in figures.items():
            best[name] = min(best.get(name, value), value)
    given = "the customer a declared param" if args.params else "the customer an argument of the task"
    print(
        f"a 5-step hit whose tools return records ({given}), best batch of {BATCH} hits, {args.rounds} rounds"
    )
    print(f"  observations compared  {best['compared']:7.1f} µs")
    print(f"  observations ignored   {best['ignored']:7.1f} µs   (the checks alone: the floor)")
    print(f"  compared / ignored     {best['compared'] / best['ignored']:7.2f}x")
    if "baseline" in best:
        print(f"  baseline, compared     {best['baseline']:7.1f} µs   ({args.baseline})")
        print(f"  this code / baseline   {best['compared'] / best['baseline']:7.2f}x")


if __name__ == "__main__":
    main()
