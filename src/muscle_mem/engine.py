"""``Engine``: wraps an agent, records its tool calls, and replays them when the task comes back."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from muscle_mem import codec
from muscle_mem.cache import TrajectoryCache
from muscle_mem.check import Check
from muscle_mem.embed import Embedder, TaskMatcher, get_embedder
from muscle_mem.eviction.bounds import Bounds
from muscle_mem.eviction.policies import Policy, make_policy
from muscle_mem.eviction.relevance import TaskStream
from muscle_mem.index import TaskIndex
from muscle_mem.journal import Journal
from muscle_mem.keys import Match, TaskIdentity, check_matching, check_params, checked_tags, task_text
from muscle_mem.metrics import Metrics
from muscle_mem.outcome import Call, Outcomes
from muscle_mem.reasons import MissReason, NotStoredReason, Problem
from muscle_mem.recording import CURRENT_RUN, Run, instrument, note_sub_task
from muscle_mem.replay import ActiveReplays, Ending, Replayer, drive, drive_async
from muscle_mem.result import Result
from muscle_mem.secrecy import plain_params, redact, secret_values
from muscle_mem.stores import CoreStore, open_store
from muscle_mem.tools import ToolRegistry, checks_given, make_tool

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
_UNSET: Any = object()
DEFAULT_POLICY = "decayed"
"""The policy that measured best (docs/policies.md): forward-decayed utility, O(log n) eviction."""


class Engine:
    """Wraps an agent with muscle memory.

    >>> engine = Engine()                       # in memory; Engine("sqlite:///cache.db") persists
    >>> @engine.tool(pre_check=Check.equal(read_page_title))
    ... def click(selector: str): ...
    >>> engine.set_agent(my_agent)
    >>> result = engine("book a room for Ada", params={"name": "Ada"})  # one task for every name
    >>> result.hit, result.output, result.reason

    ``types``: dataclasses, pydantic models, enums and named tuples whose stored instances may be
    rebuilt before this process has recorded one (decoding never runs their code; see
    :func:`muscle_mem.codec.allow`). Any other class in a stored value stays opaque, so a step
    passing it is not replayed.
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
        types: Iterable[type] = (),
    ) -> None:
        check_matching(match, similarity, namespace)
        codec.allow(types)
        self.policy: Policy = make_policy(policy or DEFAULT_POLICY)
        self.bounds = Bounds(capacity=capacity, max_bytes=max_bytes, ttl=ttl, policy=self.policy)
        self.match: Match = match
        semantic_policy = self.policy.name == "attention-lru" or getattr(self.policy, "semantic", 0.0) > 0.0
        task_embedder = get_embedder(embedder) if embedder or semantic_policy or match == "semantic" else None
        stream = TaskStream(task_embedder) if task_embedder is not None else None
        matcher = TaskMatcher(task_embedder, similarity) if task_embedder and match == "semantic" else None
        self.store: CoreStore = open_store(store)  # last: every option is valid, nothing is left open
        self.metrics = Metrics()
        self.journal = Journal(self.store)
        self._active = ActiveReplays()
        self._cache = TrajectoryCache(
            self.store,
            self.policy,
            self.bounds,
            self.metrics,
            self._active.protected,
            stream=stream,
            matcher=matcher,
            namespace=namespace,
        )
        self._outcomes = Outcomes(self._cache, self.metrics, self.journal)
        self.namespace = namespace
        self._identify = TaskIdentity(match, namespace=namespace)
        self._registry = ToolRegistry()
        self._agent: Callable[..., Any] | None = None
        self._context: Any = _UNSET
        self._finalized = False

    # builder methods

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
        """Check that the engine has what it needs; raises ValueError saying what is missing."""
        if self._agent is None:
            raise ValueError("the engine has no agent to fall back to: call engine.set_agent(your_agent)")
        if not len(self._registry):
            raise ValueError("the engine has no tool: decorate tools with @engine.tool() or @engine.method()")
        if self._context is _UNSET and self._registry.has_methods():
            raise ValueError(
                "the engine has method tools but no context to inject as self: call engine.set_context(obj)"
            )
        self._finalized = True
        return self

    # tool registration

    def tool(
        self,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
    ) -> Callable[[F], F]:
        """Decorator instrumenting a function tool."""
        return self._decorator(pre_check, post_check, name, version, is_method=False)

    function = tool

    def method(
        self,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
    ) -> Callable[[F], F]:
        """Decorator instrumenting a method tool: ``self`` is not recorded and comes from ``set_context``."""
        return self._decorator(pre_check, post_check, name, version, is_method=True)

    def _decorator(
        self,
        pre_check: Check[Any] | None,
        post_check: Check[Any] | None,
        name: str | None,
        version: str | None,
        *,
        is_method: bool,
    ) -> Callable[[F], F]:
        checks_given(pre_check, post_check)  # now: ``@engine.tool`` without parentheses is an error
        return lambda fn: self._register(fn, name, version, pre_check, post_check, is_method=is_method)  # type: ignore[return-value]

    def register(
        self,
        fn: F,
        *,
        name: str | None = None,
        version: str | None = None,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
    ) -> F:
        """Instrument a callable made at run time (for example another framework's tool)."""
        return self._register(fn, name, version, pre_check, post_check, is_method=False)  # type: ignore[return-value]

    def _register(
        self,
        fn: Callable[..., Any],
        name: str | None,
        version: str | None,
        pre_check: Check[Any] | None,
        post_check: Check[Any] | None,
        *,
        is_method: bool,
    ) -> Callable[..., Any]:
        tool = make_tool(fn, name, version, pre_check, post_check, is_method=is_method)
        self._registry.add(tool)
        self._finalized = False
        return instrument(tool, self, self._outcomes.stray_call, self._active.runs)

    # running tasks

    def __call__(
        self,
        *args: Any,
        tags: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Result:
        """Solve a task: replay it if a stored trajectory is safe, else hand it to the agent."""
        with self._running(args, kwargs, tags, params) as call:
            ending = (drive(call.replay, _async_in_sync) if call.replay else call.ending).redacted(call.run)
            if ending.trajectory is not None:
                return self._outcomes.hit(call, ending)
            agent = self._start_agent(call)
            try:
                output = agent(*args, **kwargs)
                if inspect.isawaitable(output):
                    if inspect.iscoroutine(output):
                        output.close()
                    raise TypeError("the agent is async: use `await engine.arun(...)`")
            except BaseException:
                self._outcomes.agent_raised(call, ending)
                raise
            return self._outcomes.miss(call, ending, output)

    async def arun(
        self,
        *args: Any,
        tags: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Result:
        """:meth:`__call__` for async agents and async tools."""
        with self._running(args, kwargs, tags, params) as call:
            ending = (await drive_async(call.replay) if call.replay else call.ending).redacted(call.run)
            if ending.trajectory is not None:
                return self._outcomes.hit(call, ending)
            agent = self._start_agent(call)
            try:
                output = agent(*args, **kwargs)
                if inspect.isawaitable(output):
                    output = await output
            except BaseException:
                self._outcomes.agent_raised(call, ending)
                raise
            return self._outcomes.miss(call, ending, output)

    @contextmanager
    def _running(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
    ) -> Iterator[Call]:
        """The scope of one engine call: the run is current in this context while it lasts."""
        started = time.perf_counter()
        run, replayer, task, ending = self._begin(args, kwargs, tags, params)
        token = CURRENT_RUN.set(run)
        try:
            yield Call(run, task, replayer.replay(task) if task is not None else None, ending, started)
        finally:
            CURRENT_RUN.reset(token)
            self._end(run)

    def _start_agent(self, call: Call) -> Callable[..., Any]:
        assert self._agent is not None
        call.run.recording = True
        call.agent_started = time.perf_counter()
        return self._agent

    def _begin(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
    ) -> tuple[Run, Replayer, TaskIndex | None, Ending]:
        """The run, its replayer and the task index to replay, or None and the ending that says why not."""
        if not self._finalized:
            self.finalize()
        tag_tuple = checked_tags(tags)
        check_params(params)
        plain = plain_params(params)
        key, text, unkeyable = self._task_identity(args, kwargs, tag_tuple, params, plain)
        note_sub_task(self, text)
        run = Run(self, text, key, tag_tuple, params or {})
        context = None if self._context is _UNSET else self._context
        replayer = Replayer(self._registry, context, run, plain, self._cache.skipped)
        self._active.add(replayer)
        if unkeyable is not None:
            logger.error("the agent handles task %r uncached: %s", run.task, unkeyable)
            run.problems.append(Problem(NotStoredReason.UNKEYABLE_TASK, unkeyable))
            return run, replayer, None, Ending(reason=unkeyable, kind=MissReason.UNKEYABLE_TASK)
        self._cache.observe(run)
        try:
            return run, replayer, self._cache.lookup(run), Ending()
        except Exception as exc:
            self.metrics.add("store_errors")
            logger.exception("store lookup failed; the agent handles this task")
            why = f"the store could not be read: {exc!r}"
            return run, replayer, None, Ending(reason=why, kind=MissReason.STORE_ERROR)

    def _task_identity(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: tuple[str, ...],
        params: Mapping[str, Any] | None,
        plain: dict[str, Any],
    ) -> tuple[str, str, str | None]:
        """The task's key and text (secret values redacted), or an empty key and why it has none."""
        secrets = secret_values(params)
        problem = None
        try:
            key, text = self._identify(args, kwargs, tags, plain, frozenset(secrets))
        except codec.CodecError as exc:
            key, text, problem = "", task_text(args, kwargs, plain), str(exc)
        return key, redact(text, secrets) if secrets else text, problem

    def _end(self, run: Run) -> None:
        run.ended = True
        self._active.remove(run)

    def close(self) -> None:
        """Write pending events and close the store."""
        self.journal.flush()
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Engine(store={self.store!r}, match={self.match!r}, tools={len(self._registry)})"


def _async_in_sync(name: str) -> TypeError:
    return TypeError(f"{name} is async: call the engine with `await engine.arun(...)`")
