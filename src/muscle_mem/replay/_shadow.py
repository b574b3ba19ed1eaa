"""Shadow judging: what a replay would have done in an agent's run, compared with what the agent did.

The replay is driven over the agent's recorded calls instead of the world: where it would call a
tool, its call is compared with the agent's call at that step (same tool, same arguments); where
they agree, it is given the agent's output and goes on, as a replay seeing that output would. A
pre- or post-check capture is answered with what the agent's call captured. A capture the agent's
run cannot answer (a check of a call the agent did not make at that step) is treated as raised,
and a run that needed one is never counted as an agreement: what that check would have seen is not
known.
"""

from __future__ import annotations

import copy as copy_module
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from muscle_mem.cache.shadow_report import ShadowBook
from muscle_mem.check import Check
from muscle_mem.model import codec
from muscle_mem.model.verdict import Shadow, Verdict
from muscle_mem.reasons import MissReason
from muscle_mem.record._run import NOT_CAPTURED, Call, Run
from muscle_mem.record._task import Task
from muscle_mem.record.tools import Tool, ToolRegistry
from muscle_mem.replay._drivers import Ending, drive
from muscle_mem.replay._replayer import Replayer
from muscle_mem.replay._step_index import TaskSteps
from muscle_mem.secrecy.patterns import scrub

logger = logging.getLogger(__name__)

MAX_CALL_TEXT = 300
"""The most characters of a call's text kept in a verdict (and in its event)."""

_SHADOW_MODE = Ending(
    reason="shadow mode: the agent ran, and what a replay would have done was compared (result.shadow)",
    kind=MissReason.SHADOW,
)


def shadow_reason(
    book: ShadowBook | None, proof: int, run: Run, related: Sequence[str] = ()
) -> Ending | None:
    """Why a call is a shadow run (the agent runs, a replay is compared), or None if it may replay.

    ``book``: the shadow figures ``mode="proven"`` reads (None in shadow mode: every call is one).
    ``related``: the other families the task counts in (the template its text follows): it replays
    only when each of them is proven too, so a disagreement of the same task under another key counts.
    """
    if book is None:
        return _SHADOW_MODE
    try:
        agreed = min(book.streak(key) for key in (run.task_key, *related))
    except Exception:  # the book could not be read: the family is not proven
        logger.exception("could not read the shadow figures of task %r", run.task)
        agreed = 0
    if agreed >= proof:
        return None
    return Ending(
        reason=f"proven mode: this task's family has {agreed} of the {proof} shadow agreements "
        "(since its last disagreement) it needs to replay, so the agent ran and a replay was compared",
        kind=MissReason.SHADOW,
    )


def judge(replayer: Replayer, task: TaskSteps, run: Run, answer: Any) -> Shadow:
    """How a replay of ``task`` would have compared with the agent's ``run`` and its ``answer``.

    ``replayer`` is the engine call's (its params, context and comparison are the replay's); the
    texts of the verdict are redacted of the run's secrets.
    """
    calls = tuple(run.calls)
    twin = Run(run.owner, Task(run.task_key, run.task, run.tags, run.params, replayer.params, run.secrets))
    tools = RecordedTools(replayer.registry.by_name, twin, calls)
    replayer = Replayer(tools, replayer.context, twin, replayer.params, compare=replayer.compare)
    try:
        ending = drive(replayer.replay(task), _async_capture)
    except _Parted as parted:
        return _redacted(parted.shadow, run)
    if tools.parted is not None:  # a check of a call the agent did not make: the replay may have made it
        return _redacted(tools.parted, run)
    step = len(replayer.run.calls)
    if ending.trajectory is None:
        why = ending.reason or "the replay would have stopped"
        return Shadow(Verdict.MISSED, step, reason=run.redact(why))
    if step < len(calls):
        return _redacted(Shadow(Verdict.DISAGREED, step, "the answer", _call_text(calls[step])), run)
    if not _same(ending.answer, answer):
        expected, actual = f"answer {_short(ending.answer)}", f"answer {_short(answer)}"
        return _redacted(Shadow(Verdict.DISAGREED, step, expected, actual), run)
    if tools.unknown is not None:
        step, why = tools.unknown
        return Shadow(Verdict.MISSED, step, reason=why)
    return Shadow(Verdict.AGREED)


