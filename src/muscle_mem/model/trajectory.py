"""The data model: a trajectory is the ordered tool steps that once solved a task.

Values inside the model are plain Python objects; :func:`to_record` and :func:`from_record`
turn a trajectory into a JSON-compatible dict (through :mod:`muscle_mem.model.codec`) and back.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from muscle_mem.errors import MuscleMemError
from muscle_mem.model import codec
from muscle_mem.model._forms import SAME, Form, FormKind
from muscle_mem.model._ids import new_id
from muscle_mem.model._leaf_kinds import KINDS, Leaf
from muscle_mem.model._observations import Observation
from muscle_mem.model.provenance import (
    JSON,
    Agree,
    Arg,
    Const,
    Guarded,
    Output,
    Param,
    PathElement,
    Pick,
    Struct,
    Template,
    Text,
    all_args,
)

FORMAT_VERSION = 3
"""Version 3 records what each step's output showed (see :mod:`muscle_mem.model._observations`); version 2
records every origin of a value (see :mod:`muscle_mem.model.provenance`). Older records are read: their
steps carry no observation, so a replay of one stops after its first step."""
READABLE_FORMATS = (1, 2, 3)

TemplatePart = tuple[Literal["text", "param"], str]
"""A piece of a task text template: literal text or a param's name (see :mod:`muscle_mem.model._task_keys`)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a Check captured when a step was recorded, with the hash of its canonical encoding.

    A snapshot of an equality Check (:meth:`~muscle_mem.Check.equal`) is compared by its hash alone,
    so it keeps only the hash (``kept`` is False, ``value`` None): what the Check read of the
    environment is not stored.
    """

    value: Any
    key: str
    kept: bool = True
    """Whether ``value`` is the captured value (False: only its hash ``key`` was stored)."""

    @classmethod
    def capture(cls, value: Any) -> Snapshot:
        """Wrap a freshly captured value (raises :class:`codec.CodecError` if it cannot be stored)."""
        return cls(value=value, key=codec.fingerprint(value))

    @classmethod
    def digest(cls, value: Any) -> Snapshot:
        """The hash of a freshly captured value, without the value (raises :class:`codec.CodecError`)."""
        return cls(value=None, key=codec.fingerprint(value), kept=False)


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
    observed: Observation | None = None
    """What the step's output showed the recorded run (None in records of older formats)."""
    given: Observation | None = None
    """For a first step: the run's params as it saw them (None without params)."""
    decided_at: int | None = None
    """How many tool outputs the agent had seen when it decided this call: the steps before the model
    turn that made it (several calls of one turn are decided together). None where the front end does
    not tell turns apart: every output before the call."""

    @property
    def arguments(self) -> tuple[Arg, ...]:
        """The recorded values of its arguments, positional then keyword."""
        return (*self.args, *(arg for _, arg in self.kwargs))

    @property
    def route(self) -> str:
        """The key the step index files the step under after it ran: its post snapshot and observations."""
        post = self.post.key if self.post else ""
        if self.observed is None and self.given is None:
            return post
        given = self.given.key if self.given is not None else ""
        observed = self.observed.key if self.observed is not None else ""
        return f"{post}|{observed}|{given}"

    @property
    def signature(self) -> str:
        """Identity of the call itself (tool, version, arguments), independent of snapshots."""
        return codec.digest(
            [
                self.tool,
                self.version,
                [arg_record(a) for a in self.args],
                [[k, arg_record(a)] for k, a in self.kwargs],
            ]
        )


def record_signature(record: Mapping[str, Any]) -> str:
    """The :attr:`Step.signature` of a step, from its :func:`step_record` (its arguments encoded once)."""
    return codec.digest([record["tool"], record["version"], record["args"], record["kwargs"]])


@dataclass(frozen=True, slots=True)
class Trajectory:
    """The steps that solved one task, and the answer the agent gave."""

    task_key: str
    steps: tuple[Step, ...]
    task: str = ""
    tags: tuple[str, ...] = ()
    result: Arg = field(default_factory=lambda: Const(None))
    agent_seconds: float = 0.0
    """Wall time of the recorded run (replayed prefix plus agent)."""
    tokens: int = 0
    """LLM tokens the agent reported spending on the recorded run."""
    created_at: float = field(default_factory=time.time)
    id: str = field(default_factory=new_id)


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


