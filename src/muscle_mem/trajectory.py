"""The data model: a trajectory is the ordered tool steps that once solved a task.

Values inside the model are plain Python objects; :func:`to_record` and :func:`from_record`
turn a trajectory into a JSON-compatible dict (through :mod:`muscle_mem.codec`) and back.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from muscle_mem import codec

FORMAT_VERSION = 1

PathKind = Literal["key", "attr", "item"]
PathElement = tuple[PathKind, Any]
TemplatePart = tuple[Literal["text", "param", "output"], str]
"""A piece of a template: literal text, a param's name, or an earlier output (see :func:`output_part`)."""


def output_part(step: int, path: tuple[PathElement, ...], guard: str | None = None) -> TemplatePart:
    """A template part standing for the text of an earlier step's output (or a value inside it).

    With a ``guard`` (the text recorded), a replay goes on only if the fresh text is the same: for a
    plain word, which may be data flow or a coincidence, the same word gives the same string either
    way, and another word is a miss, never a string the agent did not write.
    """
    record: list[Any] = [step, [[k, codec.encode(v)] for k, v in path]]
    if guard is not None:
        record.append(guard)
    return ("output", json.dumps(record, separators=(",", ":")))


def output_fields(part: str) -> tuple[int, tuple[PathElement, ...], str | None]:
    """The step and path an output part stands for, and the text it must find again at replay if it
    is guarded (see :func:`output_part`)."""
    record = json.loads(part)
    path = tuple((str(k), codec.decode(v)) for k, v in record[1])
    return int(record[0]), path, str(record[2]) if len(record) > 2 else None  # type: ignore[return-value]


def output_of(part: str) -> tuple[int, tuple[PathElement, ...]]:
    """The step and path an output part stands for."""
    step, path, _ = output_fields(part)
    return step, path


@dataclass(frozen=True, slots=True)
class Arg:
    """One recorded argument: a constant, a param reference, a param template or an output reference."""

    kind: Literal["static", "param", "template", "output", "struct"]
    value: Any = None
    """``static``: the value; ``template``: a tuple of :data:`TemplatePart`; ``struct``: see :meth:`struct`."""
    param: str | None = None
    """``param``: the name of the param whose value is passed."""
    step: int | None = None
    """``output``: the index of the earlier step whose output (or a part of it) is passed."""
    path: tuple[PathElement, ...] = ()
    """``output``: where inside that output the value sits (empty: the output itself)."""

    @classmethod
    def static(cls, value: Any) -> Arg:
        return cls("static", value=value)

    @classmethod
    def of_param(cls, name: str) -> Arg:
        return cls("param", param=name)

    @classmethod
    def template(cls, parts: tuple[TemplatePart, ...]) -> Arg:
        return cls("template", value=parts)

    @classmethod
    def output(cls, step: int, path: tuple[PathElement, ...] = ()) -> Arg:
        return cls("output", step=step, path=path)

    @classmethod
    def struct(cls, container: Literal["list", "tuple", "dict"], items: tuple[tuple[Any, Arg], ...]) -> Arg:
        """A list, tuple or dict some of whose items are references (dict keys are static)."""
        return cls("struct", value=(container, items))

    def describe(self) -> str:
        """A short human-readable form, as shown by the CLI."""
        if self.kind == "static":
            return repr(self.value)
        if self.kind == "param":
            return f"params[{self.param!r}]"
        if self.kind == "template":
            text = "".join(
                t
                if k == "text"
                else "{" + (t if k == "param" else Arg.output(*output_of(t)).describe()) + "}"
                for k, t in self.value
            )
            return f"f{text!r}"
        if self.kind == "struct":
            container, items = self.value
            inner = ", ".join(
                f"{k!r}: {a.describe()}" if container == "dict" else a.describe() for k, a in items
            )
            return "{" + inner + "}" if container == "dict" else f"{container}([{inner}])"
        where = "".join(f"[{v!r}]" if k != "attr" else f".{v}" for k, v in self.path)
        return f"step{self.step}.output{where}"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a Check captured when a step was recorded, with the hash of its canonical encoding."""

    value: Any
    key: str

    @classmethod
    def capture(cls, value: Any) -> Snapshot:
        """Wrap a freshly captured value (raises :class:`codec.CodecError` if it cannot be stored)."""
        return cls(value=value, key=codec.fingerprint(value))


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of a trajectory."""

    tool: str
    version: str
    args: tuple[Arg, ...] = ()
    kwargs: tuple[tuple[str, Arg], ...] = ()
    pre: Snapshot | None = None
    post: Snapshot | None = None
    seconds: float = 0.0
    """How long the tool body took when recorded."""

    @property
    def signature(self) -> str:
        """Identity of the call itself (tool, version, arguments), independent of snapshots."""
        return codec.digest(
            [
                self.tool,
                self.version,
                [_arg_record(a) for a in self.args],
                [[k, _arg_record(a)] for k, a in self.kwargs],
            ]
        )


@dataclass(frozen=True, slots=True)
class Trajectory:
    """The steps that solved one task, and the answer the agent gave."""

    task_key: str
    steps: tuple[Step, ...]
    task: str = ""
    tags: tuple[str, ...] = ()
    result: Arg = field(default_factory=lambda: Arg.static(None))
    agent_seconds: float = 0.0
    """Wall time of the recorded run (replayed prefix plus agent)."""
    tokens: int = 0
    """LLM tokens the agent reported spending on the recorded run."""
    created_at: float = field(default_factory=time.time)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(slots=True)
