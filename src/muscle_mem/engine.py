"""``Engine``: wraps an agent, records its tool calls, and replays them when the task comes back.

One call, as the README's "How a call goes" names its steps: the task's identity (prepared once, see
:mod:`muscle_mem.record._task`) and its look-up; the replay, step by step; the fallback that resumes,
where the agent takes over and its run is recorded; and the end, where only successes are cached.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import Token
from typing import TYPE_CHECKING, Any, Literal

from muscle_mem._outcome import Call
from muscle_mem._parts import Parts
from muscle_mem._registration import Registration
from muscle_mem.cache.ledger import Ledger, ledger
from muscle_mem.cache.shadow_report import ShadowReport, shadow_report
from muscle_mem.embed import Embedder
from muscle_mem.eviction.policies import Policy
from muscle_mem.model._spend import Prices
from muscle_mem.model._task_keys import Match
from muscle_mem.modes import DEFAULT_PROOF, Mode
from muscle_mem.options import DEFAULT_POLICY, SYNC_INTERVAL, Options
from muscle_mem.record._instrument import note_sub_task
from muscle_mem.record._run import CURRENT_RUN, Run
from muscle_mem.record._task import prepare
from muscle_mem.replay._decoded_trajectories import DECODED_SIZE
from muscle_mem.replay._drivers import Ending, drive, drive_async
from muscle_mem.replay._replayer import Replayer
from muscle_mem.replay._shadow import shadow_reason
from muscle_mem.replay._stored_step_index import INDEX_SIZE
from muscle_mem.result import Result
from muscle_mem.session import Session
from muscle_mem.stores import CoreStore, budget
from muscle_mem.stores.base import EventLog
from muscle_mem.stores.signing import Keys

if TYPE_CHECKING:
    from muscle_mem.telemetry import Telemetry

__all__ = ["DEFAULT_POLICY", "SYNC_INTERVAL", "Engine"]

logger = logging.getLogger(__name__)

_UNSET: Any = object()


class Engine(Registration):
    """Wraps an agent with muscle memory.

    >>> engine = Engine()                       # in memory; Engine("sqlite:///cache.db") persists
    >>> @engine.tool(pre_check=Check.equal(read_page_title))
    ... def click(selector: str): ...
    >>> engine.set_agent(my_agent)
    >>> result = engine("book a room for Ada", params={"name": "Ada"})  # one task for every name
    >>> result.hit, result.output, result.reason

    The options (``match``, ``capacity``, ``signing_key``, ``mode``, ``templates``...) are described,
    and checked, in :class:`muscle_mem.options.Options`.
    """

    def __init__(
        self,
        store: CoreStore | str | None = None,
        *,
        match: Match = "exact",
        similarity: float = 0.9,
        capacity: int | None = None,
        max_bytes: int | None = None,
        policy: str | Policy | None = None,
        ttl: float | None = None,
        embedder: str | Embedder | None = None,
        namespace: str | None = None,
        signing_key: Keys | None = None,
        store_timeout: float = 5.0,
        store_retry: float = 2.0,
        index_size: int = INDEX_SIZE,
        decoded_size: int = DECODED_SIZE,
        types: Iterable[type] = (),
        write_behind: bool = False,
        sync_interval: float = SYNC_INTERVAL,
        observations: Literal["compared", "ignored"] = "compared",
        prices: Prices | None = None,
        telemetry: bool | Telemetry = False,
        mode: Mode = "replay",
        proof: int = DEFAULT_PROOF,
        templates: bool = False,
    ) -> None:
        o = Options(
            match=match, similarity=similarity, capacity=capacity, max_bytes=max_bytes, policy=policy,
            ttl=ttl, embedder=embedder, namespace=namespace, signing_key=signing_key,
            store_timeout=store_timeout, store_retry=store_retry, index_size=index_size,
            decoded_size=decoded_size, types=types, write_behind=write_behind, sync_interval=sync_interval,
            observations=observations, prices=prices, telemetry=telemetry, mode=mode, proof=proof,
            templates=templates,
        )  # fmt: skip
        parts = Parts(store, o)
        self.mode: Mode = o.mode
        """What the engine does with a task it could replay (see docs/modes.md)."""
        self.proof = o.proof
        """The shadow agreements a family needs before ``mode="proven"`` replays it."""
        self.prices = o.price_list
        """Per model name, the price of a million input and of a million output tokens (for :meth:`ledger`)."""
        self.match: Match = o.match
        self.namespace = o.namespace
        self.policy, self.bounds, self.metrics = parts.policy, parts.bounds, parts.metrics
        self.store, self.journal = parts.store, parts.journal
        self._breaker, self._waits, self._cache = parts.breaker, parts.waits, parts.cache
        self._active, self._registry = parts.active, parts.registry
        self._templates, self._look_up, self._writer = parts.templates, parts.look_up.find, parts.writer
        self._outcomes, self._book, self._identify = parts.outcomes, parts.book, parts.identify
        self._whole_texts = self._templates is not None
        """Whether a task given as one plain text is noted as such (a template may serve it)."""
        self._compare = o.observations == "compared"
        self._judged = o.mode in ("shadow", "proven")
        """Whether a call may be a shadow run (checked on every call: one attribute)."""
        self._agent: Callable[..., Any] | None = None
        self._context: Any = _UNSET
        self._finalized = False

    def set_agent(self, agent: Callable[..., Any]) -> Engine:
        """The agent the engine hands a task to when it cannot replay it."""
        if not callable(agent):
            raise TypeError(f"the agent must be callable, got {type(agent).__name__}")
        self._agent = agent
        self._finalized = False
        return self

    def set_context(self, context: Any) -> Engine:
        """The object re-injected as ``self`` into method tools at replay."""
        self._context = context
        self._finalized = False
        return self

    def finalize(self) -> Engine:
        """Check that the engine has what it needs; raises ValueError saying what is missing.

        Tools may come later: registered between calls, or during a call before the agent uses
        them (frameworks that discover their tools at run time).
        """
        if self._agent is None:
            raise ValueError("the engine has no agent to fall back to: call engine.set_agent(your_agent)")
        return self._ready()

    def _ready(self) -> Engine:
        if self._context is _UNSET and self._registry.has_methods():
            raise ValueError(
                "the engine has method tools but no context to inject as self: call engine.set_context(obj)"
            )
        self._finalized = True
        return self

    # running tasks: one call in the README's steps (``How a call goes``), driven in sync or async

    def __call__(
        self,
        *args: Any,
        tags: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Result:
        """Solve a task: replay it if a stored trajectory is safe, else hand it to the agent."""
        call, token, spending = self._identify_and_look_up(args, kwargs, tags, params, True)
        try:  # step by step; a full hit ends here
            ending = drive(call.replay, _async_in_sync) if call.replay else call.ending
            if ending.trajectory is not None:
                return self._outcomes.hit(call, ending)
            if call.replay:  # the replay's reason (the look-up's ending was redacted when made)
                ending = ending.redacted(call.run)
            # the fallback that resumes; only successes are cached (``miss`` stores the agent's run)
            with self._fallback(call, ending, self._agent) as agent:
                output = agent(*args, **kwargs)
                if inspect.isawaitable(output):
                    if inspect.iscoroutine(output):
                        output.close()
                    raise TypeError("the agent is async: use `await engine.arun(...)`")
            return self._outcomes.miss(call, ending, output)
        finally:
            self._end(call.run, token, spending)

    async def arun(
        self,
        *args: Any,
        tags: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Result:
        """:meth:`__call__` for async agents and async tools."""
        return await self._arun(args, kwargs, tags, params, None)

    def session(
        self,
        *args: Any,
        tags: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Session:
        """A task solved by an agent outside this process (or outside the engine's reach).

        ``async with engine.session(task, params=...) as s:`` (arguments as for ``engine(...)``) replays the task if it can; if
        ``s.result`` is then None, the caller does the work through ``await s.call(tool, ...)``
        (recorded into the run, from any task) and ends it with ``s.end(answer)``.
        """
        return Session(lambda agent: self._arun(args, kwargs, tags, params, agent))

    async def _arun(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
        agent: Callable[..., Any] | None,
    ) -> Result:
        """One async engine call, in the steps of :meth:`__call__`; ``agent`` (else the engine's) takes over."""
        call, token, spending = self._identify_and_look_up(args, kwargs, tags, params, agent is None)
        try:
            ending = await drive_async(call.replay) if call.replay else call.ending
            if ending.trajectory is not None:
                return self._outcomes.hit(call, ending)
            if call.replay:
                ending = ending.redacted(call.run)
            with self._fallback(call, ending, agent or self._agent) as agent:
                output = agent(*args, **kwargs)
                if inspect.isawaitable(output):
                    output = await output
            return self._outcomes.miss(call, ending, output)
        finally:
            self._end(call.run, token, spending)

    def _identify_and_look_up(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
        needs_agent: bool,
    ) -> tuple[Call, Token[Run | None], Token[budget.Budget | None] | None]:
        """Task identity and look-up: the call's run becomes current in this context until :meth:`_end`.

        Its store operations wait ``store_timeout`` seconds at most, in total (the budget returned).
        """
        started = time.perf_counter()
        if not self._finalized or (needs_agent and self._agent is None):
            self.finalize() if needs_agent else self._ready()
        spending = budget.start(self._breaker.timeout) if self._waits else None
        try:
            task = prepare(self._identify, args, kwargs, tags, params, self._whole_texts)
            if CURRENT_RUN.get() is not None:  # a task handed on inside a run
                note_sub_task(self, task.text)
            run, steps, ending = self._look_up(Run(self, task), task.unkeyable)
            context = None if self._context is _UNSET else self._context
            plain = task.plain if run.template is None else run.params
            replayer = Replayer(
                self._registry, context, run, plain, self._cache.skipped, compare=self._compare
            )
            self._active.add(replayer)
        except BaseException:
            if spending is not None:
                budget.stop(spending)
            raise
        token = CURRENT_RUN.set(run)
        shadowing = (
            shadow_reason(self._book, self.proof, run, self._related(run))
            if steps is not None and self._judged
            else None
        )
        if shadowing is not None:
            return Call(run, steps, None, shadowing, started, shadowed=replayer), token, spending
        replay = replayer.replay(steps) if steps is not None else None
        return Call(run, steps, replay, ending, started), token, spending

    def _related(self, run: Run) -> tuple[str, ...]:
        """The template family a plain-text task served by its own key also counts in (proven mode)."""
        if self._book is None or self._templates is None:
            return ()
        template = self._templates.family_of(run)
        return (template.key,) if template is not None else ()

    @contextlib.contextmanager
    def _fallback(
        self, call: Call, ending: Ending, agent: Callable[..., Any] | None
    ) -> Iterator[Callable[..., Any]]:
        """The fallback that resumes: the agent takes over, recorded; if it raises, nothing is stored."""
        assert agent is not None  # checked by finalize() before the call began
        call.run.recording = True
        call.agent_started = time.perf_counter()
        try:
            yield agent
        except BaseException:
            self._outcomes.agent_raised(call, ending)
            raise

    def _end(self, run: Run, token: Token[Run | None], spending: Token[budget.Budget | None] | None) -> None:
        """The end of one engine call: the context as it was before the call."""
        try:
            CURRENT_RUN.reset(token)
            run.ended = True
            self._active.remove(run)
        finally:
            if spending is not None:
                budget.stop(spending)

    @property
    def store_available(self) -> bool:
        """False while the store is unavailable (an outage): calls are then served by the agent, uncached."""
        return self._breaker.available

    def ledger(self, since: float = 0.0) -> Ledger:
        """What every task family spent and saved, from the store's events (every worker's), at ``prices``.

        ``since``: count the calls at or after this time (``time.time()``); events are written first.
        """
        self.journal.flush()
        events = self.store.events() if isinstance(self.store, EventLog) else []
        return ledger(events, self.prices, since)

    def shadow_report(self, since: float = 0.0) -> ShadowReport:
        """Per task family, how replays would have compared with the agent in shadow runs (every worker's).

        ``since``: count the runs at or after this time (``time.time()``); events are written first.
        """
        self.journal.flush()
        events = self.store.events(since) if isinstance(self.store, EventLog) else []
        return shadow_report(events)

    def flush(self) -> None:
        """Write what is kept behind now: the trajectories of past misses (``write_behind``), use
        statistics and events (durable, and visible to other processes)."""
        if self._writer is not None:  # the trajectories first: their writes precede their hits
            self._writer.flush()
        self._cache.flush()
        self.journal.flush()

    def close(self) -> None:
        """Write what is kept behind and close the store."""
        self.flush()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "" if self.mode == "replay" else f", mode={self.mode!r}"
        return f"Engine(store={self.store!r}, match={self.match!r}{mode}, tools={len(self._registry)})"


def _async_in_sync(name: str) -> TypeError:
    return TypeError(f"{name} is async: call the engine with `await engine.arun(...)`")