class RecordError(MuscleMemError, ValueError):
    """A stored record is not a trajectory this version can read."""


def _form_record(form: Form) -> list[Any]:
    return [form.kind, form.grouped, form.decimals, form.width]


def _form_from(data: Any) -> Form:
    kind, grouped, decimals, width = data
    if kind not in get_args(FormKind):
        raise RecordError(f"unknown value form {kind!r}")
    if type(grouped) is not bool or not (decimals is None or type(decimals) is int) or type(width) is not int:
        raise RecordError(f"malformed value form {data!r}")
    if not (decimals is None or 0 <= decimals <= 20) or not 0 <= width <= 40:
        raise RecordError(f"value form out of range {data!r}")
    return Form(kind, grouped, decimals, width)


def arg_record(arg: Arg | Text) -> dict[str, Any]:
    """The JSON-compatible form of one recorded value."""
    match arg:
        case Const(value):
            return {"static": codec.encode(value)}
        case Param(name, form):
            return (
                {"param": name}
                if form is SAME or form == SAME
                else {"param": name, "form": _form_record(form)}
            )
        case Output(step, path, form, picks):
            record: dict[str, Any] = {"output": step, "path": [[k, codec.encode(v)] for k, v in path]}
            if form is not SAME and form != SAME:
                record["form"] = _form_record(form)
            if picks:
                record["picks"] = [[p.depth, p.identity] for p in picks]
            return record
        case Agree(options):
            return {"agree": [arg_record(o) for o in options]}
        case Guarded(value, params, outputs):
            record = {"guarded": arg_record(value), "params": [list(p) for p in params]}
            if outputs:
                record["outputs"] = [[s, [[k, codec.encode(v)] for k, v in p], d] for s, p, d in outputs]
            return record
        case Template(parts):
            return {"template": [arg_record(p) for p in parts]}
        case Struct(container, items):
            return {"struct": container, "items": [[codec.encode(k), arg_record(a)] for k, a in items]}
        case Text(text):
            return {"text": text}
    raise TypeError(f"not a recorded value: {arg!r}")


