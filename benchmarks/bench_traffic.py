"""Traffic with no params declared: templates learned from the agent's runs, beside declared params.

Thirteen task families (:mod:`traffic_families`: a support desk and tasks after AgentDojo's banking,
workspace, travel and slack suites) are each asked ``--asks`` times (50 by default) with fresh values,
in a shuffled order, as plain text. Each configuration runs the same traffic on a fresh world:

* **front end**: the core engine with a plain-Python agent, and pydantic-ai (``FunctionModel`` driven
  by the same scripted policy) through ``muscle_mem.integrations.pydantic_ai.MuscleMem``;
* **what is declared**: nothing (``no params``; this code with ``Engine(templates=True)``), or each
  task's values as params (``params``);
* **code**: this code, and with ``--baseline SRC`` the code before templates (the ``src`` of a
  ``git worktree`` at the 0.3.0 line), each in its own process.

Every ask is judged against the agent alone on a deep copy of its world: a call whose world or answer
differs from the agent's is **unsafe**. Counted: full hits, partial replays, misses, unsafe, and the
tokens the hits saved. Then the cost of finding a template for a text, at 10, 1,000 and 100,000
templates in the store.

Run: python benchmarks/bench_traffic.py [--asks 50] [--baseline ../base/src] [--sizes 10 1000 100000]
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import gc
import inspect
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
TURN_TOKENS = 600
"""The tokens the scripted model reports per model turn (a prompt and tool outputs in, a call out)."""
FRONTS = ("core", "pydantic-ai")
MODES = ("no params", "params")


@dataclass
class Tally:
    """What one configuration's traffic did."""

    asks: int = 0
    hits: int = 0
    partial: int = 0
    misses: int = 0
    unsafe: int = 0
    template_hits: int = 0
    tokens_spent: int = 0
    tokens_saved: int = 0
    seconds: float = 0.0
    first_unsafe: str = ""

    def add(self, hit: bool, replayed: int, template: bool, saved: int, safe: bool, text: str) -> None:
        self.asks += 1
        self.hits += hit
        self.partial += not hit and replayed > 0
        self.misses += not hit and replayed == 0
        self.template_hits += hit and template
        self.tokens_saved += saved if hit else 0
        if not safe:
            self.unsafe += 1
            self.first_unsafe = self.first_unsafe or text


def traffic(asks: int, seed: int, only: Sequence[str] = ()) -> list[tuple[Any, dict[str, Any], str]]:
    """The asks in order: ``(family, values, text)``, each family ``asks`` times with fresh values."""
    from _lib.traffic_families import families, make_world

    rng = random.Random(seed)
    world = make_world()
    chosen = [f for f in families() if not only or f.name in only]
    out = []
    for family in chosen:
        seen: set[str] = set()
        while sum(1 for f, _, _ in out if f is family) < asks:
            values = family.values(rng, world)
            text = family.text(values)
            if text not in seen:  # fresh values: no text twice
                seen.add(text)
                out.append((family, values, text))
    rng.shuffle(out)
    return out


def alone(policy: Callable[[str, list[Any]], Any], text: str, world: dict[str, Any]) -> tuple[Any, Any]:
    """The agent alone on a deep copy of ``world``: its answer, and the world it leaves."""
    from _lib.traffic_families import tool_functions

    copied = copy.deepcopy(world)
    tools = tool_functions(lambda: copied)
    seen: list[Any] = []
    while True:
        action = policy(text, seen)
        if isinstance(action, str):
            return action, copied
        name, kwargs = action
        seen.append(tools[name](**kwargs))


