"""The run in progress: records tool calls (turned into a trajectory by :mod:`muscle_mem.record._dataflow`).

Recording is kept cheap on the hot path (a context-variable read, a lock and an insert per call); param
templating and data-flow detection happen once, when the run is stored. What may change in between
is copied at the call: arguments and snapshots that are not plain scalars (deep-copied, once the codec
has said it can store them), and the top two levels of lists and dicts of each output.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from muscle_mem.model import codec
from muscle_mem.model.codec import Secret
from muscle_mem.model.trajectory import Step
from muscle_mem.reasons import NotStoredReason, Problem
from muscle_mem.record._call_copies import frozen, frozen_all, kept
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
        "decided",
        "ended",
        "held",
        "id",
        "in_flight",
        "in_parent_tool",
        "late",
        "owner",
        "params",
        "parent",
        "problems",
        "raised",
        "recording",
        "relevance",
        "replaying",
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
        "turn_seen",
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
        self.held: tuple[str, tuple[Any, ...], dict[str, Any], Exception] | None = None
        """A replayed call that raised: the agent's next call raises it again if it is that call (:meth:`hold`)."""
        self.raised: tuple[tuple[int, str, tuple[Any, ...], dict[str, Any]], ...] = ()
        """The agent's calls that raised: their order among its calls, the tool and its recorded arguments
        (a tuple, made anew on the rare raise: a hit makes none)."""
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
        self.turn_seen: int | None = None
        """How many calls the run had made when the agent's model turn in progress began (None: the
        front end does not tell turns apart); see :meth:`begin_turn`."""
        self.decided: dict[int, int] | None = None
        """For each call the agent made in a model turn (by its order), the calls made before that turn."""
        self.replaying: Step | None = None
        """The stored step the replay is making now, or made last."""

    def begin_turn(self) -> None:
        """The agent's model begins a turn: the calls it makes next were decided on what the run saw so far.

        A front end that reads the model's turns says so before each one; several calls of one turn
        are decided together, so a replay judges them on what was seen before the turn, and none of
        them is rebuilt from another's output.
        """
        with self._lock:
            self.turn_seen = len(self.calls)

    def start(self, tool: str) -> Flight | None:
        """A call made in the run's context begins (None, the problem noted, if the agent returned)."""
        with self._lock:
            if not self.sealed:
                return self._flight(tool, adopted=False)
            return self._take_off(tool, adopted=False)

    def _flight(self, tool: str, *, adopted: bool) -> Flight:
        """A call that begins now, in flight, with the model turn it was decided in (under the lock)."""
        flight = Flight(next(self._orders), tool, adopted)
        self.in_flight.add(flight)
        seen = self.turn_seen
        if seen is not None:
            if self.decided is None:
                self.decided = {}
            self.decided[flight.order] = seen
        return flight

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
        return self._flight(tool, adopted=adopted)

    def seal(self) -> int:
        """The agent returned: later calls are not part of the run; the number of calls still running."""
        with self._lock:
            self.sealed = True
            if self.raised:
                self._judge_raised()
            return len(self.in_flight)

    def _judge_raised(self) -> None:
        """Refuse the run if the agent went on from a tool call that raised other than by making it again.

        The exception was what the agent saw, and a replay cannot see it: a trajectory without the call
        would replay what the agent did after the failure when the call now succeeds (a payment
        declined, then "declined" mailed to a customer who can pay). A call made again at once with
        the same arguments (a retry) is stored as the call that returned: a replay makes it, and
        stops if it raises.
        """
        for order, tool, args, kwargs in self.raised:
            after = next((c for c in self.calls if c.order > order), None)
            if after is None or after.tool != tool or not _same_arguments(after, args, kwargs):
                what_next = "returned" if after is None else f"called {after.tool!r}"
                self.problems.append(
                    Problem(
                        NotStoredReason.TOOL_RAISED,
                        f"tool {tool!r} raised and the agent then {what_next} instead of calling it again: "
                        "what it did rests on the exception, which a replay cannot see",
                    )
                )
                return

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
        return step_views(self.calls, self.decided_at)

    def replays_a_turn(self) -> bool:
        """Whether the call the replay is making now begins a model turn (or turns are not told apart)."""
        step = self.replaying
        return step is None or step.decided_at is None or step.decided_at >= len(self.calls)

    def decided_at(self, call: Call) -> int | None:
        """How many calls came before the model turn that made ``call`` (None: turns not told apart)."""
        if call.step is not None:
            return call.step.decided_at
        return self.decided.get(call.order) if self.decided is not None else None

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
            return frozen_all(recorded), {k: frozen(v) for k, v in kwargs.items()} if kwargs else kwargs
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

    def hold(self, tool: str, args: tuple[Any, ...], kwargs: dict[str, Any], error: Exception) -> None:
        """Keep a replayed call that raised for the agent that takes over.

        The tool has run once, as it did for the agent alone, which then got the exception. The
        agent taking over makes that call again (it did not see it): its next call, if it is that
        one with the same arguments, raises the exception without running the tool a second time (a
        mail a timeout followed is not sent twice). Any other next call forgets it.
        """
        self.held = (tool, args, kwargs, error)

    def _raise_held(self, tool: Tool, flight: Flight, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Raise the held exception if this is the held call (see :meth:`hold`); forget it either way."""
        held, self.held = self.held, None
        if held is None or held[0] != tool.name:
            return
        try:
            same = held[1] == args and held[2] == kwargs
        except Exception:  # arguments that cannot be compared are not the same call
            return
        if same is True:
            call_args, call_kwargs = self._arguments(tool, args, kwargs)
            self._note_raised(flight, tool, call_args, call_kwargs)
            raise held[3]

    def record(self, tool: Tool, flight: Flight, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a tool on the agent's behalf and record the call (a call that raises is not recorded)."""
        call = None
        run_token = CURRENT_RUN.set(self) if flight.adopted else None
        tool_token = IN_TOOL.set(self.id)
        try:
            if self.held is not None:
                self._raise_held(tool, flight, args, kwargs)
            call_args, call_kwargs = self._arguments(tool, args, kwargs)
            pre = self._capture(tool, "pre", args, kwargs)
            start = time.perf_counter()
            try:
                out = tool.fn(*args, **kwargs)
            except BaseException:
                self._note_raised(flight, tool, call_args, call_kwargs)
                raise
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
            if self.held is not None:
                self._raise_held(tool, flight, args, kwargs)
            call_args, call_kwargs = self._arguments(tool, args, kwargs)
            pre = await self._capture_async(tool, "pre", args, kwargs)
            start = time.perf_counter()
            try:
                out = await tool.fn(*args, **kwargs)
            except BaseException:
                self._note_raised(flight, tool, call_args, call_kwargs)
                raise
            seconds = time.perf_counter() - start
            post = await self._capture_async(tool, "post", args, kwargs)
            call = self._recorded(tool, flight, call_args, call_kwargs, out, seconds, pre, post)
            return out
        finally:
            IN_TOOL.reset(tool_token)
            if run_token is not None:
                CURRENT_RUN.reset(run_token)
            self._land(flight, call)

    def _note_raised(self, flight: Flight, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """The agent's call raised (judged when the agent returns: see :meth:`_judge_raised`)."""
        with self._lock:
            self.raised = (*self.raised, (flight.order, tool.name, args, kwargs))

    def __repr__(self) -> str:
        return f"Run(task={self.task!r}, tags={self.tags!r}, steps={len(self.calls)})"


def _same_arguments(call: Call, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a recorded call was made with these recorded arguments (a value that cannot tell: not)."""
    try:
        return bool(call.args == args and call.kwargs == kwargs)
    except Exception:
        return False