class Usage:
    """How a stored trajectory has been used; updated without rewriting the trajectory."""

    hits: int = 0
    last_used: float = 0.0
    saved_seconds: float = 0.0
    priority: float = 0.0
    """Eviction rank kept by order-invariant policies (lowest is evicted first)."""
    attention: float = 0.0
    """Semantic attention in [0, 1] (similarity of the trajectory's task to recent tasks)."""


class RecordError(ValueError):
    """A stored record is not a trajectory this version can read."""


def _arg_record(arg: Arg) -> dict[str, Any]:
    if arg.kind == "static":
        return {"static": codec.encode(arg.value)}
    if arg.kind == "param":
        return {"param": arg.param}
    if arg.kind == "template":
        return {"template": [list(p) for p in arg.value]}
    if arg.kind == "struct":
        container, items = arg.value
        return {"struct": container, "items": [[codec.encode(k), _arg_record(a)] for k, a in items]}
    return {"output": arg.step, "path": [[k, codec.encode(v)] for k, v in arg.path]}


def _arg_from(data: Mapping[str, Any], steps_before: int) -> Arg:
    """An argument from its record; an output reference must name one of the ``steps_before``
    earlier steps, and every kind must be known."""
    if "static" in data:
        return Arg.static(codec.decode(data["static"]))
    if "param" in data:
        return Arg.of_param(str(data["param"]))
    if "template" in data:
        parts = tuple((str(k), str(t)) for k, t in data["template"])
        unknown = {k for k, _ in parts} - {"text", "param", "output"}
        if unknown:
            raise RecordError(f"unknown template part kinds {sorted(unknown)}")
        for kind, text in parts:
            if kind == "output":
                record = json.loads(text)
                _arg_from({"output": int(record[0]), "path": record[1]}, steps_before)
        return Arg.template(parts)  # type: ignore[arg-type]
    if "struct" in data:
        items = tuple((codec.decode(k), _arg_from(a, steps_before)) for k, a in data["items"])
        container = data["struct"]
        if container not in ("list", "tuple", "dict"):
            raise RecordError(f"unknown struct container {container!r}")
        return Arg.struct(container, items)
    if "output" in data:
        step = data["output"]
        if type(step) is not int or not 0 <= step < steps_before:
            raise RecordError(
                f"an output reference to step {step!r} from step {steps_before}: not an earlier step"
            )
        path = tuple((k, codec.decode(v)) for k, v in data.get("path", []))
        unknown = {k for k, _ in path} - {"key", "item", "attr"}
        if unknown:
            raise RecordError(f"unknown output path kinds {sorted(unknown)}")
        return Arg.output(step, path)
    raise RecordError(f"unknown argument form: {sorted(data)}")


def _snapshot_record(snap: Snapshot | None) -> dict[str, Any] | None:
    return None if snap is None else {"key": snap.key, "data": codec.encode(snap.value)}


def _snapshot_from(data: Mapping[str, Any] | None) -> Snapshot | None:
    return None if data is None else Snapshot(value=codec.decode(data["data"]), key=str(data["key"]))


def step_record(step: Step) -> dict[str, Any]:
    """The JSON-compatible form of one step."""
    return {
        "tool": step.tool,
        "version": step.version,
        "args": [_arg_record(a) for a in step.args],
        "kwargs": [[k, _arg_record(a)] for k, a in step.kwargs],
        "pre": _snapshot_record(step.pre),
        "post": _snapshot_record(step.post),
        "seconds": step.seconds,
    }


def to_record(trajectory: Trajectory) -> dict[str, Any]:
    """The JSON-compatible form of a trajectory (raises :class:`codec.CodecError` on unstorable values)."""
    return {
        "format": FORMAT_VERSION,
        "id": trajectory.id,
        "task_key": trajectory.task_key,
        "task": trajectory.task,
        "tags": list(trajectory.tags),
        "steps": [step_record(s) for s in trajectory.steps],
        "result": _arg_record(trajectory.result),
        "agent_seconds": trajectory.agent_seconds,
        "tokens": trajectory.tokens,
        "created_at": trajectory.created_at,
    }


def from_record(data: Mapping[str, Any]) -> Trajectory:
    """Rebuild a trajectory from :func:`to_record`'s output; raises :class:`RecordError` if it can't."""
    try:
        version = data["format"]
        if version != FORMAT_VERSION:
            raise RecordError(
                f"trajectory format {version!r} is not supported (this version reads {FORMAT_VERSION})"
            )
        steps = tuple(
            Step(
                tool=str(s["tool"]),
                version=str(s["version"]),
                args=tuple(_arg_from(a, i) for a in s["args"]),
                kwargs=tuple((str(k), _arg_from(a, i)) for k, a in s["kwargs"]),
                pre=_snapshot_from(s["pre"]),
                post=_snapshot_from(s["post"]),
                seconds=float(s["seconds"]),
            )
            for i, s in enumerate(data["steps"])
        )
        return Trajectory(
            id=str(data["id"]),
            task_key=str(data["task_key"]),
            task=str(data["task"]),
            tags=tuple(str(t) for t in data["tags"]),
            steps=steps,
            result=_arg_from(data["result"], len(steps)),
            agent_seconds=float(data["agent_seconds"]),
            tokens=int(data.get("tokens", 0)),
            created_at=float(data["created_at"]),
        )
    except RecordError:
        raise
    except (KeyError, TypeError, ValueError, ArithmeticError, codec.CodecError) as exc:
        raise RecordError(f"malformed trajectory record: {exc!r}") from exc