def run_core(asks: int, seed: int, mode: str, only: Sequence[str]) -> Tally:
    """The traffic through the core engine, a plain-Python agent following the policies."""
    from _lib.traffic_families import families, make_world, policy_for, tool_functions

    from muscle_mem import Engine, current_run

    holder = [make_world()]
    raw = tool_functions(lambda: holder[0])
    engine = _engine(Engine, mode)
    tools = {name: engine.tool(name=name)(fn) for name, fn in raw.items()}
    known = families()

    def agent(text: str) -> str:
        run = current_run()
        assert run is not None
        seen: list[Any] = [step.output for step in run.steps]  # resumes after the steps replayed
        policy = policy_for(text, known)
        while True:
            action = policy(text, seen)
            run.tokens += TURN_TOKENS
            if isinstance(action, str):
                return action
            name, kwargs = action
            seen.append(tools[name](**kwargs))

    engine.set_agent(agent)
    tally = Tally()
    started = time.perf_counter()
    for family, values, text in traffic(asks, seed, only):
        expected, judged = alone(family.policy, text, holder[0])
        result = engine(text, params=values if mode == "params" else None)
        safe = result.output == expected and holder[0] == judged
        holder[0] = holder[0] if safe else judged  # go on from what the agent alone would have done
        tally.tokens_spent += result.tokens_spent
        template = getattr(result, "template", None) is not None
        tally.add(result.hit, result.steps_replayed, template, result.tokens_saved, safe, text)
    tally.seconds = time.perf_counter() - started
    return tally


def run_pydantic_ai(asks: int, seed: int, mode: str, only: Sequence[str]) -> Tally:
    """The traffic through pydantic-ai: a ``FunctionModel`` following the policies, MuscleMem caching."""
    from _lib.traffic_families import families, make_world, policy_for, tool_functions
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from muscle_mem import Engine
    from muscle_mem.integrations.pydantic_ai import MuscleMem

    holder = [make_world()]
    raw = tool_functions(lambda: holder[0])
    known = families()

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        text, seen = "", []
        for message in messages:
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    text, seen = part.content, []
                elif isinstance(part, ToolReturnPart):
                    seen.append(part.content)
        action = policy_for(text, known)(text, seen)
        if isinstance(action, str):
            return ModelResponse(parts=[TextPart(action)])
        name, kwargs = action
        return ModelResponse(parts=[ToolCallPart(name, kwargs)])

    engine = _engine(Engine, mode)
    memory = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    agent: Agent[None, str] = Agent(FunctionModel(respond), tools=list(raw.values()), capabilities=[memory])
    tally = Tally()
    started = time.perf_counter()
    for family, values, text in traffic(asks, seed, only):
        expected, judged = alone(family.policy, text, holder[0])
        ran = agent.run_sync(text, metadata=values if mode == "params" else None)
        result = memory.last_result
        safe = ran.output == expected and holder[0] == judged
        holder[0] = holder[0] if safe else judged
        hit = result is not None and result.hit
        replayed = result.steps_replayed if result is not None else 0
        template = result is not None and getattr(result, "template", None) is not None
        saved = result.tokens_saved if result is not None else 0
        tally.tokens_spent += result.tokens_spent if result is not None else 0
        tally.add(hit, replayed, template, saved, safe, text)
    tally.seconds = time.perf_counter() - started
    return tally


def _engine(engine_class: Any, mode: str) -> Any:
    """An in-memory engine; with no params declared, templates on where the code has them."""
    has_templates = "templates" in inspect.signature(engine_class).parameters
    return engine_class(templates=True) if mode == "no params" and has_templates else engine_class()


