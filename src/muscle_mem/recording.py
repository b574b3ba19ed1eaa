"""The run in progress: records tool calls, then turns them into a trajectory.

Recording is kept cheap on the hot path (a context-variable read and an append per call); param
templating and data-flow detection happen once, when the run is stored. What may change in between
is copied at the call: arguments and snapshots that are not plain scalars (deep-copied, once the codec
has said it can store them), and the top two levels of lists and dicts of each output.

Data flow. A tool argument equal to an earlier output of the same run, or to a value inside it (a
dict item, an attribute, a list item, two levels deep), is stored as a reference to that output, so a
replay passes the fresh value. To keep coincidences from turning constants into references:

* booleans, None and floats are never references;
* strings shorter than 4 characters are never references;
* integers with ``abs(value) < 1000`` are references only when both ends look like ids: the value is
  a whole tool output or sits under an id-like name (``id``, ``*_id``, ``*Id``, ``*_ids``, ``*Ids``),
  *and* the argument receiving it has an id-like name (for the agent's final answer, the receiving
  side is not asked);
* a list, tuple, dict, named tuple, dataclass or pydantic model (compared by its encoding) follows
  the rule of the most referable value inside it: ``{"ok": True}`` never, ``[1, 2]`` as a small
  integer, ``{"id": "usr_81f3"}`` anywhere.

A value equal to a param wins over an output reference (params are declared by the caller).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import itertools
import time
import uuid
from collections.abc import Hashable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from muscle_mem import codec
from muscle_mem.keys import params_equal_to, plain_params, redact, secret_values, split_template
from muscle_mem.trajectory import Arg, PathElement, Snapshot, Step, Trajectory

if TYPE_CHECKING:
    from muscle_mem.tools import Tool

_RUN_IDS = itertools.count(1)
CURRENT_RUN: ContextVar[Run | None] = ContextVar("muscle_mem_run", default=None)
IN_TOOL: ContextVar[int | None] = ContextVar("muscle_mem_in_tool", default=None)
"""The id of the run whose recorded tool is executing in this context: tools it calls in turn are
part of it, not steps. A context var, so tools run side by side (``asyncio.gather``) are each steps."""
NOT_CAPTURED: Any = object()
MIN_REFERENCE_STRING = 4
MIN_REFERENCE_INT = 1000
_MAX_INDEXED_PER_OUTPUT = 512
_ID_SUFFIXES = ("Id", "ID", "Ids", "IDs")


def current_run() -> Run | None:
    """The run in progress in this context (thread or asyncio task), or None outside a run."""
    return CURRENT_RUN.get()


@dataclass(slots=True)
class Call:
    """One tool call of a run, replayed by the engine or made by the agent."""

    tool: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    output: Any
    replayed: bool
    seconds: float = 0.0
    pre: Any = field(default=NOT_CAPTURED, repr=False)
    post: Any = field(default=NOT_CAPTURED, repr=False)
    step: Step | None = field(default=None, repr=False)
    """For a replayed call: the stored step (its arguments as recorded, with references)."""
    tool_ref: Tool | None = field(default=None, repr=False)


class Run:
    """A task being solved: what the engine replayed and what the agent did, in order."""

    def __init__(
        self, owner: object, task: str, task_key: str, tags: tuple[str, ...], params: Mapping[str, Any]
    ) -> None:
        self.id = next(_RUN_IDS)
        self.owner = owner
        self.task = task
        self.task_key = task_key
        self.tags = tags
        self.params = dict(params)
        self.calls: list[Call] = []
        self.recording = False
        self.tokens = 0
        """LLM tokens the agent spent on this run; an agent adds them: ``current_run().tokens += n``."""
        self.relevance = 1.0
        """How relevant the task is to the recent task stream (for eviction policies), in [0, 1]."""
        self.problems: list[str] = []
        """Why this run cannot be stored (an unserializable value, a capture that raised)."""
        self.secrets = secret_values(params)
        """The plain values of the secret params, to keep out of every message."""

    def redact(self, text: str) -> str:
        """``text`` with this run's secret values replaced by their param names."""
        return redact(text, self.secrets) if self.secrets else text

    @property
    def steps(self) -> list[Call]:
        """The steps done so far, replayed ones included."""
        return list(self.calls)

    def _kept_snapshot(self, tool: Tool, which: str, value: Any) -> Any:
        """A frozen copy of what a Check captured (NOT_CAPTURED, the problem noted, if unstorable)."""
        try:
            return frozen(value)
        except codec.CodecError as exc:
            self.problems.append(
                self.redact(f"{which}-check snapshot of tool {tool.name!r} cannot be stored: {exc}")
            )
            return NOT_CAPTURED

    def _capture(self, tool: Tool, which: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        check = tool.pre_check if which == "pre" else tool.post_check
        if check is None:
            return NOT_CAPTURED
        try:
            value = check.capture(*args, **kwargs)
        except Exception as exc:
            self.problems.append(self.redact(f"{which}-check capture of tool {tool.name!r} raised {exc!r}"))
            return NOT_CAPTURED
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
            self.problems.append(self.redact(f"{which}-check capture of tool {tool.name!r} raised {exc!r}"))
            return NOT_CAPTURED
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
                        f"step {len(self.calls)} (tool {tool.name!r}) argument {name!r}: {exc}"
                    )
                    break
            return recorded, kwargs

    def record(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a tool on the agent's behalf and record the call (a call that raises is not recorded)."""
        call_args, call_kwargs = self._arguments(tool, args, kwargs)
        pre = self._capture(tool, "pre", args, kwargs)
        token = IN_TOOL.set(self.id)
        start = time.perf_counter()
        try:
            out = tool.fn(*args, **kwargs)
        finally:
            IN_TOOL.reset(token)
        seconds = time.perf_counter() - start
        post = self._capture(tool, "post", args, kwargs)
        self.calls.append(
            Call(tool.name, call_args, call_kwargs, kept(out), False, seconds, pre, post, tool_ref=tool)
        )
        return out

    async def record_async(self, tool: Tool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """:meth:`record` for an async tool."""
        call_args, call_kwargs = self._arguments(tool, args, kwargs)
        pre = await self._capture_async(tool, "pre", args, kwargs)
        token = IN_TOOL.set(self.id)
        start = time.perf_counter()
        try:
            out = await tool.fn(*args, **kwargs)
        finally:
            IN_TOOL.reset(token)
        seconds = time.perf_counter() - start
        post = await self._capture_async(tool, "post", args, kwargs)
        self.calls.append(
            Call(tool.name, call_args, call_kwargs, kept(out), False, seconds, pre, post, tool_ref=tool)
        )
        return out

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
    data = codec.encode(value)
    try:
        return copy.deepcopy(value)
    except Exception:
        return codec.decode(data)


def _frozen_all(values: tuple[Any, ...]) -> tuple[Any, ...]:
    for value in values:
        if type(value) not in _SCALARS:
            return tuple(frozen(v) for v in values)
    return values


def _shallow(value: Any) -> Any:
    kind = type(value)
    return list(value) if kind is list else dict(value) if kind is dict else value


def kept(output: Any) -> Any:
    """A tool output as data-flow detection will see it, its lists, tuples and dicts copied two levels
    deep (the first 512 items): the agent sorting a list or adding a key later must not move a
    reference. The output returned to the agent is the original."""
    kind = type(output)
    if kind is dict:
        copied = dict(output)
        for key in itertools.islice(output, _MAX_INDEXED_PER_OUTPUT):
            copied[key] = _shallow(copied[key])
        return copied
    if kind is list or kind is tuple:
        head = [_shallow(v) for v in output[:_MAX_INDEXED_PER_OUTPUT]]
        head += output[_MAX_INDEXED_PER_OUTPUT:]
        return head if kind is list else tuple(head)
    return output


def _id_like(name: object) -> bool:
    if not isinstance(name, str):
        return False
    lower = name.lower()
    return lower in ("id", "ids") or lower.endswith(("_id", "_ids")) or name.endswith(_ID_SUFFIXES)


def _reference_kind(value: Any, depth: int = 0) -> str | None:
    """``"any"``: may be referenced anywhere; ``"id"``: only between id-like names; None: never."""
    if value is None or isinstance(value, bool | float):
        return None
    if isinstance(value, str | bytes):
        return "any" if len(value) >= MIN_REFERENCE_STRING else None
    if isinstance(value, int):
        return "any" if abs(value) >= MIN_REFERENCE_INT else "id"
    if isinstance(value, uuid.UUID):
        return "any"
    kind = None
    if depth < 2:
        for _, child in itertools.islice(_children(value), _MAX_INDEXED_PER_OUTPUT):
            child_kind = _reference_kind(child, depth + 1)
            if child_kind == "any":
                return "any"
            kind = child_kind or kind
    return kind


def _value_key(value: Any) -> Hashable | None:
    """What equal values share: the value itself, or the fingerprint of a structured value."""
    if isinstance(value, str | bytes | int | uuid.UUID):
        return (type(value), value)
    try:
        return ("encoded", codec.fingerprint(value))
    except codec.CodecError:
        return None


def _children(value: Any) -> Iterator[tuple[PathElement, Any]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str | int):
                yield ("key", k), v
    elif isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        for i, v in enumerate(value):
            yield ("item", i), v
    elif hasattr(value, "_fields"):
        for name in value._fields:
            yield ("attr", name), getattr(value, name)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield ("attr", f.name), getattr(value, f.name)
    elif hasattr(value, "model_fields") and not isinstance(value, type):
        for name in type(value).model_fields:
            yield ("attr", name), getattr(value, name)


@dataclass(frozen=True, slots=True)
class _Origin:
    step: int
    path: tuple[PathElement, ...]
    id_like: bool


class _Provenance:
    """Where the values of a run's outputs came from, for data-flow references."""

    def __init__(self) -> None:
        self._origins: dict[Hashable, _Origin] = {}

    def add_output(self, step: int, output: Any) -> None:
        budget = [_MAX_INDEXED_PER_OUTPUT]

        def visit(value: Any, path: tuple[PathElement, ...], name: object, depth: int) -> None:
            if budget[0] <= 0:
                return
            budget[0] -= 1
            key = _value_key(value) if _reference_kind(value) is not None else None
            if key is not None:
                origin = _Origin(step, path, not path or _id_like(name))
                known = self._origins.get(key)
                # the latest output wins, but an id-like origin is not shadowed by a coincidence
                if known is None or origin.id_like or not known.id_like:
                    self._origins[key] = origin
            if depth < 2:
                for element, child in _children(value):
                    visit(child, (*path, element), element[1], depth + 1)

        visit(output, (), None, 0)

    def find(self, value: Any, receiver: str | None) -> _Origin | None:
        kind = _reference_kind(value)
        key = _value_key(value) if kind is not None else None
        if key is None:
            return None
        origin = self._origins.get(key)
        if origin is None or (
            kind == "id" and not (origin.id_like and (receiver is None or _id_like(receiver)))
        ):
            return None
        return origin


class Unreplayable(codec.CodecError):
    """A run that cannot be stored as a trajectory a replay would repeat faithfully."""


_MAX_HIDDEN_DEPTH = 4
"""How deep inside a constant argument params and outputs are looked for."""


class _ArgBuilder:
    """Turns live values into :class:`Arg` forms: params, templates, output references, constants."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self.provenance = _Provenance()

    def build(self, value: Any, receiver: str | None, where: str) -> Arg:
        names = params_equal_to(value, self.params)
        if len(names) > 1:
            raise Unreplayable(
                f"{where} equals params {' and '.join(map(repr, names))} alike: a replay could not tell which"
            )
        if names:
            return Arg.of_param(names[0])
        origin = self.provenance.find(value, receiver)  # before templates: "John-17" came from a tool
        if origin is not None:
            return Arg.output(origin.step, origin.path)
        if isinstance(value, str):
            parts = split_template(value, self.params)
            if parts is not None:
                return Arg.template(parts)
        structured = self._struct(value, receiver, where)
        if structured is not None:
            return structured
        try:
            codec.encode(value)
        except codec.CodecError as exc:
            raise codec.CodecError(f"{where}: {exc}") from None
        hidden = self._hidden_reference(value)
        if hidden is not None:
            raise Unreplayable(
                f"{where}: {hidden} inside a {type(value).__name__}, which a replay cannot rebuild"
            )
        return Arg.static(value)

    def _hidden_reference(self, value: Any) -> str | None:
        """What a constant hides that a replay would have to change: a param value or an earlier
        output, deep inside a value that is not a list, tuple or dict of str or int keys."""
        stack = [(path_element, child, 1) for path_element, child in _children(value)]
        budget = _MAX_INDEXED_PER_OUTPUT
        while stack and budget > 0:
            budget -= 1
            (_, name), child, depth = stack.pop()
            names = params_equal_to(child, self.params)
            if names:
                return f"the value of param {names[0]!r} is"
            if isinstance(child, str) and split_template(child, self.params) is not None:
                return "a param's value is"
            origin = self.provenance.find(child, name if isinstance(name, str) else None)
            if origin is not None:
                return f"the output of step {origin.step} is"
            if depth < _MAX_HIDDEN_DEPTH:
                stack += [(element, grandchild, depth + 1) for element, grandchild in _children(child)]
        return None

    def _struct(self, value: Any, receiver: str | None, where: str) -> Arg | None:
        if type(value) in (list, tuple):
            items = tuple((i, self.build(v, receiver, f"{where}[{i}]")) for i, v in enumerate(value))
            container = "list" if type(value) is list else "tuple"
        elif type(value) is dict and all(isinstance(k, str | int) for k in value):
            items = tuple((k, self.build(v, k, f"{where}[{k!r}]")) for k, v in value.items())
            container = "dict"
        else:
            return None
        if all(a.kind == "static" for _, a in items):
            return None
        return Arg.struct(container, items)  # type: ignore[arg-type]


def _snapshot(value: Any, where: str) -> Snapshot | None:
    if value is NOT_CAPTURED:
        return None
    try:
        return Snapshot.capture(value)
    except codec.CodecError as exc:
        raise codec.CodecError(f"{where}: {exc}") from None


def build_trajectory(run: Run, result: Any, agent_seconds: float) -> Trajectory:
    """The trajectory a finished run leaves; raises CodecError naming the tool and argument at fault."""
    if run.problems:
        raise codec.CodecError("; ".join(run.problems))
    builder = _ArgBuilder(plain_params(run.params))  # a Secret param becomes a reference by name
    steps: list[Step] = []
    for index, call in enumerate(run.calls):
        tool = call.tool_ref
        where = f"step {index} (tool {call.tool!r})"
        if call.step is not None:
            args, kwargs = call.step.args, call.step.kwargs
            version = call.step.version
        else:
            assert tool is not None
            names = tool.parameter_names(len(call.args), tuple(call.kwargs))
            args = tuple(
                builder.build(v, names[i], f"{where} argument {names[i]!r}") for i, v in enumerate(call.args)
            )
            kwargs = tuple(
                (k, builder.build(v, k, f"{where} argument {k!r}")) for k, v in call.kwargs.items()
            )
            version = tool.version
        pre = _snapshot(call.pre, f"{where} pre-check snapshot")
        post = _snapshot(call.post, f"{where} post-check snapshot")
        steps.append(Step(call.tool, version, args, kwargs, pre, post, call.seconds))
        builder.provenance.add_output(index, call.output)
    answer = builder.build(result, None, "the agent's return value")
    return Trajectory(
        task_key=run.task_key,
        task=run.task,
        tags=run.tags,
        steps=tuple(steps),
        result=answer,
        agent_seconds=agent_seconds,
        tokens=run.tokens,
    )
