"""Runs a stream of support requests through an engine and verifies every replay.

Before each request the live desk is copied. When the engine replayed at least one step, the agent
alone (no engine, no cache) handles the same request on the copy, in a worker thread; its final
desk and answer must equal the live ones. A difference is an unsafe replay. The agent-alone runs
also measure what the replayed requests would have cost without the cache.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from muscle_mem import Engine, MissReason, Result, Verdict
from muscle_mem.demo.agent import SupportAgent, instrument
from muscle_mem.demo.desk import Desk
from muscle_mem.demo.llm import LLMUsage, ScriptedLLM
from muscle_mem.demo.workload import Task, Workload
from muscle_mem.modes import Mode

State = dict[str, list[tuple[Any, ...]]]


@dataclass(frozen=True, slots=True)
class AloneRun:
    """The agent alone on a copy of the desk: what it answered and what it cost."""

    output: Any
    seconds: float
    llm: LLMUsage


@dataclass(slots=True)
class Outcome:
    """One request through the engine."""

    index: int
    task: Task
    result: Result
    seconds: float
    """Wall time of the engine call."""
    agent_seconds: float
    """Time spent in the agent during the call (the engine's measure)."""
    llm: LLMUsage
    """What the LLM cost during the call (nothing on a full hit)."""
    alone: AloneRun | None = None
    """The verification run, for a request on which the engine replayed steps."""
    differences: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        if self.result.hit:
            return "hit"
        return "partial" if self.result.steps_replayed else "miss"

    @property
    def replayed(self) -> bool:
        return self.result.steps_replayed > 0


@dataclass(slots=True)
class Tally:
    """Everything the demo's summary shows."""

    outcomes: list[Outcome] = field(default_factory=list)
    wall_seconds: float = 0.0
    """Wall time of the whole run, verification included."""
    saved_seconds_estimate: float = 0.0
    """The engine's own estimate of agent time avoided (from the recorded runs)."""
    saved_tokens_estimate: int = 0
    """The engine's own estimate of LLM tokens avoided: its ledger's (the median of each task's recorded runs)."""
    spent_tokens_counted: int = 0
    """The LLM tokens the engine's ledger counts spent: what the agent reported on its runs."""

    def count(self, kind: str) -> int:
        return sum(o.kind == kind for o in self.outcomes)

    @property
    def verified(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.alone is not None]

    @property
    def unsafe(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.differences]

    @property
    def steps_replayed(self) -> int:
        return sum(o.result.steps_replayed for o in self.outcomes)

    @property
    def llm_spent(self) -> LLMUsage:
        return _total(o.llm for o in self.outcomes)

    @property
    def llm_avoided(self) -> LLMUsage:
        """Measured: the LLM cost of the agent alone on the verified requests, minus what they still cost."""
        alone = _total(o.alone.llm for o in self.verified if o.alone is not None)
        return alone - _total(o.llm for o in self.verified)

    @property
    def agent_seconds(self) -> float:
        return sum(o.agent_seconds for o in self.outcomes)

    @property
    def agent_seconds_avoided(self) -> float:
        """Measured: the agent alone on the verified requests, minus the agent time they still took."""
        return sum(o.alone.seconds - o.agent_seconds for o in self.verified if o.alone is not None)

    @property
    def seconds_with_cache(self) -> float:
        return sum(o.seconds for o in self.outcomes)

    @property
    def seconds_without_cache(self) -> float:
        """Measured: the agent alone for verified requests, the agent's own run for the others."""
        return sum(o.alone.seconds if o.alone is not None else o.seconds for o in self.outcomes)

    def reasons(self) -> Counter[str]:
        """Why the cache was not, or not fully, used: the kind of cause, and the tool to blame if any."""
        return Counter(
            reason_label(o.result.miss_reason, o.result.miss_tool)
            for o in self.outcomes
            if o.result.miss_reason is not None
        )

    def misses_by(self, kind: MissReason) -> int:
        """How many requests missed for this kind of cause."""
        return sum(o.result.miss_reason is kind for o in self.outcomes)

    def shadows(self) -> Counter[Verdict]:
        """How the shadow runs (``--mode shadow`` or ``proven``) compared with what a replay would have done."""
        return Counter(o.result.shadow.verdict for o in self.outcomes if o.result.shadow is not None)

    def first_disagreement(self) -> Outcome | None:
        """The first request whose agent did otherwise than a replay would have."""
        return next(
            (
                o
                for o in self.outcomes
                if o.result.shadow is not None and o.result.shadow.verdict is Verdict.DISAGREED
            ),
            None,
        )


def reason_label(kind: MissReason, tool: str | None) -> str:
    """A kind of cause with the tool to blame, if there is one: one line per kind and tool."""
    return f"{kind.value} ({tool})" if tool else kind.value


def _total(usages: Iterable[LLMUsage]) -> LLMUsage:
    return sum(usages, LLMUsage())


class DemoRunner:
    """A live desk wired to an engine on ``store``, a workload, and a pool for the verification runs."""

    def __init__(
        self,
        workdir: Path,
        store: str,
        *,
        seed: int = 7,
        speed: float = 1.0,
        fresh: bool = False,
        checks: bool = True,
        observations: bool = True,
        workers: int = 6,
        mode: Mode = "replay",
    ) -> None:
        self.workdir = workdir
        self.speed = speed
        self.seed = seed
        self.copies = workdir / "copies"
        shutil.rmtree(self.copies, ignore_errors=True)
        self.copies.mkdir(parents=True)
        self.engine = Engine(store, observations="compared" if observations else "ignored", mode=mode)
        if fresh:
            self.engine.store.clear()
        Desk.create(workdir / "desk.db", seed=seed).close()
        self.desk = instrument(self.engine, checks=checks)(workdir / "desk.db")
        self.llm = ScriptedLLM(speed=speed, seed=seed)
        self.engine.set_agent(SupportAgent(self.desk, self.llm)).set_context(self.desk)
        self.workload = Workload(self.desk, seed=seed)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agent-alone")
        self._pending: dict[Future[None], Outcome] = {}
        self._elapsed = 0.0
        self._started = time.time()
        self.tally = Tally()

    def stream(self, tasks: int, on_task: Callable[[Outcome], None] = lambda _: None) -> None:
        """Run ``tasks`` requests through the engine, starting a verification after each replay."""
        started = time.perf_counter()
        for index, task in enumerate(self.workload.tasks(tasks)):
            copy = self.copies / f"{index}.db"
            self.desk.copy_to(copy).close()
            llm_before, agent_before = self.llm.usage, self.engine.metrics.agent_seconds
            call_started = time.perf_counter()
            result = self.engine(task.text, tags=task.tags, params=task.params)
            seconds = time.perf_counter() - call_started
            llm = self.llm.usage - llm_before
            outcome = Outcome(
                index, task, result, seconds, self.engine.metrics.agent_seconds - agent_before, llm
            )
            self.tally.outcomes.append(outcome)
            if outcome.replayed:
                self._pending[self._pool.submit(self._verify, outcome, copy, self.desk.state())] = outcome
            else:
                copy.unlink()
            on_task(outcome)
        self._elapsed += time.perf_counter() - started

    @property
    def pending(self) -> int:
        """Verification runs whose results :meth:`finish` has not collected yet."""
        return len(self._pending)

    @property
    def verifying(self) -> int:
        """Verification runs not finished yet."""
        return sum(not f.done() for f in self._pending)

    def finish(self, on_verified: Callable[[Outcome], None] = lambda _: None) -> Tally:
        """Wait for every verification run (raising what one raised) and return the tally."""
        started = time.perf_counter()
        for future in as_completed(self._pending):
            future.result()
            on_verified(self._pending[future])
        self._pending.clear()
        self.tally.wall_seconds = self._elapsed + time.perf_counter() - started
        book = self.engine.ledger(since=self._started).total  # the figures ``muscle-mem stats`` shows
        self.tally.saved_seconds_estimate = book.saved.seconds
        self.tally.saved_tokens_estimate = book.saved.tokens
        self.tally.spent_tokens_counted = book.spent.tokens
        return self.tally

    def _verify(self, outcome: Outcome, copy: Path, live: State) -> None:
        """Run the agent alone on the copy made before ``outcome``'s request; record what differs."""
        llm = ScriptedLLM(speed=self.speed, seed=self.seed * 100_003 + outcome.index)
        with Desk(copy) as desk:
            started = time.perf_counter()
            output = SupportAgent(desk, llm)(outcome.task.text)
            seconds = time.perf_counter() - started
            state = desk.state()
        copy.unlink()
        found = differences(live, state)
        if output != outcome.result.output:
            found.append(f"answer: {outcome.result.output!r} (agent alone: {output!r})")
        outcome.differences = found
        outcome.alone = AloneRun(output, seconds, llm.usage)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.desk.close()
        self.engine.close()
        shutil.rmtree(self.copies, ignore_errors=True)

    def __enter__(self) -> DemoRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def differences(live: State, alone: State) -> list[str]:
    """The rows that differ between two desk states, table by table."""
    found = []
    for table in sorted(live.keys() | alone.keys()):
        mine, theirs = set(live.get(table, ())), set(alone.get(table, ()))
        for row in sorted(mine - theirs, key=repr):
            found.append(f"{table}: {row!r} only after the replay")
        for row in sorted(theirs - mine, key=repr):
            found.append(f"{table}: {row!r} only from the agent alone")
    return found
