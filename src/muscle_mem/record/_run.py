"""The run in progress: records tool calls (turned into a trajectory by :mod:`muscle_mem.record._dataflow`).

Recording is kept cheap on the hot path (a context-variable read, a lock and an insert per call); param
templating and data-flow detection happen once, when the run is stored. What may change in between
is copied at the call: arguments and snapshots that are not plain scalars (deep-copied, once the codec
has said it can store them), and the top two levels of lists and dicts of each output.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import itertools
import logging
import threading
import time
import types
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from muscle_mem.model import codec
from muscle_mem.model._spend import add_usage
from muscle_mem.model.codec import Secret
from muscle_mem.model.trajectory import Step
from muscle_mem.reasons import NotStoredReason, Problem
from muscle_mem.record.tools import Tool
from muscle_mem.result import StepView, step_views
from muscle_mem.secrecy.declared import output_secrets, redact

if TYPE_CHECKING:
    from muscle_mem.model._text_slots import Template
    from muscle_mem.record._task import Task
    from muscle_mem.replay._step_index import TaskSteps

logger = logging.getLogger(__name__)

_RUN_IDS = itertools.count(1)
CURRENT_RUN: ContextVar[Run | None] = ContextVar("muscle_mem_run", default=None)
IN_TOOL: ContextVar[int | None] = ContextVar("muscle_mem_in_tool", default=None)
"""The id of the run whose recorded tool is executing in this context: tools it calls in turn are
part of it, not steps. A context var, so tools run side by side (``asyncio.gather``) are each steps."""
NOT_CAPTURED: Any = object()
MAX_INDEXED_PER_OUTPUT = 512
"""Items of an output copied for (and searched by) data-flow detection."""


def current_run() -> RunView | None:
    """What the agent may read of the run in progress in this context, or None outside a run.

    The context is the thread or asyncio task.
    """
    run = CURRENT_RUN.get()
    return RunView(run) if run is not None else None


class RunView:
    """A read-only view of a run: the task, its tags and params, the steps done so far.

    The agent reports what its model calls spent with :meth:`add_usage` (the framework
    integrations do it for their agents), or adds bare token counts (``current_run().tokens += n``).
    """

    __slots__ = ("_run",)

    def __init__(self, run: Run) -> None:
        self._run = run

    @property
    def task(self) -> str:
        """The task as text, params shown as ``{name}``."""
        return self._run.task

    @property
    def tags(self) -> tuple[str, ...]:
        return self._run.tags

    @property
    def params(self) -> Mapping[str, Any]:
        """The params of the call (a :class:`~muscle_mem.Secret` stays wrapped)."""
        return types.MappingProxyType(self._run.params)

    @property
    def steps(self) -> tuple[StepView, ...]:
        """The steps done so far, replayed ones included, in order."""
        return self._run.step_views()

    @property
    def engine(self) -> object:
        """The engine whose run this is."""
        return self._run.owner

    @property
    def tokens(self) -> int:
        """LLM tokens the agent reported spending on this run."""
        return self._run.tokens

    @tokens.setter
    def tokens(self, value: int) -> None:
        self._run.tokens = value

    def add_usage(
        self, input_tokens: int, output_tokens: int, *, requests: int = 1, model: str | None = None
    ) -> None:
        """Report model calls the agent made for this run: tokens in and out, requests, the model's name.

        They add to :attr:`tokens`, and to the run's usage by model, which prices it in the ledger.
        """
        run = self._run
        if run.usage is None:
            run.usage = {}
        add_usage(run.usage, model, input_tokens, output_tokens, requests)
        run.tokens += input_tokens + output_tokens

    def refuse(self, why: str) -> None:
        """Keep this run out of the store, saying why (a step it made cannot be replayed, say).

        It applies to what the agent records; a replayed step is already stored.
        """
        run = self._run
        if run.recording and not run.ended:
            run.problems.append(Problem(NotStoredReason.REFUSED, run.redact(why)))

    def __repr__(self) -> str:
        return f"RunView(task={self.task!r}, tags={self.tags!r}, steps={len(self._run.calls)})"


class Call(NamedTuple):
    """One tool call of a run, replayed by the engine or made by the agent.

    A named tuple: made in one C call (``tuple.__new__(Call, fields)`` on the replay path), where a
    dataclass's ``__init__`` sets twelve fields one by one; it is not changed once made.
    """

    tool: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    output: Any
    replayed: bool
    seconds: float = 0.0
    pre: Any = NOT_CAPTURED
    post: Any = NOT_CAPTURED
    step: Step | None = None
    """For a replayed call: the stored step (its arguments as recorded, with references)."""
    tool_ref: Tool | None = None
    order: int = 0
    """When the call started, among the agent's calls of the run (0 for a replayed call)."""
    returned: Any = None
    """The output as the caller got it (``output`` is what data flow sees: the tool's ``output_view``)."""

    def __repr__(self) -> str:
        return (
            f"Call(tool={self.tool!r}, args={self.args!r}, kwargs={self.kwargs!r}, output={self.output!r}, "
            f"replayed={self.replayed!r}, seconds={self.seconds!r})"
        )


