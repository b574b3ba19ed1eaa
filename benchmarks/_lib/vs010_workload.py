"""The workload of the side-by-side benchmark against muscle-mem 0.1.0, run once per engine.

Both projects import as ``muscle_mem``, so ``bench_vs_010.py`` runs this script twice, in two
interpreters: one with muscle-mem 0.1.0 installed, one with this project. The same code runs on
both; it uses only the API they share (``Engine()``, ``engine.function(pre_check=...)``,
``engine.method()``, ``Check(capture, compare)``, ``set_agent``/``set_context``/``finalize`` and
``engine(task, tags=[...], params={...})``, whose result is truthy on a full hit in both). It prints
one JSON document on stdout.

0.1.0 prints colour codes on every engine call: everything the engines (and the tools) print goes to
an in-memory buffer (``io.StringIO``), so that terminal output does not distort the timings.

Run: python benchmarks/_lib/vs010_workload.py [--sizes 1 10 100 1000 10000] [--repeat 300] [--budget 2]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

os.environ.pop("MUSCLE_MEM_STORE", None)  # our engine: the in-memory store, as 0.1.0's

import muscle_mem
from muscle_mem import Check, Engine

OURS = hasattr(muscle_mem, "Result")
FLAVOR = "ours" if OURS else "0.1.0"
VERSION = str(getattr(muscle_mem, "__version__", "0.1.0"))
TASK = "process the queue"
TAGS = ["queue"]
STEPS = 5
FULL_FILL_LIMIT = 1_000
"""Above this size, the trajectories recorded before the timed ones are stored by a state-equivalent
fast fill (see :func:`prefill`), since a miss costs O(stored) with a plain compare."""


# the 5-step workload


def same(current: Any, candidate: Any) -> bool:
    """A plain compare: 0.1.0 has no equality-by-key Check."""
    return bool(current == candidate)


@dataclass
class Workload:
    """An engine with five tools whose pre-checks read one environment value, and its agent."""

    engine: Any
    env: dict[str, int]
    bodies: list[Callable[[int], int]]
    agent_calls: list[int]

    def run(self) -> bool:
        return bool(self.engine(TASK, tags=list(TAGS)))

    def bare(self) -> None:
        """What the hit replaces, done by hand: read the environment value and run each tool body."""
        env, bodies = self.env, self.bodies
        for body in bodies:
            _ = env["state"]
            body(7)


def build(variant: str, store: Any = None) -> Workload:
    """``variant``: "plain" (``Check(capture, same)``) or "equal" (``Check.equal``, ours only)."""
    env = {"state": 0}

    def capture(item: int) -> int:
        return env["state"]

    check = Check.equal(capture) if variant == "equal" else Check(capture, same)
    engine = Engine() if store is None else Engine(store)

    def body0(item: int) -> int:
        return item + 0

    def body1(item: int) -> int:
        return item + 1

    def body2(item: int) -> int:
        return item + 2

    def body3(item: int) -> int:
        return item + 3

    def body4(item: int) -> int:
        return item + 4

    # distinct source per tool: 0.1.0 refuses two tools with the same name and source hash
    @engine.function(pre_check=check)
    def step0(item: int) -> int:
        return body0(item)

    @engine.function(pre_check=check)
    def step1(item: int) -> int:
        return body1(item)

    @engine.function(pre_check=check)
    def step2(item: int) -> int:
        return body2(item)

    @engine.function(pre_check=check)
    def step3(item: int) -> int:
        return body3(item)

    @engine.function(pre_check=check)
    def step4(item: int) -> int:
        return body4(item)

    agent_calls: list[int] = []
    tools = (step0, step1, step2, step3, step4)

    def agent(task: str) -> int:
        agent_calls.append(1)
        return sum(tool(7) for tool in tools)

    engine.set_agent(agent).finalize()
    return Workload(engine, env, [body0, body1, body2, body3, body4], agent_calls)


def record(work: Workload, state: int) -> float:
    """Record one trajectory in environment ``state`` (a miss); returns its time in seconds."""
    work.env["state"] = state
    calls = len(work.agent_calls)
    started = time.perf_counter()
    hit = work.run()
    elapsed = time.perf_counter() - started
    if hit or len(work.agent_calls) != calls + 1:
        raise AssertionError(f"{FLAVOR}: expected a miss in the new state {state}")
    return elapsed


def prefill(work: Workload, count: int, variant: str) -> None:
    """Store ``count`` trajectories (states 0..count-1) as ``count`` misses through the engine would.

    The stored trajectories are the same; only the failing lookups of those earlier misses, which
    cost O(stored) each with a plain compare (O(count²) in all), are skipped:
    - 0.1.0 (one list per tag bucket): each is recorded by the real engine while the bucket's list is
      set aside, then the lists are joined in recording order;
    - ours: each is recorded by a twin engine with the same Checks on a store of its own, emptied
      after each record (so its lookup finds nothing, O(1) per miss), then moved to the workload's
      store; the snapshots are those the variant's Check stores (a hash for ``Check.equal``).
    """
    if count <= 0:
        return
    if OURS:
        twin = build(variant)
        for state in range(count):
            record(twin, state)
            [summary] = twin.engine.store.summaries()
            work.engine.store.add(twin.engine.store.get(summary.id))
            twin.engine.store.clear()
        return
    key = tuple(TAGS)
    trajectories = work.engine.db.trajectories
    kept = trajectories.pop(key, [])
    for state in range(count):
        record(work, state)
        kept.extend(trajectories.pop(key))
    trajectories[key] = kept


def filled(variant: str, size: int, timed: int) -> tuple[Workload, list[float], float]:
    """A workload with ``size`` trajectories stored, the one for state ``size - 1`` last.

    The last ``timed`` are recorded through the engine and timed; the others by real misses too, or
    by :func:`prefill` above ``FULL_FILL_LIMIT``. Returns the workload, the timed records (seconds)
    and the fill time.
    """
    work = build(variant)
    started = time.perf_counter()
    untimed = size - timed
    if size > FULL_FILL_LIMIT:
        prefill(work, untimed, variant)
    else:
        for state in range(untimed):
            record(work, state)
    samples = [record(work, state) for state in range(untimed, size)]
    return work, samples, time.perf_counter() - started


def bare_seconds(work: Workload, repeat: int = 200) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        work.bare()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def drop_hit_copy(work: Workload, keep: int) -> None:
    """0.1.0 stores a copy of the trajectory on every hit; drop it (outside the timings) so that
    ``keep`` stay stored. Ours stores nothing on a hit."""
    if not OURS:
        del work.engine.db.trajectories[tuple(TAGS)][keep:]


def timed_hits(
    work: Workload, state: int, keep: int | None, repeat: int, budget: float | None = None
) -> tuple[list[float], list[float]]:
    """``repeat`` hits in environment ``state`` (fewer if the ``budget`` in seconds runs out after 5),
    each followed by the bare tool bodies, timed too. ``keep``: drop 0.1.0's copies beyond that many."""
    work.env["state"] = state
    calls = len(work.agent_calls)
    hits: list[float] = []
    bares: list[float] = []
    deadline = time.perf_counter() + (budget or 0.0)
    while len(hits) < repeat and (budget is None or len(hits) < 5 or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        hit = work.run()
        t1 = time.perf_counter()
        work.bare()
        t2 = time.perf_counter()
        if keep is not None:
            drop_hit_copy(work, keep)
        if not hit:
            raise AssertionError(f"{FLAVOR}: a hit missed in state {state}")
        hits.append(t1 - t0)
        bares.append(t2 - t1)
    if len(work.agent_calls) != calls:
        raise AssertionError(f"{FLAVOR}: the agent ran during hits")
    return hits, bares


def measure_size(variant: str, size: int, repeat: int, budget: float, miss_samples: int) -> dict[str, Any]:
    """Hit and miss (lookup + agent + record) latency with ``size`` trajectories stored.

    ``hit``: the matching trajectory is the last recorded, after one
    warm-up hit. ``oldest``: one hit in each of the oldest states, each state's first hit (a
    trajectory recorded long ago and not used since); None with a single trajectory stored.
    """
    per_fill = miss_samples if size >= 10 * miss_samples else 1
    misses: list[float] = []
    fill_seconds = 0.0
    work = None
    while len(misses) < miss_samples:
        work, samples, seconds = filled(variant, size, min(per_fill, size))
        misses += samples
        fill_seconds = max(fill_seconds, seconds)
    assert work is not None
    timed_hits(work, size - 1, size, 1)  # warm-up
    hits, bares = timed_hits(work, size - 1, size, repeat, budget)
    oldest = [timed_hits(work, state, size, 1)[0][0] for state in range(min(miss_samples, size - 1))]
    bare = statistics.median(bares)
    hit = statistics.median(hits)
    miss = statistics.median(misses)
    return {
        "variant": variant,
        "size": size,
        "hit_us": hit * 1e6,
        "hit_overhead_us": (hit - bare) * 1e6,
        "hit_repeats": len(hits),
        "hit_repeats_capped": len(hits) < repeat,
        "oldest_hit_us": statistics.median(oldest) * 1e6 if oldest else None,
        "oldest_samples": len(oldest),
        "miss_us": miss * 1e6,
        "miss_overhead_us": (miss - bare) * 1e6,
        "miss_samples": len(misses),
        "bare_us": bare * 1e6,
        "fill_seconds": fill_seconds,
        "fast_fill": size > FULL_FILL_LIMIT,
    }


def hits_keeping_copies(hits: int = 100) -> float:
    """Median µs of the last half of ``hits`` repeated hits with 1 trajectory recorded, keeping
    whatever each hit stores (0.1.0: a copy per hit, so later hits compare up to a page of 20)."""
    work, _, _ = filled("plain", 1, 1)
    samples = timed_hits(work, 0, None, hits)[0]
    return statistics.median(samples[hits // 2 :]) * 1e6


# recording overhead per tool call


class _Measured(Exception):
    """Ends the in-call measurement run, so that ours does not build and store its 40,000 calls."""


def record_overhead(calls: int, batch: int = 100, runs: int = 200, per_run: int = 20) -> dict[str, float]:
    """Recording overhead per tool call: a tool called through the engine versus its body called bare.

    In the call: inside one run, ``calls`` calls of each tool in interleaved batches (through the
    engine, then bare, ``batch`` calls each) whose medians are compared, so that a burst of load on
    the machine falls on both alike. End to end: ``runs`` tasks of ``per_run`` calls each, each a
    miss on a new task (so the lookup finds nothing), against the same calls made bare; the
    difference includes building and storing the trajectory, per call.
    """
    engine = Engine()
    env = {"state": 1}

    def capture(x: int) -> int:
        return env["state"]

    def raw_noop(x: int) -> int:
        return x

    def raw_checked(x: int) -> int:
        return x

    def bare_checked(x: int) -> int:
        capture(x)
        return raw_checked(x)

    noop = engine.function()(raw_noop)
    checked = engine.function(pre_check=Check(capture, same))(raw_checked)
    batches: dict[str, list[float]] = {"noop": [], "raw_noop": [], "checked": [], "raw_checked": []}

    def timed(name: str, fn: Callable[[int], Any], count: int) -> None:
        t0 = time.perf_counter()
        for i in range(count):
            fn(i)
        batches[name].append(time.perf_counter() - t0)

    def in_call(task: str) -> None:
        for _ in range(max(1, calls // batch)):
            timed("noop", noop, batch)
            timed("raw_noop", raw_noop, batch)
            timed("checked", checked, batch)
            timed("raw_checked", bare_checked, batch)
        raise _Measured

    def short(task: str) -> None:
        for i in range(per_run // 2):
            noop(i)
            checked(i)

    def short_bare() -> None:
        for i in range(per_run // 2):
            raw_noop(i)
            bare_checked(i)

    def agent(task: str) -> None:  # one agent: 0.1.0 cannot change it once finalized
        (in_call if task == "in the call" else short)(task)

    engine.set_agent(agent).finalize()
    with contextlib.suppress(_Measured):
        engine("in the call", tags=["in the call"])
    whole, bare = [], []
    for run in range(runs):
        name = f"record {run}"
        t0 = time.perf_counter()
        engine(name, tags=[name])
        t1 = time.perf_counter()
        short_bare()
        t2 = time.perf_counter()
        whole.append(t1 - t0)
        bare.append(t2 - t1)
    med = {name: statistics.median(samples) / batch for name, samples in batches.items()}
    return {
        "no_check_us": (med["noop"] - med["raw_noop"]) * 1e6,
        "pre_check_us": (med["checked"] - med["raw_checked"]) * 1e6,
        "end_to_end_us": (statistics.median(whole) - statistics.median(bare)) / per_run * 1e6,
    }


# correctness on the behaviours 0.1.0's README documents


@dataclass
class Verdict:
    passed: bool
    detail: str


def check_tags() -> Verdict:
    """README: tags create separate buckets; "do some task" misses, then hits, in each."""
    engine = Engine()
    done: list[str] = []

    @engine.function()
    def act(task: str) -> None:
        done.append(task)

    def agent(task: str) -> None:
        act(task)

    engine.set_agent(agent).finalize()
    got = [
        bool(engine("do some task", tags=["some task"])),
        bool(engine("do some task", tags=["some task"])),
        bool(engine("do some task", tags=["different task"])),
        bool(engine("do some task", tags=["different task"])),
    ]
    expected = [False, True, False, True]
    return Verdict(got == expected, f"hits {got}, expected {expected}")


def check_params() -> Verdict:
    """README: type("John") is stored with its argument mapped to the param; Jane's run types Jane."""
    engine = Engine()
    typed: list[str] = []

    @engine.function()
    def type_text(text: str) -> None:
        typed.append(text)

    def agent(task: str) -> None:
        type_text(task.rsplit(": ", 1)[1])

    engine.set_agent(agent).finalize()
    got = [
        bool(engine("fill the form with name: John", params={"name": "John"})),
        bool(engine("fill the form with name: Jane", params={"name": "Jane"})),
    ]
    ok = got == [False, True] and typed == ["John", "Jane"]
    return Verdict(ok, f"hits {got}, typed {typed}; expected [False, True], ['John', 'Jane']")


def check_pre_check_miss() -> Verdict:
    """README: a pre-check that fails means the environment changed: a miss, the agent works."""
    engine = Engine()
    env = {"page": "A"}
    agent_runs: list[str] = []

    @engine.function(pre_check=Check(lambda selector: env["page"], same))
    def click(selector: str) -> None:
        pass

    def agent(task: str) -> None:
        agent_runs.append(env["page"])
        click("#submit")

    engine.set_agent(agent).finalize()
    got = [bool(engine("submit"))]
    got.append(bool(engine("submit")))
    env["page"] = "B"
    got.append(bool(engine("submit")))
    ok = got == [False, True, False] and agent_runs == ["A", "B"]
    return Verdict(
        ok, f"hits {got} (page A, A, B), agent ran on {agent_runs}; expected [False, True, False], ['A', 'B']"
    )


def check_different_task() -> Verdict:
    """0.1.0's examples/greeter.py: engine("erik") after engine("john") must not replay john's calls.

    The check here always passes (no clock), so the only thing telling the tasks apart is the task.
    """
    engine = Engine()
    greeted: list[str] = []

    @engine.function(pre_check=Check(lambda name: "ok", same))
    def hello(name: str) -> None:
        greeted.append(name)

    def agent(name: str) -> None:
        hello(name)

    engine.set_agent(agent).finalize()
    got = [bool(engine("john")), bool(engine("erik"))]
    ok = got == [False, False] and greeted == ["john", "erik"]
    return Verdict(ok, f"hits {got}, greeted {greeted}; expected [False, False], ['john', 'erik']")


def check_method_context() -> Verdict:
    """README: @engine.method tools; ``self`` is not recorded and comes from set_context at replay."""
    engine = Engine()
    agent_runs: list[int] = []

    class Client:
        def __init__(self) -> None:
            self.said: list[str] = []

        @engine.method()
        def hello(self, name: str) -> None:
            self.said.append(name)

    client = Client()

    def agent(task: str) -> None:
        agent_runs.append(1)
        client.hello("world")

    engine.set_agent(agent).set_context(client).finalize()
    got = [bool(engine("say hello world!")), bool(engine("say hello world!"))]
    ok = got == [False, True] and client.said == ["world", "world"] and len(agent_runs) == 1
    return Verdict(
        ok,
        f"hits {got}, the context said {client.said}, agent ran {len(agent_runs)}x; "
        "expected [False, True], ['world', 'world'], 1x",
    )


def check_finalize_errors() -> Verdict:
    """README/API: finalize() refuses an engine without an agent, or with method tools but no context,
    with a ValueError saying what is missing (tools may come later since 0.3.0)."""
    outcomes: list[str] = []

    def agent(task: str) -> None:
        pass

    def no_agent() -> Any:
        engine = Engine()

        @engine.function()
        def act(x: int) -> None:
            pass

        return engine.finalize()

    def no_context() -> Any:
        engine = Engine()

        class Client:
            @engine.method()
            def act(self, x: int) -> None:
                pass

        return engine.set_agent(agent).finalize()

    ok = True
    for name, make, word in (
        ("no agent", no_agent, "agent"),
        ("no context", no_context, "context"),
    ):
        try:
            make()
        except ValueError as exc:
            said = word in str(exc).lower()
            ok = ok and said
            outcomes.append(f"{name}: ValueError{'' if said else ' not naming ' + word}")
        else:
            ok = False
            outcomes.append(f"{name}: no error")
    return Verdict(ok, "; ".join(outcomes))


def _greeter(window: float, pause: float) -> tuple[Any, list[str]]:
    """The README's greeter: a tool valid for ``window`` seconds, greeting 9 times, ``pause`` s each."""
    engine = Engine()
    greeted: list[str] = []

    @dataclass
    class T:
        name: str
        time: float

    def capture(name: str) -> T:
        return T(name=name, time=time.time())

    def compare(current: T, candidate: T) -> bool:
        return current.time - candidate.time <= window

    @engine.function(pre_check=Check(capture, compare))
    def hello(name: str) -> None:
        time.sleep(pause)
        greeted.append(name)

    def agent(name: str) -> None:
        for i in range(9):
            hello(name + " + " + str(i))

    engine.set_agent(agent).finalize()
    return engine, greeted


def _script(engine: Any, greeted: list[str], steps: list[tuple[str, float, bool]]) -> Verdict:
    """Run (task, sleep before, expected hit) steps; report each step that went otherwise."""
    wrong = []
    for number, (name, sleep, expected) in enumerate(steps, 1):
        time.sleep(sleep)
        before = len(greeted)
        hit = bool(engine(name))
        whom = {g.split(" + ")[0] for g in greeted[before:]}
        if hit != expected or whom != {name}:
            wrong.append(f"step {number} {name!r}: {'hit' if hit else 'miss'}, greeted {sorted(whom)}")
    return Verdict(not wrong, "; ".join(wrong) or f"all {len(steps)} steps as expected")


def check_readme_greeter(scale: float) -> Verdict:
    """README "Putting it all together": erik misses, hits, then misses after a 3 s sleep."""
    engine, greeted = _greeter(window=1.0 * scale, pause=0.1 * scale)
    return _script(engine, greeted, [("erik", 0, False), ("erik", 0, True), ("erik", 3.0 * scale, False)])


def check_example_greeter(scale: float) -> Verdict:
    """0.1.0's examples/greeter.py, step by step (john, erik, erik x3, sleep 1 s, erik x2, john, jack)."""
    engine, greeted = _greeter(window=1.0 * scale, pause=0.1 * scale)
    steps = [
        ("john", 0, False),
        ("erik", 0, False),
        ("erik", 0, True),
        ("erik", 0, True),
        ("erik", 0, True),
        ("erik", 1.0 * scale, False),
        ("erik", 0, True),
        ("john", 0, False),
        ("jack", 0, False),
    ]
    return _script(engine, greeted, steps)


CHECKS: dict[str, Callable[[], Verdict]] = {
    "tags bucket tasks": check_tags,
    "params replace a typed value (John → Jane)": check_params,
    "a failing pre-check is a miss": check_pre_check_miss,
    "another task is not replayed (john → erik)": check_different_task,
    "method tools with set_context": check_method_context,
    "finalize() errors": check_finalize_errors,
}
TIMED_CHECKS: dict[str, Callable[[float], Verdict]] = {
    "README greeter (1 s window)": check_readme_greeter,
    "0.1.0 examples/greeter.py": check_example_greeter,
}


def correctness(scale: float | None) -> dict[str, dict[str, Any]]:
    """Every check, as ``{name: {"passed": bool, "detail": str}}``; the clock-based greeter checks
    run only with a time ``scale`` (1.0: the README's own timings)."""
    results: dict[str, dict[str, Any]] = {}
    runs: list[tuple[str, Callable[[], Verdict]]] = list(CHECKS.items())
    if scale is not None:
        runs += [(name, functools.partial(fn, scale)) for name, fn in TIMED_CHECKS.items()]
    for name, fn in runs:
        try:
            verdict = fn()
        except Exception as exc:
            verdict = Verdict(False, f"raised {exc!r}")
        results[name] = {"passed": verdict.passed, "detail": verdict.detail}
    return results


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Send what the engines and tools print to a buffer (0.1.0 prints colour codes on every call)."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        yield sink


PARTS = ("hits", "record", "checks")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100, 1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=300, help="hits timed per size (at most)")
    parser.add_argument(
        "--budget", type=float, default=2.0, help="seconds of hits per size (at least 5 hits)"
    )
    parser.add_argument("--miss-samples", type=int, default=15)
    parser.add_argument("--record-calls", type=int, default=20_000)
    parser.add_argument("--scale", type=float, default=1.0, help="greeter timings (1.0 = the README's)")
    parser.add_argument("--no-timed-checks", action="store_true", help="skip the clock-based greeter checks")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS), help="what to run")
    args = parser.parse_args(argv)
    variants = ["plain", "equal"] if OURS else ["plain"]
    result: dict[str, Any] = {
        "flavor": FLAVOR,
        "version": VERSION,
        "python": platform.python_version(),
        "module": muscle_mem.__file__,
        "settings": vars(args),
        "full_fill_limit": FULL_FILL_LIMIT,
        "hits": [],
    }
    with quiet():
        if "hits" in args.parts:
            result["hits"] = [
                measure_size(variant, size, args.repeat, args.budget, args.miss_samples)
                for size in args.sizes
                for variant in variants
            ]
        if "record" in args.parts:
            result["hit_keeping_copies_us"] = hits_keeping_copies()
            result["record"] = record_overhead(args.record_calls)
        if "checks" in args.parts:
            result["checks"] = correctness(None if args.no_timed_checks else args.scale)
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout)
    sys.stdout.write("\n")