class RecordedTools(ToolRegistry):
    """A tool registry for a shadow replay: each tool's body and captures answered by the agent's calls."""

    def __init__(self, tools: Mapping[str, Tool], run: Run, calls: Sequence[Call]) -> None:
        super().__init__()
        self.run = run
        """The shadow replay's run: its calls so far are the steps that agreed."""
        self.calls = calls
        """The agent's calls, in order."""
        self.unknown: tuple[int, str] | None = None
        """The first step with a capture the agent's calls cannot answer, and why."""
        self.parted: Shadow | None = None
        """The first check of a call the agent did not make at that step: had it passed (nothing in the
        agent's run says it would not), the replay would have parted from the agent there."""
        for tool in tools.values():
            self.add(self._shadowed(tool))

    def _shadowed(self, tool: Tool) -> Tool:
        """A copy of ``tool`` whose body and checks' captures ask the agent's calls instead of the world."""

        def body(*args: Any, **kwargs: Any) -> Any:
            return self._body(tool, args, kwargs)

        return dataclasses.replace(
            tool,
            fn=body,
            pre_check=self._check(tool, tool.pre_check, post=False),
            post_check=self._check(tool, tool.post_check, post=True),
        )

    def _check(self, tool: Tool, check: Check[Any] | None, *, post: bool) -> Check[Any] | None:
        if check is None:
            return None
        copy = copy_module.copy(check)

        def capture(*args: Any, **kwargs: Any) -> Any:
            return self._capture(tool, args, kwargs, post=post)

        copy.capture = copy.plain_capture = capture
        return copy

    def _body(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The agent's output where its call is the replay's; else the replay and the agent parted."""
        step = len(self.run.calls)
        args = args[1:] if tool.is_method else args
        expected = _text(tool.name, args, kwargs)
        if step >= len(self.calls):
            raise _Parted(Shadow(Verdict.DISAGREED, step, expected, "the agent answered"))
        call = self.calls[step]
        if call.tool != tool.name or not _same_arguments(tool, (args, kwargs), (call.args, call.kwargs)):
            raise _Parted(Shadow(Verdict.DISAGREED, step, expected, _call_text(call)))
        return call.returned if tool.output_view is not None or tool.secret_outputs else call.output

    def _capture(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any], *, post: bool) -> Any:
        """What the agent's call at this step captured, if it is this tool's call with these arguments."""
        step = len(self.run.calls)
        args = args[1:] if tool.is_method else args
        call = self.calls[step] if step < len(self.calls) else None
        if (
            call is not None
            and call.tool == tool.name
            and _same_arguments(tool, (args, kwargs), (call.args, call.kwargs))
        ):
            captured = call.post if post else call.pre
            if captured is not NOT_CAPTURED:
                return captured
        elif self.parted is None:
            self.parted = Shadow(
                Verdict.DISAGREED,
                step,
                _text(tool.name, args, kwargs),
                _call_text(call) if call is not None else "the agent answered",
                reason=f"unless the check of tool {tool.name!r}, which the agent's run did not capture, "
                "stopped the replay",
            )
        if self.unknown is None:
            why = f"the check of tool {tool.name!r} at step {step} saw what the agent's run did not capture"
            self.unknown = (step, why)
        raise _Unknown(self.unknown[1])


class _Unknown(Exception):
    """A capture the agent's run cannot answer (the replay takes it as a capture that raised)."""


class _Parted(BaseException):
    """The replay and the agent parted; raised through the driver (which sends an ``Exception`` back)."""

    def __init__(self, shadow: Shadow) -> None:
        super().__init__(shadow.expected)
        self.shadow = shadow


def _async_capture(name: str) -> BaseException:
    return TypeError(f"{name} returned an awaitable in a shadow replay")


def _same_arguments(
    tool: Tool,
    given: tuple[tuple[Any, ...], Mapping[str, Any]],
    made: tuple[tuple[Any, ...], Mapping[str, Any]],
) -> bool:
    """Whether two calls of ``tool`` pass the same arguments (by parameter name, positional or not)."""
    return _same(_named(tool, *given), _named(tool, *made))


def _named(tool: Tool, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """The arguments by parameter name (as given, if the names cannot be told)."""
    names = tool.parameter_names(len(args), tuple(kwargs))
    values = (*args, *kwargs.values())
    if len(names) != len(values) or len(set(names)) != len(names):
        return (args, dict(kwargs))
    return dict(zip(names, values, strict=True))


def _same(a: Any, b: Any) -> bool:
    """Whether two values are the same as the store would keep them (by equality if it cannot)."""
    left, right = _canonical(a), _canonical(b)
    if left is not None and right is not None:
        return left == right
    try:
        return bool(a == b)
    except Exception:
        return False


def _canonical(value: Any) -> str | None:
    try:
        return codec.canonical(codec.encode(value))
    except codec.CodecError:
        return None


def _text(tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return _cut(f"{tool}({', '.join(shown)})")


def _call_text(call: Call) -> str:
    return _text(call.tool, call.args, call.kwargs)


def _short(value: Any) -> str:
    return _cut(repr(value))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CALL_TEXT else text[: MAX_CALL_TEXT - 1] + "…"


def _redacted(shadow: Shadow, run: Run) -> Shadow:
    """``shadow`` with the run's secrets and secret-looking texts redacted from its texts."""
    return dataclasses.replace(
        shadow,
        expected=scrub(run.redact(shadow.expected)) if shadow.expected is not None else None,
        actual=scrub(run.redact(shadow.actual)) if shadow.actual is not None else None,
    )