@dataclass(eq=False, slots=True)
class Flight:
    """A tool call of a run in progress: its place among the run's calls, and where it came from."""

    order: int
    tool: str
    adopted: bool
    """Made from a thread without the run in its context (attributed to the run's engine's only run)."""


class Run:
    """A task being solved: what the engine replayed and what the agent did, in order."""

    __slots__ = (
        "_lock",
        "_orders",
        "calls",
        "ended",
        "id",
        "in_flight",
        "in_parent_tool",
        "late",
        "owner",
        "params",
        "parent",
        "problems",
        "recording",
        "relevance",
        "sealed",
        "secret_outputs",
        "secrets",
        "similar",
        "stored_id",
        "tags",
        "task",
        "task_key",
        "template",
        "text",
        "tokens",
        "usage",
    )

    def __init__(self, owner: object, task: Task) -> None:
        self.id = next(_RUN_IDS)
        self.owner = owner
        self.task = task.text
        self.task_key = task.key
        self.tags = task.tags
        self.params = dict(task.params) if task.params else {}
        self.calls: list[Call] = []
        self.recording = False
        self.tokens = 0
        """LLM tokens the agent spent on this run; an agent adds them: ``current_run().tokens += n``."""
        self.usage: dict[str, list[int]] | None = None
        """Per model name: the input tokens, output tokens and requests reported (:meth:`RunView.add_usage`);
        None before the first report (a hit makes no dict)."""
        self.relevance = 1.0
        """How relevant the task is to the recent task stream (for eviction policies), in [0, 1]."""
        self.problems: list[str] = []
        """Why this run cannot be stored (an unserializable value, a capture that raised)."""
        self.secrets = task.secrets
        """The plain values of the secret params, to keep out of every message."""
        self.secret_outputs: dict[str, Any] = {}
        """The values inside secret tool outputs (see :func:`secrecy.output_secrets`), by name."""
        self.in_flight: set[Flight] = set()
        """Tool calls started and not finished (a task or a worker the agent did not wait for)."""
        self.sealed = False
        """The agent returned: a call starting now is too late to be part of the run."""
        self.late: str | None = None
        """The first tool called after the agent returned (a trajectory stored for the run misses it)."""
        self._lock = threading.Lock()
        self._orders = itertools.count(1)
        self.ended = False
        self.parent: Run | None = CURRENT_RUN.get()
        """The run in progress when this one started (another engine's, when an agent hands a task on)."""
        self.in_parent_tool = self.parent is not None and IN_TOOL.get() == self.parent.id
        """Whether this run started inside a tool call the parent run records (so it is part of it)."""
        self.stored_id: str | None = None
        """The trajectory this run was stored as, once it ended."""
        self.similar: TaskSteps | None = None
        """A stored task semantic matching found similar: a candidate the agent's run is compared with."""
        self.text: str | None = task.whole_text
        """The task as plain text, when it came as one with nothing else (a template may be learned from it)."""
        self.template: Template | None = None
        """The template this run follows, if a template served it."""

    def start(self, tool: str) -> Flight | None:
        """A call made in the run's context begins (None, the problem noted, if the agent returned)."""
        with self._lock:
            if not self.sealed:
                flight = Flight(next(self._orders), tool, False)
                self.in_flight.add(flight)
                return flight
            return self._take_off(tool, adopted=False)

    def adopt(self, tool: str) -> Flight | None:
        """A call from a thread without the run in its context begins, if it can only be the agent's.

        None when the agent is not running, and the run is made unstorable when the call may be
        the agent's but also part of a tool call made in the run's context that is running now.
        """
        with self._lock:
            if not self.recording or self.ended:
                return None
            running = next((f.tool for f in self.in_flight if not f.adopted), None)
            if running is not None and not self.sealed:
                self.problems.append(
                    Problem(
                        NotStoredReason.CALL_OUTSIDE_RUN,
                        f"tool {tool!r} was called from a thread without the run's context while the run's "
                        f"call of tool {running!r} was running (it may be part of that call); submit it "
                        "with contextvars.copy_context().run to record it",
                    )
                )
                return None
            return self._take_off(tool, adopted=True)

    def _take_off(self, tool: str, *, adopted: bool) -> Flight | None:
        if self.sealed:
            self.problems.append(
                Problem(
                    NotStoredReason.CALLED_AFTER_RUN, f"tool {tool!r} was called after the agent returned"
                )
            )
            self.late = self.late or tool
            return None
        flight = Flight(next(self._orders), tool, adopted)
        self.in_flight.add(flight)
        return flight

    def seal(self) -> int:
        """The agent returned: later calls are not part of the run; the number of calls still running."""
        with self._lock:
            self.sealed = True
            return len(self.in_flight)

    def unattributable(self, why: str) -> None:
        """A call made outside the run's context that may be the agent's: the run cannot be stored."""
        with self._lock:
            if self.recording and not self.sealed and not self.ended:
                self.problems.append(Problem(NotStoredReason.CALL_OUTSIDE_RUN, why))

    def _land(self, flight: Flight, call: Call | None) -> None:
        """A call ends: recorded (``call``, made with the flight's order) in the order calls started, or not."""
        with self._lock:
            self.in_flight.discard(flight)
            if call is None:
                return
            at = len(self.calls)
            while at and self.calls[at - 1].order > call.order:
                at -= 1
            self.calls.insert(at, call)

    def redact(self, text: str) -> str:
        """``text`` with this run's secret values replaced by their names, and secret-looking texts redacted."""
        return redact(text, self.hidden())

    def hidden(self) -> dict[str, Any]:
        """Every value this run keeps out of the store and of messages: secret params and outputs."""
        if not self.secret_outputs:
            return self.secrets
        with self._lock:
            return {**self.secrets, **self.secret_outputs}

    def secret_output(self, tool: Tool, output: Any) -> Any:
        """A secret tool output as the run keeps it (:func:`kept`), its values noted as secrets.

        A :class:`~muscle_mem.Secret` output is kept as its plain value, which later steps refer to.
        """
        plain = output.get() if isinstance(output, codec.Secret) else output
        try:
            values = output_secrets(plain)
        except Exception as exc:  # a live object that cannot be walked: its secrets are unknown
            values = []
            self.problems.append(
                Problem(
                    NotStoredReason.SECRET_LEAK,
                    f"the secret output of tool {tool.name!r} cannot be read through ({type(exc).__name__})",
                )
            )
        with self._lock:
            known = set(self.secret_outputs.values())
            for value in values:
                if value not in known:
                    name = f"output of {tool.name}"
                    if name in self.secret_outputs:  # the count makes it unique: it only grows
                        name += f" ({len(self.secret_outputs) + 1})"
                    self.secret_outputs[name] = value
        return kept(plain)

    @property
    def steps(self) -> list[Call]:
        """The steps done so far, replayed ones included."""
        return list(self.calls)

    def step_views(self) -> tuple[StepView, ...]:
        """The steps done so far as the agent and the caller see them, in order."""
        return step_views(self.calls)

    def _not_captured(self, reason: NotStoredReason, why: str) -> Any:
        """Note why the run cannot be stored (redacted); returns NOT_CAPTURED for what was not kept."""
        self.problems.append(Problem(reason, self.redact(why)))
        return NOT_CAPTURED

    def _kept_snapshot(self, tool: Tool, which: str, value: Any) -> Any:
        """A frozen copy of what a Check captured (NOT_CAPTURED, the problem noted, if unstorable)."""
        try:
            return frozen(value)
        except codec.CodecError as exc:
            return self._not_captured(
                NotStoredReason.UNSTORABLE_VALUE,
                f"{which}-check snapshot of tool {tool.name!r} cannot be stored: {exc}",
            )

    def _capture(self, tool: Tool, which: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        check = tool.pre_check if which == "pre" else tool.post_check
        if check is None:
            return NOT_CAPTURED
        try:
            value = check.capture(*args, **kwargs)
        except Exception as exc:
            return self._not_captured(
                NotStoredReason.CHECK_CAPTURE_FAILED,
                f"{which}-check capture of tool {tool.name!r} raised {exc!r}",
            )
        if inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()
            return self._not_captured(
                NotStoredReason.CHECK_CAPTURE_FAILED,
                f"{which}-check capture of sync tool {tool.name!r} returned an awaitable: make the tool "
                "async, or the capture sync",
            )
        return self._kept_snapshot(tool, which, value)

    async def _capture_async(
        self, tool: Tool, which: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        check = tool.pre_check if which == "pre" else tool.post_check
        if check is None:
            return NOT_CAPTURED
        try:
            value = check.capture(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            return self._not_captured(
                NotStoredReason.CHECK_CAPTURE_FAILED,
                f"{which}-check capture of tool {tool.name!r} raised {exc!r}",
            )
        return self._kept_snapshot(tool, which, value)

    def _arguments(
        self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The recorded arguments (``self`` left out), frozen before the call can change them."""
        recorded = args[1:] if tool.is_method else args
        if self.problems:  # this run will not be stored: no need to copy
            return recorded, kwargs
        try:
            return _frozen_all(recorded), {k: frozen(v) for k, v in kwargs.items()} if kwargs else kwargs
        except codec.CodecError:
            names = tool.parameter_names(len(recorded), tuple(kwargs))
            for name, value in zip(names, (*recorded, *kwargs.values()), strict=True):
                try:
                    frozen(value)
                except codec.CodecError as exc:
                    self.problems.append(
                        Problem(
                            NotStoredReason.UNSTORABLE_VALUE,
                            f"step {len(self.calls)} (tool {tool.name!r}) argument {name!r}: {exc}",
                        )
                    )
                    break
            return recorded, kwargs

    def _recorded(
        self,
        tool: Tool,
        flight: Flight,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        out: Any,
        seconds: float,
        pre: Any,
        post: Any,
    ) -> Call:
        """The record of a call that returned ``out``."""
        seen = self._seen(tool, out)
        returned = out if tool.output_view is not None else seen
        return Call(
            tool.name, args, kwargs, seen, False, seconds, pre, post, None, tool, flight.order, returned
        )

    def seen(self, tool: Tool, out: Any) -> Any:
        """The output as data flow sees it: a frozen copy of its ``output_view``; a secret one's values noted.

        Raises what the tool's ``output_view`` raises.
        """
        secret = tool.secret_outputs or type(out) is Secret
        if tool.output_view is not None:
            out = tool.output_view(out.get() if type(out) is Secret else out)
        return self.secret_output(tool, out) if secret else kept(out)

    def _seen(self, tool: Tool, out: Any) -> Any:
        """:meth:`seen` at recording: a view that raises makes the run unstorable."""
        try:
            return self.seen(tool, out)
        except Exception as exc:
            return self._not_captured(
                NotStoredReason.UNSTORABLE_VALUE, f"output_view of tool {tool.name!r} raised {exc!r}"
            )

    def record(self, tool: Tool, flight: Flight, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a tool on the agent's behalf and record the call (a call that raises is not recorded)."""
        call = None
        run_token = CURRENT_RUN.set(self) if flight.adopted else None
        tool_token = IN_TOOL.set(self.id)
        try:
            call_args, call_kwargs = self._arguments(tool, args, kwargs)
            pre = self._capture(tool, "pre", args, kwargs)
            start = time.perf_counter()
            out = tool.fn(*args, **kwargs)
            seconds = time.perf_counter() - start
            post = self._capture(tool, "post", args, kwargs)
            call = self._recorded(tool, flight, call_args, call_kwargs, out, seconds, pre, post)
            return out
        finally:
            IN_TOOL.reset(tool_token)
            if run_token is not None:
                CURRENT_RUN.reset(run_token)
            self._land(flight, call)

    async def record_async(
        self, tool: Tool, flight: Flight, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """:meth:`record` for an async tool."""
        call = None
        run_token = CURRENT_RUN.set(self) if flight.adopted else None
        tool_token = IN_TOOL.set(self.id)
        try:
            call_args, call_kwargs = self._arguments(tool, args, kwargs)
            pre = await self._capture_async(tool, "pre", args, kwargs)
            start = time.perf_counter()
            out = await tool.fn(*args, **kwargs)
            seconds = time.perf_counter() - start
            post = await self._capture_async(tool, "post", args, kwargs)
            call = self._recorded(tool, flight, call_args, call_kwargs, out, seconds, pre, post)
            return out
        finally:
            IN_TOOL.reset(tool_token)
            if run_token is not None:
                CURRENT_RUN.reset(run_token)
            self._land(flight, call)

    def __repr__(self) -> str:
        return f"Run(task={self.task!r}, tags={self.tags!r}, steps={len(self.calls)})"


_SCALARS = frozenset({str, int, float, bool, type(None), bytes})


def frozen(value: Any) -> Any:
    """A deep copy of a value to record, so that changing it later does not change the record.

    Raises :class:`codec.CodecError` if the value cannot be stored; that is checked first, so a live
    handle (a connection, a browser page) is never walked.
    """
    if type(value) in _SCALARS:
        return value
    copied = _plain_copy(value, PLAIN_COPY_DEPTH)
    if copied is not _NOT_PLAIN:
        return copied
    data = codec.encode(value)
    if type(data) is str:
        return data  # a str subclass the codec stores as text (LangChain's TextAccessor)
    try:
        return copy.deepcopy(value)
    except Exception:
        return codec.decode(data)


PLAIN_COPY_DEPTH = 16
"""How deep :func:`frozen` copies plain data itself (dicts with text keys, lists, scalars) before the codec does."""
_NOT_PLAIN = object()
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_copy(value: Any, depth: int) -> Any:
    """A copy of plain data (dicts with text keys, lists, scalars that are exactly those types), else _NOT_PLAIN.

    What tools return most often, copied in one walk: such data is always storable, so neither the
    codec's check nor a generic deep copy is needed for it.
    """
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return value
    if depth <= 0 or (kind in (dict, list) and len(value) > codec.MAX_ITEMS):
        return _NOT_PLAIN  # the codec says why such a value cannot be stored, or copies it
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return _NOT_PLAIN
            inner = item if type(item) in _PLAIN_SCALARS else _plain_copy(item, depth - 1)
            if inner is _NOT_PLAIN:
                return _NOT_PLAIN
            copied[key] = inner
        return copied
    if kind is list:
        items = []
        for item in value:
            inner = item if type(item) in _PLAIN_SCALARS else _plain_copy(item, depth - 1)
            if inner is _NOT_PLAIN:
                return _NOT_PLAIN
            items.append(inner)
        return items
    return _NOT_PLAIN


def _frozen_all(values: tuple[Any, ...]) -> tuple[Any, ...]:
    for value in values:
        if type(value) not in _SCALARS:
            return tuple(frozen(v) for v in values)
    return values


def _shallow(value: Any) -> Any:
    kind = type(value)
    return list(value) if kind is list else dict(value) if kind is dict else value


def kept(output: Any) -> Any:
    """A tool output as data-flow detection will see it.

    It is a deep copy: the agent changing a list inside it later must not move or hide a reference
    (data flow fingerprints values three levels deep). An output the codec cannot store has its
    lists, tuples and dicts copied two levels deep (the first 512 items) instead. The output
    returned to the agent is the original.
    """
    if type(output) in _SCALARS:
        return output
    try:
        return frozen(output)
    except codec.CodecError:
        pass
    kind = type(output)
    if kind is dict:
        copied = dict(output)
        for key in itertools.islice(output, MAX_INDEXED_PER_OUTPUT):
            copied[key] = _shallow(copied[key])
        return copied
    if kind is list or kind is tuple:
        head = [_shallow(v) for v in output[:MAX_INDEXED_PER_OUTPUT]]
        head += output[MAX_INDEXED_PER_OUTPUT:]
        return head if kind is list else tuple(head)
    return output


def instrument(
    tool: Tool,
    owner: object,
    stray: Callable[[str, Run], None],
    in_progress: Callable[[], list[Run]],
) -> Callable[..., Any]:
    """Wrap ``tool.fn`` so that calls inside a run of ``owner`` are recorded; elsewhere it just runs.

    A call from a thread without a run in its context (a worker of a thread pool) belongs to the
    run of ``owner`` in progress when there is one only (``in_progress()`` lists them); with two or
    more it could be any of them, so none records it and none is stored. ``stray(name, run)`` hears
    of a call made after the agent of its run returned (a task or a thread it did not wait for).
    """
    fn = tool.fn
    if tool.is_async:

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            found = _recording(owner, tool, stray, in_progress)
            if found is None:
                return await fn(*args, **kwargs)
            return await found[0].record_async(tool, found[1], args, kwargs)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        found = _recording(owner, tool, stray, in_progress)
        if found is None:
            return fn(*args, **kwargs)
        return found[0].record(tool, found[1], args, kwargs)

    return wrapper


def _recording(
    owner: object, tool: Tool, stray: Callable[[str, Run], None], in_progress: Callable[[], list[Run]]
) -> tuple[Run, Flight] | None:
    """The run that records this call and the call's flight, if any (not a call inside a recorded tool)."""
    run = CURRENT_RUN.get()
    if run is None:
        return _adopted(tool, stray, in_progress())
    if run.owner is not owner:
        if not tool.foreign_call_noted:
            tool.foreign_call_noted = True
            logger.warning(
                "tool %r belongs to another engine than the run it was called in (task %r): that run does "
                "not record it, and a replay of it will not make the call",
                tool.name,
                run.task,
            )
        _outer_misses(run, owner, tool)
        return None
    if run.ended:
        stray(tool.name, run)
        return None
    if not run.recording or IN_TOOL.get() == run.id:
        return None
    flight = run.start(tool.name)
    if flight is None:
        stray(tool.name, run)
        return None
    return run, flight


def _adopted(tool: Tool, stray: Callable[[str, Run], None], runs: list[Run]) -> tuple[Run, Flight] | None:
    """The run a call from a thread without a run in its context belongs to: the only one in progress.

    A call from an asyncio task is never adopted: a task made inside the run would carry its
    context, so this one was made outside it, and may or may not work for the agent.
    """
    if not runs:
        return None
    in_task = _in_asyncio_task()
    if len(runs) > 1 or in_task:
        where = "an asyncio task" if in_task else "a thread"
        for run in runs:
            run.unattributable(
                f"tool {tool.name!r} was called from {where} without a run in its context while "
                f"{_runs(len(runs))} in progress: whether it is this run's cannot be told, so it is not "
                "recorded and the run is not stored (make the call in the run's context: create the task "
                "inside the run, or submit it with contextvars.copy_context().run)"
            )
        return None
    run = runs[0]
    flight = run.adopt(tool.name)
    if flight is None:
        if run.sealed:
            stray(tool.name, run)
        return None
    return run, flight


def _runs(count: int) -> str:
    return "1 run of the engine was" if count == 1 else f"{count} runs of the engine were"


def _in_asyncio_task() -> bool:
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no event loop runs in this thread
        return False


def _outer_misses(run: Run, owner: object, tool: Tool) -> None:
    """A tool of ``owner`` called inside another engine's run: the run of ``owner`` that handed the
    task on (if it is recording, outside a tool call) misses the call, so it is not stored."""
    outer: Run | None = run
    while outer is not None and outer.owner is not owner:
        if outer.in_parent_tool:
            return  # inside a tool call a run records: part of that step
        outer = outer.parent
    if outer is not None and outer.recording and not outer.ended and IN_TOOL.get() != outer.id:
        outer.problems.append(
            Problem(
                NotStoredReason.FOREIGN_RUN,
                f"tool {tool.name!r} was called inside another engine's run (a task handed on); this "
                "trajectory would miss it",
            )
        )


def note_sub_task(owner: object, text: str) -> None:
    """A task handed to ``owner`` inside one of its recording runs: that run misses its steps."""
    outer = CURRENT_RUN.get()
    if outer is not None and outer.owner is owner and outer.recording and IN_TOOL.get() != outer.id:
        outer.problems.append(
            Problem(
                NotStoredReason.SUB_TASK,
                f"the agent handed the sub-task {text!r} to the engine inside the run; its steps are "
                "not part of this trajectory",
            )
        )