class _ArgReader:
    """Reads recorded values of one format; an output reference must name an earlier step, and a
    path may walk only what the recorder walks (dict keys, list items, public field names)."""

    def __init__(self, version: int, steps_before: int) -> None:
        self.version = version
        self.steps_before = steps_before
        self.depth = 0

    def read(self, data: Mapping[str, Any]) -> Arg:
        if self.depth >= codec.MAX_DEPTH:
            raise RecordError(f"recorded values nested more than {codec.MAX_DEPTH} deep")
        self.depth += 1
        try:
            return self._read(data)
        finally:
            self.depth -= 1

    def _read(self, data: Mapping[str, Any]) -> Arg:
        if not isinstance(data, Mapping):
            raise RecordError(f"a recorded value is an object, not a {type(data).__name__}")
        if "static" in data:
            return Const(codec.decode(data["static"]))
        if "param" in data:
            form = _form_from(data["form"]) if "form" in data else SAME
            return Param(_text(data["param"]), form)
        if "template" in data:
            return Template(tuple(self._part(p) for p in data["template"]))
        if "struct" in data:
            container = data["struct"]
            if container not in ("list", "tuple", "dict"):
                raise RecordError(f"unknown struct container {container!r}")
            items = tuple((codec.decode(k), self.read(a)) for k, a in data["items"])
            return Struct(container, items)
        if "output" in data:
            form = _form_from(data["form"]) if "form" in data else SAME
            path = self._path(data.get("path", []))
            picks = tuple(self._pick(p, path) for p in data.get("picks", []))
            return Output(self._step(data["output"]), path, form, picks)
        if "agree" in data and self.version >= 2:
            options = tuple(self.read(o) for o in data["agree"])
            if len(options) < 2:
                raise RecordError("an agreement of fewer than two origins")
            return Agree(options)
        if "guarded" in data and self.version >= 2:
            params = tuple((_text(n), _text(d)) for n, d in data["params"])
            outputs = tuple((self._step(s), self._path(p), _text(d)) for s, p, d in data.get("outputs", []))
            return Guarded(self.read(data["guarded"]), params, outputs)
        raise RecordError(f"unknown argument form: {sorted(data)}")

    def _part(self, data: Any) -> Text | Arg:
        if self.version == 1:
            kind, text = data
            if kind == "text":
                return Text(_text(text))
            if kind == "param":
                return Param(_text(text))
            if kind != "output":
                raise RecordError(f"unknown template part kind {kind!r}")
            record = json.loads(_text(text))
            if type(record) is not list or len(record) not in (2, 3):
                raise RecordError(f"a template output part is [step, path(, text)], not {text!r}"[:200])
            output = Output(self._step(record[0]), self._path(record[1]))
            return Agree((output, Const(_text(record[2])))) if len(record) > 2 else output
        if "text" in data:
            return Text(_text(data["text"]))
        return self.read(data)

    def _step(self, step: Any) -> int:
        if type(step) is not int or not 0 <= step < self.steps_before:
            raise RecordError(
                f"an output reference to step {step!r} from step {self.steps_before}: not an earlier step"
            )
        return step

    @staticmethod
    def _path(data: Any) -> tuple[PathElement, ...]:
        path: list[PathElement] = []
        for kind, encoded in data:
            key = codec.decode(encoded)
            if kind == "item" and type(key) is int and key >= 0:
                path.append(("item", key))
            elif kind == "key" and type(key) in (str, int):
                path.append(("key", key))
            elif kind == "attr" and type(key) is str and key.isidentifier() and not key.startswith("_"):
                path.append(("attr", key))
            elif kind == "json" and key is None:
                path.append(JSON)
            else:
                raise RecordError(f"an output path may not walk {kind!r} {key!r}")
        return tuple(path)

    @staticmethod
    def _pick(data: Any, path: tuple[PathElement, ...]) -> Pick:
        depth, identity = data
        if type(depth) is not int or not 0 <= depth < len(path) or path[depth][0] != "item":
            raise RecordError(f"a pick at depth {depth!r} is not a list item of its path")
        return Pick(depth, _text(identity))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise RecordError(f"expected a text, found {type(value).__name__}")
    return value


def _snapshot_record(snap: Snapshot | None) -> dict[str, Any] | None:
    if snap is None:
        return None
    return {"key": snap.key, "data": codec.encode(snap.value)} if snap.kept else {"key": snap.key}


def _snapshot_from(data: Mapping[str, Any] | None) -> Snapshot | None:
    if data is None:
        return None
    if "data" not in data:
        return Snapshot(value=None, key=_text(data["key"]), kept=False)
    return Snapshot(value=codec.decode(data["data"]), key=str(data["key"]))


def step_record(step: Step) -> dict[str, Any]:
    """The JSON-compatible form of one step."""
    return {
        "tool": step.tool,
        "version": step.version,
        "args": [arg_record(a) for a in step.args],
        "kwargs": [[k, arg_record(a)] for k, a in step.kwargs],
        "pre": _snapshot_record(step.pre),
        "post": _snapshot_record(step.post),
        "seconds": step.seconds,
        **_observations_record(step),
    }


def observation_record(observation: Observation) -> dict[str, Any]:
    """The JSON-compatible form of an observation."""
    return {
        "key": observation.key,
        "ids": sorted(observation.identities),
        "leaves": [list(leaf) for leaf in observation.leaves],
    }


def _observations_record(step: Step) -> dict[str, Any]:
    record: dict[str, Any] = {}
    if step.observed is not None:
        record["observed"] = observation_record(step.observed)
    if step.given is not None:
        record["given"] = observation_record(step.given)
    if step.decided_at is not None:
        record["decided_at"] = step.decided_at
    return record


def _observation_from(data: Any) -> Observation:
    if not isinstance(data, Mapping):
        raise RecordError("an observation is an object")
    key, ids, leaves = data["key"], data["ids"], data["leaves"]
    if type(key) is not str or type(ids) is not list or type(leaves) is not list:
        raise RecordError("a malformed observation")
    return Observation(
        _text(key), frozenset(_text(i) for i in ids), tuple(_leaf_from(leaf) for leaf in leaves)
    )