def lookup_cost(sizes: Sequence[int], repeats: int = 2000) -> dict[int, tuple[float, float]]:
    """Microseconds to find the live template of a text (median, 99th percentile) per template count.

    Each template has its own fixed text (``w17 refund order {1}``) and two proving runs, stored as
    the engine stores them; the lookup reads the text, its shape, the slot positions its shape's
    templates use, and the proof of the one template it names.
    """
    from muscle_mem import Engine
    from muscle_mem.model._text_slots import read
    from muscle_mem.model.trajectory import new_id
    from muscle_mem.record._task_templates import template_key

    out = {}
    for size in sizes:
        engine = Engine(templates=True)

        @engine.tool()
        def refund(order_id: int) -> str:
            return f"refunded {order_id}"

        engine.set_agent(lambda text: refund(int(text.split()[-1])))
        engine("w0 refund order 1000")
        engine("w0 refund order 1010")
        seeds = [t for t in _all(engine.store) if "template:" in t.task_key]
        rows = []
        for k in range(1, size):
            for proved in seeds:
                text = proved.task.replace("w0 ", f"w{k} ", 1)
                reading = read(text)
                assert reading is not None
                key = template_key(reading, (3,), (), "")
                rows.append((dataclasses.replace(proved, task=text, task_key=key, id=new_id()), None))
        engine.store.add_many(rows)
        templates = engine._templates  # the engine's own index, as a call reaches it
        rng = random.Random(size)
        texts = [f"w{rng.randrange(size)} refund order {rng.randrange(1001, 1010)}" for _ in range(repeats)]
        for text in texts:  # each template's proof read once, as a running engine has it
            assert templates.find(text, ()) is not None, text
        gc.collect()
        gc.freeze()  # the benchmark's own 200,000 records are not the lookup's to collect
        timings = []
        for text in texts:
            start = time.perf_counter()
            templates.find(text, ())
            timings.append((time.perf_counter() - start) * 1e6)
        timings.sort()
        out[size] = (timings[len(timings) // 2], timings[int(len(timings) * 0.99)])
        engine.close()
        gc.unfreeze()
    return out


def _all(store: Any) -> Iterator[Any]:
    for key in store.tasks():
        yield from store.changes(key, 0).added


def worker(front: str, mode: str, asks: int, seed: int, only: Sequence[str]) -> dict[str, Any]:
    """One configuration's figures, in this process (its ``muscle_mem`` is the one on the path)."""
    run = run_core if front == "core" else run_pydantic_ai
    return dataclasses.asdict(run(asks, seed, mode, only))


def in_process(src: Path, front: str, mode: str, asks: int, seed: int, only: Sequence[str]) -> dict[str, Any]:
    """:func:`worker` in a new process with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
    argv = [sys.executable, __file__, "--worker", front, mode, "--asks", str(asks), "--seed", str(seed)]
    argv += [a for name in only for a in ("--only", name)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {front} / {mode} worker on {src} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def table(figures: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> str:
    """One row per configuration; the hit rate also as a share of the same front end's declared-params rate."""
    lines = [
        "| front end | code | declared | asks | hits | partial | misses | unsafe | by a template | "
        "tokens saved | hit rate | vs params |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (front, code, mode), f in figures.items():
        reference = figures.get((front, code, "params")) or figures.get((front, "this code", "params"))
        rate = f["hits"] / f["asks"] if f["asks"] else 0.0
        ref_rate = reference["hits"] / reference["asks"] if reference and reference["asks"] else 0.0
        versus = f"{rate / ref_rate:.0%}" if ref_rate else "n/a"
        lines.append(
            f"| {front} | {code} | {mode} | {f['asks']} | {f['hits']} | {f['partial']} | {f['misses']} | "
            f"{f['unsafe']} | {f['template_hits']} | {f['tokens_saved']:,} | {rate:.0%} | {versus} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=50, help="asks per family (fresh values each)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--only", action="append", default=[], help="only this family (repeatable)")
    parser.add_argument("--fronts", nargs="+", default=list(FRONTS), choices=FRONTS)
    parser.add_argument(
        "--baseline", help="the src directory of the code before templates (a git worktree's)"
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[10, 1_000, 100_000], help="template counts")
    parser.add_argument("--worker", nargs=2, metavar=("FRONT", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.asks, args.seed, args.only)))
        return 0
    codes = {"this code": SRC} | (
        {"before templates": Path(args.baseline).resolve()} if args.baseline else {}
    )
    figures: dict[tuple[str, str, str], dict[str, Any]] = {}
    for front in args.fronts:
        for code, src in codes.items():
            for mode in MODES:
                figures[(front, code, mode)] = in_process(src, front, mode, args.asks, args.seed, args.only)
    families = len(args.only) or 13
    print(
        f"{families} task families x {args.asks} asks, fresh values, shuffled; judged against the agent alone"
    )
    print(table(figures))
    unsafe = [(k, f["first_unsafe"]) for k, f in figures.items() if f["unsafe"]]
    for key, text in unsafe:
        print(f"first unsafe ask of {' / '.join(key)}: {text!r}")
    if args.sizes:
        print("template lookup (find the live template of a text), µs: median / 99th percentile")
        for size, (median, p99) in lookup_cost(args.sizes).items():
            print(f"  {size:>7,} templates: {median:6.1f} / {p99:6.1f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
