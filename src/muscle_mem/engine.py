"""``Engine``: wraps an agent, records its tool calls, and replays them when the task comes back."""

from __future__ import annotations

import functools
import inspect
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import Token
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from muscle_mem import codec
from muscle_mem.breaker import Breaker, check_seconds
from muscle_mem.cache import TrajectoryCache
from muscle_mem.check import Check
from muscle_mem.embed import Embedder, TaskMatcher, get_embedder
from muscle_mem.eviction.bounds import Bounds
from muscle_mem.eviction.policies import Policy, make_policy
from muscle_mem.eviction.relevance import TaskStream
from muscle_mem.index import TaskSteps
from muscle_mem.journal import Journal
from muscle_mem.keys import Match, TaskIdentity, check_matching, check_params, checked_tags, task_text
from muscle_mem.lazy_index import DECODED_SIZE, INDEX_SIZE
from muscle_mem.ledger import Ledger, ledger
from muscle_mem.metrics import Metrics
from muscle_mem.modes import DEFAULT_PROOF, Mode, check_mode
from muscle_mem.outcome import Call, Outcomes
from muscle_mem.reasons import MissReason, NotStoredReason, Problem
from muscle_mem.recording import CURRENT_RUN, Run, instrument, note_sub_task
from muscle_mem.replay import ActiveReplays, Ending, Replayer, drive, drive_async
from muscle_mem.result import Result
from muscle_mem.secrecy import plain_params, redact, secret_values
from muscle_mem.session import Session
from muscle_mem.shadow_report import ShadowBook, ShadowReport, shadow_report
from muscle_mem.spend import Prices, check_prices
from muscle_mem.stores import CoreStore, MemoryStore, StoreUnavailable, budget, open_store
from muscle_mem.stores.base import EventLog
from muscle_mem.stores.signing import Keys, signer_from
from muscle_mem.task_templates import TemplateIndex
from muscle_mem.text_slots import Template
from muscle_mem.tools import ToolRegistry, checks_given, make_tool
from muscle_mem.writer import Writer

if TYPE_CHECKING:
    from muscle_mem.telemetry import Telemetry

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
_UNSET: Any = object()
_Scope = tuple[Token[Run | None], Token[budget.Budget | None] | None]
"""What :meth:`Engine._exit` restores: the current run's token and the store budget (or None)."""
SYNC_INTERVAL = 0.5
"""Default seconds an engine may lag the store (use statistics written behind, changes polled)."""
DEFAULT_POLICY = "adaptive"
"""The policy that measured best (docs/policies.md): decayed utility adapted to the traffic, O(log n) eviction."""