def _leaf_from(data: Any) -> Leaf:
    if type(data) is not list or len(data) != 4:
        raise RecordError(f"an observed leaf is [path, kind, value, label], not {data!r}"[:200])
    path, kind, value, label = data
    if type(path) is not str or kind not in KINDS or type(label) is not str:
        raise RecordError(f"a malformed observed leaf {data!r}"[:200])
    if not (
        value is None or type(value) in (bool, int, str) or (type(value) is float and math.isfinite(value))
    ):
        raise RecordError(f"an observed leaf's value is a scalar, not {type(value).__name__}")
    return (path, kind, value, label)


def to_record(trajectory: Trajectory) -> dict[str, Any]:
    """The JSON-compatible form of a trajectory (raises :class:`codec.CodecError` on unstorable values)."""
    return {
        "format": FORMAT_VERSION,
        "id": trajectory.id,
        "task_key": trajectory.task_key,
        "task": trajectory.task,
        "tags": list(trajectory.tags),
        "steps": [step_record(s) for s in trajectory.steps],
        "result": arg_record(trajectory.result),
        "agent_seconds": trajectory.agent_seconds,
        "tokens": trajectory.tokens,
        "created_at": trajectory.created_at,
    }


_plain_json = json.JSONEncoder(separators=(",", ":")).encode
"""The stored JSON of a record (``json.dumps`` with compact separators, keys in their order)."""
_quoted = json.encoder.encode_basestring_ascii
"""The JSON of a ``str`` exactly as the encoders write it (ASCII, escaped)."""


def _number_text(value: Any) -> str:
    """The JSON of a number as :data:`_plain_json` writes it."""
    kind = type(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    return int.__repr__(value) if kind is int else _plain_json(value)


def _text_of(value: Any) -> str:
    return _quoted(value) if type(value) is str else _plain_json(value)


def _texts_of(values: tuple[str, ...]) -> str:
    """The JSON of a list of texts (the tags)."""
    if not values:
        return "[]"
    if all(type(v) is str for v in values):
        return "[" + ",".join([_quoted(v) for v in values]) + "]"
    return _plain_json(list(values))


def _arg_texts(arg: Arg) -> tuple[str, str]:
    """The JSON of :func:`arg_record`: as stored (keys in order) and canonical (keys sorted).

    A constant scalar, a param in its own form and an output without form or picks are written
    directly (their keys are in sorted order already); any other value through its record.
    """
    kind = type(arg)
    text = None
    if kind is Const:
        scalar = codec.scalar_text(arg.value)  # type: ignore[union-attr]
        if scalar is not None:
            text = '{"static":' + scalar + "}"
    elif kind is Param:
        if arg.form is SAME:  # type: ignore[union-attr]
            text = '{"param":' + _text_of(arg.name) + "}"  # type: ignore[union-attr]
    elif kind is Output and arg.form is SAME and not arg.picks and type(arg.step) is int:  # type: ignore[union-attr]
        step, path = arg.step, arg.path  # type: ignore[union-attr]
        # a whole output written as _output_text writes it, without its walk of the empty path
        text = _output_text(step, path) if path else '{"output":' + int.__repr__(step) + ',"path":[]}'
    if text is not None:
        return text, text
    record = arg_record(arg)
    return _plain_json(record), codec.canonical(record)


def _output_text(step: int, path: tuple[PathElement, ...]) -> str | None:
    parts: list[str] = []
    for kind, key in path:
        scalar = codec.scalar_text(key)
        if scalar is None or type(kind) is not str:
            return None
        parts.append("[" + _quoted(kind) + "," + scalar + "]")
    return '{"output":' + int.__repr__(step) + ',"path":[' + ",".join(parts) + "]}"


def _observation_text(observation: Observation) -> str:
    """The JSON of :func:`observation_record` as :data:`_plain_json` writes it, its scalars written directly.

    An observation of one leaf is written once: the observer hands out one object for each scalar
    output it saw (the same int, at the same place, on every miss of a task), so its text is kept.
    """
    if len(observation.leaves) != 1:
        return _written_observation(observation)
    kept = _SCALAR_OBSERVATION_TEXTS.get(id(observation))
    if kept is not None and kept[0] is observation:
        return kept[1]
    text = _written_observation(observation)
    if len(_SCALAR_OBSERVATION_TEXTS) >= _SCALAR_OBSERVATION_TEXTS_KEPT:
        _SCALAR_OBSERVATION_TEXTS.clear()
    _SCALAR_OBSERVATION_TEXTS[id(observation)] = (observation, text)
    return text


_SCALAR_OBSERVATION_TEXTS: dict[int, tuple[Observation, str]] = {}
"""The text of each one-leaf observation written lately, by the object's id (the object kept, so the id is its own)."""
_SCALAR_OBSERVATION_TEXTS_KEPT = 4096


def _written_observation(observation: Observation) -> str:
    """:func:`_observation_text`, written anew."""
    try:
        identities = observation.identities
        ids = ",".join([_quoted(i) for i in sorted(identities)]) if identities else ""
        leaves = ",".join(
            [
                f"[{_quoted(path)},{_quoted(kind)},{_LEAF_VALUE_TEXT[type(value)](value)},{_quoted(label)}]"
                for path, kind, value, label in observation.leaves
            ]
        )
        return f'{{"key":{_quoted(observation.key)},"ids":[{ids}],"leaves":[{leaves}]}}'
    except (TypeError, ValueError, KeyError):  # a value written otherwise: by the encoder
        return _plain_json(observation_record(observation))


def _finite_text(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("written by the encoder")
    return float.__repr__(value)


_LEAF_VALUE_TEXT: dict[type, Callable[[Any], str]] = {
    str: _quoted,
    int: int.__repr__,
    float: _finite_text,
    bool: lambda value: "true" if value else "false",
    type(None): lambda value: "null",
}
"""The JSON of a leaf's value by its type, as :data:`_plain_json` writes it (a finite float only)."""


def _snapshot_text(snap: Snapshot | None) -> str:
    if snap is None:
        return "null"
    if not snap.kept and type(snap.key) is str:
        return '{"key":' + _quoted(snap.key) + "}"
    return _plain_json(_snapshot_record(snap))


def record_text(trajectory: Trajectory) -> tuple[str, list[str]]:
    """The stored JSON text of :func:`to_record` (as ``json.dumps`` with compact separators writes
    it) and the :attr:`Step.signature` of each step, each argument encoded once for both.

    Raises :class:`codec.CodecError` on unstorable values, as :func:`to_record` does.
    """
    steps = []
    signatures = []
    for step in trajectory.steps:
        if type(step.tool) is not str or type(step.version) is not str:
            record = step_record(step)
            steps.append(_plain_json(record))
            signatures.append(record_signature(record))
            continue
        tool, version = _quoted(step.tool), _quoted(step.version)
        stored, signed = _args_texts(step.args)
        if step.kwargs:
            pairs = [(_text_of(k), _arg_texts(a)) for k, a in step.kwargs]
            stored_kwargs = ",".join(["[" + k + "," + r + "]" for k, (r, _) in pairs])
            signed_kwargs = ",".join(["[" + k + "," + c + "]" for k, (_, c) in pairs])
        else:
            stored_kwargs = signed_kwargs = ""
        text = f"[{tool},{version},[{signed}],[{signed_kwargs}]]"
        signatures.append(
            _signature_hash(text) if len(text) <= SIGNATURES_KEPT_LENGTH else codec.hash_text(text)
        )
        pre, post, seconds = _snapshot_text(step.pre), _snapshot_text(step.post), _number_text(step.seconds)
        observed = ""
        if step.observed is not None:
            observed = ',"observed":' + _observation_text(step.observed)
        if step.given is not None:
            observed += ',"given":' + _observation_text(step.given)
        if step.decided_at is not None:
            observed += ',"decided_at":' + int.__repr__(step.decided_at)
        steps.append(
            f'{{"tool":{tool},"version":{version},"args":[{stored}],"kwargs":[{stored_kwargs}],'
            f'"pre":{pre},"post":{post},"seconds":{seconds}{observed}}}'
        )
    t = trajectory
    text = (
        f'{{"format":{FORMAT_VERSION},"id":{_text_of(t.id)},"task_key":{_text_of(t.task_key)},'
        f'"task":{_text_of(t.task)},"tags":{_texts_of(t.tags)},"steps":[{",".join(steps)}],'
        f'"result":{_arg_texts(t.result)[0]},"agent_seconds":{_number_text(t.agent_seconds)},'
        f'"tokens":{_number_text(t.tokens)},"created_at":{_number_text(t.created_at)}}}'
    )
    return text, signatures


SIGNATURES_KEPT_LENGTH = 512
"""A step's signature is remembered for a canonical text up to this long (the steps of a task repeat)."""
_signature_hash = functools.lru_cache(maxsize=4096)(codec.hash_text)
""":func:`codec.hash_text` remembered for the signature texts of the most recent steps."""


def _args_texts(args: tuple[Arg, ...]) -> tuple[str, str]:
    """The JSON of a step's argument records, inside their list: as stored, and canonical."""
    if len(args) == 1:
        return _arg_texts(args[0])
    texts = [_arg_texts(a) for a in args]
    return ",".join([r for r, _ in texts]), ",".join([c for _, c in texts])


def from_record(data: Mapping[str, Any]) -> Trajectory:
    """Rebuild a trajectory from :func:`to_record`'s output; raises :class:`RecordError` if it can't."""
    try:
        version = data["format"]
        if type(version) is not int or version not in READABLE_FORMATS:
            raise RecordError(
                f"trajectory format {version!r} is not supported (this version reads {READABLE_FORMATS})"
            )
        steps = tuple(
            Step(
                tool=str(s["tool"]),
                version=str(s["version"]),
                args=tuple(_ArgReader(version, i).read(a) for a in s["args"]),
                kwargs=tuple((str(k), _ArgReader(version, i).read(a)) for k, a in s["kwargs"]),
                pre=_snapshot_from(s["pre"]),
                post=_snapshot_from(s["post"]),
                seconds=_finite(s["seconds"]),
                observed=_observation_from(s["observed"]) if "observed" in s else None,
                given=_observation_from(s["given"]) if "given" in s else None,
                decided_at=_decided_at(s.get("decided_at"), i),
            )
            for i, s in enumerate(data["steps"])
        )
        _check_turns(steps)
        return Trajectory(
            id=str(data["id"]),
            task_key=str(data["task_key"]),
            task=str(data["task"]),
            tags=tuple(str(t) for t in data["tags"]),
            steps=steps,
            result=_ArgReader(version, len(steps)).read(data["result"]),
            agent_seconds=_finite(data["agent_seconds"]),
            tokens=int(data.get("tokens", 0)),
            created_at=_finite(data["created_at"]),
        )
    except RecordError:
        raise
    except Exception as exc:  # whatever a malformed record raises, it is this record that is refused
        raise RecordError(f"malformed trajectory record: {exc!r}"[:1000]) from None


def _decided_at(value: Any, index: int) -> int | None:
    """A step's :attr:`Step.decided_at` as stored: none, or a count of the steps before it."""
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= index:
        raise RecordError(f"step {index}: decided_at is {value!r}, not a count of the steps before it")
    return value


def _check_turns(steps: tuple[Step, ...]) -> None:
    """Refuse turn marks no front end makes: a call decided before the step before it, unless in that step's
    turn, or a call built from the output of a call of its own turn (which its model had not seen)."""
    for index, step in enumerate(steps):
        decided = step.decided_at
        if decided is None or decided == index:
            continue
        if steps[index - 1].decided_at != decided:
            raise RecordError(f"step {index}: decided_at {decided} is not the turn of the step before it")
        for arg in step.arguments:
            if any(isinstance(a, Output) and a.step >= decided for a in all_args(arg)):
                raise RecordError(f"step {index}: an argument reads an output of its own turn")


def _finite(value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise RecordError(f"expected a finite number, found {number!r}")
    return number