class Engine:
    """Wraps an agent with muscle memory.

    >>> engine = Engine()                       # in memory; Engine("sqlite:///cache.db") persists
    >>> @engine.tool(pre_check=Check.equal(read_page_title))
    ... def click(selector: str): ...
    >>> engine.set_agent(my_agent)
    >>> result = engine("book a room for Ada", params={"name": "Ada"})  # one task for every name
    >>> result.hit, result.output, result.reason

    ``signing_key`` (else ``$MUSCLE_MEM_SIGNING_KEY``): the key, or keys (the first signs, all verify),
    of the HMAC every stored record carries; a record not signed with one of them is never replayed.
    The store is optional to the agent: while it is unavailable, calls are served by the agent,
    uncached. ``store_timeout``: the most seconds one call waits for its store, in total;
    ``store_retry``: the fewest seconds between two probes of a store that is down.
    ``index_size`` (default 100,000) bounds the step index edges kept in the process and
    ``decoded_size`` (default 1,000) the decoded trajectories: a store with a step index (the three of
    this package) is read node by node as replays reach it, so memory does not grow with history.
    ``types``: dataclasses, pydantic models, enums and named tuples whose stored instances may be
    rebuilt before this process has recorded one (decoding never runs their code; see
    :func:`muscle_mem.codec.allow`). Any other class in a stored value stays opaque, so a step
    passing it is not replayed.
    ``write_behind=True`` takes a miss's store write off the caller's path: the trajectory is built
    and checked as the call ends, then written by a background thread, in order; the result says
    ``storing`` (not ``stored``), and :meth:`flush` waits for the writes (a process that dies first
    loses those still queued; the store holds each trajectory whole or not at all).
    ``sync_interval`` (seconds, default 0.5): how far behind the store this process may be. A hit's
    use statistics are written in batches, at most once per trajectory per interval, by a background
    thread (and by :meth:`flush`, :meth:`close` and at interpreter exit; a crash loses the last
    interval's, never a trajectory, which a miss writes at once unless ``write_behind``), and so are
    events. A hit reads nothing from the store while its task has not changed: PostgreSQL notifies
    changes, SQLite's ``data_version`` shows them; where that cannot be told (no listener), a task's
    state is read at most once per interval. 0 writes every hit through and reads the store's revision on every call.
    ``observations`` (default ``"compared"``): after each replayed step, its output is compared with
    what the agent's own runs of that step saw, and the replay goes on only as far as they show the
    agent would (see the README, "How a replay stays sound"); ``"ignored"`` leaves that to the checks
    alone, as before 0.3.0 (for measuring what the comparison costs and saves; not for production).
    ``prices``: per model name, what a million input and a million output tokens cost
    (``{"gpt-4.1": (2.0, 8.0)}``), for :meth:`ledger`; there is no built-in price list.
    ``telemetry=True`` reports each call to OpenTelemetry (spans and metrics, through the API of the
    ``otel`` extra; the application's SDK decides where they go), or pass a
    :class:`muscle_mem.telemetry.Telemetry` made with other providers.
    ``mode`` (see docs/modes.md): ``"replay"`` (the default) replays what is safe and stores the
    agent's runs; ``"shadow"`` always runs the agent, stores its runs, and compares each with what a
    replay would have done (``Result.shadow``, :meth:`shadow_report`); ``"proven"`` replays a task
    family once ``proof`` (default 3) shadow runs agreed with no disagreement since, and shadows it
    until then; ``"frozen"`` replays what is stored and writes nothing (a SQLite URL is opened read
    only).
    ``templates=True``: a task given as one plain text and nothing else may be served by a template
    learned from the agent's own runs (``refund order {1}``), once two runs with different values
    proved it, and only for values its runs showed (see docs/templates.md). Each such run is then
    stored twice: under its text, and under the template its data flow proposes.
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
        self.mode: Mode = check_mode(mode, proof)
        """What the engine does with a task it could replay (see docs/modes.md)."""
        self.proof = proof
        """The shadow agreements a family needs before ``mode="proven"`` replays it."""
        if mode == "frozen" and ttl is not None:
            raise ValueError(
                "mode='frozen' writes nothing, so it cannot expire trajectories: leave ttl unset"
            )
        check_matching(match, similarity, namespace)
        self.prices = check_prices(prices)
        """Per model name, the price of a million input and of a million output tokens (for :meth:`ledger`)."""
        if isinstance(sync_interval, bool) or not (
            isinstance(sync_interval, int | float) and 0 <= sync_interval < math.inf
        ):
            raise ValueError(f"sync_interval must be a finite number of seconds >= 0, got {sync_interval!r}")
        for name, size in (("index_size", index_size), ("decoded_size", decoded_size)):
            if type(size) is not int or size < 1:
                raise ValueError(f"{name} must be a positive int, not {size!r}")
        if observations not in ("compared", "ignored"):
            raise ValueError(f"observations must be 'compared' or 'ignored', not {observations!r}")
        self._compare = observations == "compared"
        check_seconds("store_timeout", store_timeout)
        check_seconds("store_retry", store_retry)
        codec.allow(types)
        self.policy: Policy = make_policy(policy or DEFAULT_POLICY, capacity)
        self.bounds = Bounds(capacity=capacity, max_bytes=max_bytes, ttl=ttl, policy=self.policy)
        self.match: Match = match
        semantic_policy = self.policy.name == "attention-lru" or getattr(self.policy, "semantic", 0.0) > 0.0
        task_embedder = get_embedder(embedder) if embedder or semantic_policy or match == "semantic" else None
        stream = TaskStream(task_embedder) if task_embedder is not None else None
        matcher = TaskMatcher(task_embedder, similarity) if task_embedder and match == "semantic" else None
        self.metrics = Metrics()
        signer = signer_from(signing_key, on_refused=functools.partial(self.metrics.add, "rejected_records"))
        # last: every option is valid (the keys too), nothing is left open; a server that is down is an
        # outage, not an error
        self.store: CoreStore = open_store(
            store, signer=signer, timeout=store_timeout, connect=False, read_only=mode == "frozen"
        )
        self._breaker = Breaker(self.store, self.metrics, timeout=store_timeout, retry=store_retry)
        if not isinstance(store, CoreStore):  # opened here: read it once, so a wrong URL fails now
            try:
                self._breaker.start()
            except BaseException:
                self.store.close()
                raise
        self._waits = not isinstance(self.store, MemoryStore)
        """Whether the store may wait (for a server, a lock): its calls then get a budget; memory never waits."""
        self.journal = Journal(self.store, breaker=self._breaker, behind=sync_interval > 0)
        self._active = ActiveReplays()
        self._cache = TrajectoryCache(
            self.store,
            self.policy,
            self.bounds,
            self.metrics,
            self._active.protected,
            self._breaker,
            stream=stream,
            matcher=matcher,
            namespace=namespace,
            index_size=index_size,
            decoded_size=decoded_size,
            sync_interval=sync_interval,
        )
        if type(templates) is not bool:
            raise TypeError(f"templates must be a bool, not {templates!r}")
        self._templates = (
            TemplateIndex(self.store, self._cache.count, namespace, max(sync_interval, 1.0))
            if templates and match == "exact"
            else None
        )
        if type(write_behind) is not bool:
            raise TypeError(f"write_behind must be a bool, not {write_behind!r}")
        self._writer = Writer() if write_behind else None
        self._outcomes = Outcomes(self._cache, self.metrics, self.journal, self._writer, self._templates)
        if match == "tags":  # the task text does not decide: no miss is a forgotten param
            self._outcomes.near = None
        if telemetry is not False:
            self._outcomes.telemetry = _telemetry(telemetry)
        self._outcomes.frozen = mode == "frozen"
        self._judged = mode in ("shadow", "proven")
        """Whether a call may be a shadow run (checked on every call: one attribute)."""
        self._book = ShadowBook(self.store, sync_interval) if mode == "proven" else None
        self._outcomes.book = self._book
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

    # tool registration

    def tool(
        self,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
        secret_outputs: bool = False,
    ) -> Callable[[F], F]:
        """Decorator instrumenting a function tool.

        ``secret_outputs=True`` marks what it returns as secret (so does returning a :class:`Secret`):
        a later step or the answer may use it by reference, and a trajectory holding it anywhere
        else is not stored.
        """
        return self._decorator(pre_check, post_check, name, version, secret_outputs, is_method=False)

    function = tool

    def method(
        self,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
        secret_outputs: bool = False,
    ) -> Callable[[F], F]:
        """Decorator instrumenting a method tool: ``self`` is not recorded and comes from ``set_context``."""
        return self._decorator(pre_check, post_check, name, version, secret_outputs, is_method=True)

    def _decorator(
        self,
        pre_check: Check[Any] | None,
        post_check: Check[Any] | None,
        name: str | None,
        version: str | None,
        secret_outputs: bool,
        *,
        is_method: bool,
    ) -> Callable[[F], F]:
        checks_given(pre_check, post_check)  # now: ``@engine.tool`` without parentheses is an error
        return lambda fn: self._register(  # type: ignore[return-value]
            fn, name, version, pre_check, post_check, secret_outputs, is_method=is_method
        )

    def register(
        self,
        fn: F,
        *,
        name: str | None = None,
        version: str | None = None,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        output_view: Callable[[Any], Any] | None = None,
        secret_outputs: bool = False,
    ) -> F:
        """Instrument a callable made at run time (for example another framework's tool).

        ``output_view(output)`` is what data flow sees of the tool's output, where the caller gets
        the output itself: JSON held as text parsed into the values that later steps reuse, say.
        ``secret_outputs`` is as for :meth:`tool`.
        """
        return self._register(  # type: ignore[return-value]
            fn, name, version, pre_check, post_check, secret_outputs, is_method=False, output_view=output_view
        )

    def _register(
        self,
        fn: Callable[..., Any],
        name: str | None,
        version: str | None,
        pre_check: Check[Any] | None,
        post_check: Check[Any] | None,
        secret_outputs: bool,
        *,
        is_method: bool,
        output_view: Callable[[Any], Any] | None = None,
    ) -> Callable[..., Any]:
        tool = make_tool(
            fn,
            name,
            version,
            pre_check,
            post_check,
            is_method=is_method,
            output_view=output_view,
            secret_outputs=secret_outputs,
        )
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
        call, scope = self._enter(args, kwargs, tags, params)
        try:
            ending = drive(call.replay, _async_in_sync) if call.replay else call.ending
            if ending.reason is not None:  # a hit has none: no call to redact it
                ending = ending.redacted(call.run)
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
        finally:
            self._exit(call.run, scope)

    async def arun(
        self,
        *args: Any,
        tags: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Result:
        """:meth:`__call__` for async agents and async tools."""
        return await self._arun(args, kwargs, tags, params, self._agent)

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
        return Session(functools.partial(self._arun, args, kwargs, tags, params))

    async def _arun(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
        agent: Callable[..., Any] | None,
    ) -> Result:
        """One async engine call; ``agent`` solves the task if it cannot be replayed."""
        call, scope = self._enter(args, kwargs, tags, params, needs_agent=agent is None)
        try:
            ending = await drive_async(call.replay) if call.replay else call.ending
            if ending.reason is not None:
                ending = ending.redacted(call.run)
            if ending.trajectory is not None:
                return self._outcomes.hit(call, ending)
            agent = self._start_agent(call, agent)
            try:
                output = agent(*args, **kwargs)
                if inspect.isawaitable(output):
                    output = await output
            except BaseException:
                self._outcomes.agent_raised(call, ending)
                raise
            return self._outcomes.miss(call, ending, output)
        finally:
            self._exit(call.run, scope)

    def _enter(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
        *,
        needs_agent: bool = True,
    ) -> tuple[Call, _Scope]:
        """The start of one engine call: its run becomes current in this context until :meth:`_exit`.

        Its store operations wait ``store_timeout`` seconds at most, in total.
        """
        started = time.perf_counter()
        if not self._finalized or (needs_agent and self._agent is None):
            self.finalize() if needs_agent else self._ready()
        spending = budget.start(self._breaker.timeout) if self._waits else None
        try:
            run, replayer, task, ending = self._begin(args, kwargs, tags, params)
        except BaseException:
            if spending is not None:
                budget.stop(spending)
            raise
        token = CURRENT_RUN.set(run)
        shadowing = self._shadowing(run) if task is not None and self._judged else None
        if shadowing is not None:
            call = Call(run, task, None, shadowing, started, shadowed=replayer)
        else:
            call = Call(run, task, replayer.replay(task) if task is not None else None, ending, started)
        return call, (token, spending)

    def _shadowing(self, run: Run) -> Ending | None:
        """Why this call is a shadow run (the agent runs, a replay is compared), or None if it may replay."""
        if self._book is None:
            return _SHADOW_MODE
        try:
            agreed = self._book.streak(run.task_key)
        except Exception:  # the book could not be read: the family is not proven
            logger.exception("could not read the shadow figures of task %r", run.task)
            agreed = 0
        if agreed >= self.proof:
            return None
        return Ending(
            reason=f"proven mode: this task's family has {agreed} of the {self.proof} shadow agreements "
            "(since its last disagreement) it needs to replay, so the agent ran and a replay was compared",
            kind=MissReason.SHADOW,
        )

    def _exit(self, run: Run, scope: _Scope) -> None:
        """The end of one engine call: the context as it was before :meth:`_enter`."""
        token, spending = scope
        try:
            CURRENT_RUN.reset(token)
            self._end(run)
        finally:
            if spending is not None:
                budget.stop(spending)

    def _start_agent(self, call: Call, agent: Callable[..., Any] | None = None) -> Callable[..., Any]:
        agent = agent or self._agent
        assert agent is not None  # checked by finalize() before the call began
        call.run.recording = True
        call.agent_started = time.perf_counter()
        return agent

    def _begin(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: Sequence[str] | None,
        params: Mapping[str, Any] | None,
    ) -> tuple[Run, Replayer, TaskSteps | None, Ending]:
        """The run, its replayer and the task index to replay, or None and the ending that says why not."""
        tag_tuple = checked_tags(tags) if tags is not None else ()
        if params is not None:
            check_params(params)
        plain = plain_params(params) if params else {}
        key, text, unkeyable = self._task_identity(args, kwargs, tag_tuple, params, plain)
        note_sub_task(self, text)
        run = Run(self, text, key, tag_tuple, params or {})
        context = None if self._context is _UNSET else self._context
        replayer = Replayer(self._registry, context, run, plain, self._cache.skipped, compare=self._compare)
        self._active.add(replayer)
        if unkeyable is not None:
            unkeyable = run.redact(unkeyable)
            logger.error("the agent handles task %r uncached: %s", run.task, unkeyable)
            run.problems.append(Problem(NotStoredReason.UNKEYABLE_TASK, unkeyable))
            return run, replayer, None, Ending(reason=unkeyable, kind=MissReason.UNKEYABLE_TASK)
        self._cache.observe(run)
        if (
            self._templates is not None
            and not params
            and not kwargs
            and len(args) == 1
            and type(args[0]) is str
        ):
            run.text = text
        try:
            task = self._cache.lookup(run)
            if run.text is not None and not len(task):
                template = self._templates.find(run.text, tag_tuple) if self._templates is not None else None
                if template is not None:
                    run, replayer = self._template_run(run, template)
                    task = self._cache.lookup(run)
            return run, replayer, task, _GOING_ON
        except StoreUnavailable as exc:  # logged once per outage, by the breaker
            why = f"the store is unavailable: {exc}"
            return run, replayer, None, Ending(reason=why, kind=MissReason.STORE_UNAVAILABLE)
        except Exception as exc:
            self.metrics.add("store_errors")
            logger.exception("store lookup failed; the agent handles this task")
            why = f"the store could not be read: {exc!r}"
            return run, replayer, None, Ending(reason=why, kind=MissReason.STORE_ERROR)

    def _template_run(self, exact: Run, template: Template) -> tuple[Run, Replayer]:
        """The run of a plain-text task served by a template: its slots are its params."""
        self._active.remove(exact)
        params = template.params
        run = Run(self, template.text, template.key, exact.tags, params)
        run.text, run.template, run.relevance = exact.text, template, exact.relevance
        context = None if self._context is _UNSET else self._context
        replayer = Replayer(self._registry, context, run, params, self._cache.skipped, compare=self._compare)
        self._active.add(replayer)
        return run, replayer

    def _task_identity(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tags: tuple[str, ...],
        params: Mapping[str, Any] | None,
        plain: dict[str, Any],
    ) -> tuple[str, str, str | None]:
        """The task's key and text (secrets redacted), or an empty key and why it has none.

        Secret param values and secret-looking texts are redacted from the text.
        """
        secrets = secret_values(params) if params else {}
        problem = None
        try:
            key, text = self._identify(
                args, kwargs, tags, plain, frozenset(secrets) if secrets else _NO_SECRETS
            )
        except codec.CodecError as exc:
            key, text, problem = "", task_text(args, kwargs, plain), str(exc)
        return key, redact(text, secrets), problem  # redact also scrubs secret-looking texts

    def _end(self, run: Run) -> None:
        run.ended = True
        self._active.remove(run)

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


_GOING_ON = Ending()
"""The ending of a call before its replay: none yet (immutable, so one for all calls)."""


_SHADOW_MODE = Ending(
    reason="shadow mode: the agent ran, and what a replay would have done was compared (result.shadow)",
    kind=MissReason.SHADOW,
)

_NO_SECRETS: frozenset[str] = frozenset()


def _telemetry(given: object) -> Telemetry:
    """The engine's OpenTelemetry reporter: ``True`` for the global providers, or the one given."""
    from muscle_mem.telemetry import Telemetry  # the otel extra, imported only when asked for

    if given is True:
        return Telemetry()
    if not isinstance(given, Telemetry):
        raise TypeError(f"telemetry must be a bool or a muscle_mem.telemetry.Telemetry, not {given!r}")
    return given


def _async_in_sync(name: str) -> TypeError:
    return TypeError(f"{name} is async: call the engine with `await engine.arun(...)`")
