"""Where a replayed value comes from: the typed model of a recorded argument and its evaluation.

Every value a replay produces (a tool argument, an item inside one, a piece of a text, the agent's
answer) is recorded with its origin:

* :class:`Const`: a constant the agent chose (or a literal of the task, which is the same in every
  run of the task);
* :class:`Param`: a param of the call, possibly written in another :class:`~muscle_mem.model._forms.Form`;
* :class:`Output`: an earlier tool's output, or a value inside it; a value chosen from a list of
  several carries :class:`Pick` s, so the replay goes on only while position and identity choose
  the same element;
* :class:`Agree`: several origins at once; the replay goes on only while they give the same value;
* :class:`Guarded`: a value that depends on params in a way a replay cannot rebuild; it replays
  only while those params are unchanged;
* :class:`Template`: a text made of literal :class:`Text` and parts of the kinds above;
* :class:`Struct`: a list, tuple or dict some of whose items have origins.

:func:`evaluate` gives the live value in a run; it raises :class:`Unresolved` (or
:class:`Disagreement`, for origins that disagree) when the recorded form cannot be repeated.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from muscle_mem.errors import MuscleMemError
from muscle_mem.model import codec
from muscle_mem.model._forms import SAME, Form, FormError
from muscle_mem.model._json_texts import json_text_structure

PathKind = Literal["key", "attr", "item", "json"]
PathElement = tuple[PathKind, Any]
"""One step into a value: a dict key, a declared field, a list item, or ``("json", None)``, the
object or array a JSON text holds, read as ``json.loads`` reads it (as the agent read it)."""
JSON: PathElement = ("json", None)
_SCALARS = (str, int, float, bool, bytes, type(None))
SCALAR_TYPES = frozenset(_SCALARS)
"""The immutable scalar types: a value of one is used as it is, never copied."""


class Unresolved(MuscleMemError, LookupError):
    """A recorded value that this run cannot rebuild (a missing output, a changed param, ...)."""


class Disagreement(Unresolved):
    """A value recorded with several origins that give different values in this run."""


class Broken(Unresolved):
    """A recorded value whose evaluation failed in a way no run explains: its record is skipped."""


@dataclass(frozen=True, slots=True)
class Const:
    """A constant: the value the agent passed, the same in every replay."""

    value: Any


@dataclass(frozen=True, slots=True)
class Param:
    """A param's live value, written in ``form``."""

    name: str
    form: Form = SAME


SOLE = ""
"""The identity of a :class:`Pick` from a list of one element: the list must still hold just one."""


@dataclass(frozen=True, slots=True)
class Pick:
    """An element chosen from a list, bound by its position and its other fields.

    At ``depth`` in the path, the element must still be the one whose other fields digest to
    ``identity`` and no other element may share it (or, for :data:`SOLE`, the list must still hold
    one element).
    """

    depth: int
    identity: str


@dataclass(frozen=True, slots=True)
class Output:
    """The output of an earlier ``step``, or the value at ``path`` inside it, written in ``form``."""

    step: int
    path: tuple[PathElement, ...] = ()
    form: Form = SAME
    picks: tuple[Pick, ...] = ()


@dataclass(frozen=True, slots=True)
class Agree:
    """One value with several origins: replayed only while every origin gives the same value."""

    options: tuple[Arg, ...]


@dataclass(frozen=True, slots=True)
class Guarded:
    """A value that replays only while what it depends on is unchanged.

    The named params, and the outputs it was read from, must keep the values whose digests are
    recorded.
    """

    value: Arg
    params: tuple[tuple[str, str], ...] = ()
    """(param name, digest of the value it had when recorded)."""
    outputs: tuple[tuple[int, tuple[PathElement, ...], str], ...] = ()
    """(step, path, digest of the output value there when recorded): a text the value was read out of."""


@dataclass(frozen=True, slots=True)
class Text:
    """A literal piece of a template."""

    text: str


@dataclass(frozen=True, slots=True)
class Template:
    """A text built from literal pieces and pieces with origins (each written as text)."""

    parts: tuple[Text | Arg, ...]


@dataclass(frozen=True, slots=True)
class Struct:
    """A list, tuple or dict some of whose items have origins (dict keys are constants)."""

    container: Literal["list", "tuple", "dict"]
    items: tuple[tuple[Any, Arg], ...]


Arg: TypeAlias = Const | Param | Output | Agree | Guarded | Template | Struct
"""One recorded value with its provenance."""


def param_digest(value: Any) -> str:
    """What a :class:`Guarded` value records of a param: a digest, never the value."""
    try:
        return codec.fingerprint(value)
    except codec.CodecError:
        return f"unhashable:{type(value).__qualname__}"


def walk(value: Any, path: Sequence[PathElement]) -> Any:
    """The value at ``path`` inside ``value``, walking only what the recorder walks.

    A dict key of a mapping, an item of a list or tuple, a declared field of a named tuple, a
    dataclass or a pydantic model, what a JSON text holds: no other attribute, method or dunder is
    ever reached.
    """
    for kind, key in path:
        cls: Any = type(value)
        if kind == "key":
            if cls is not dict and (not isinstance(value, Mapping) or key not in value):
                raise KeyError(key)  # a mapping's own __missing__ (a defaultdict's) never runs
            value = value[key]
        elif kind == "item":
            if (cls is not list and cls is not tuple) and (
                not isinstance(value, list | tuple) or hasattr(value, "_fields")
            ):
                raise TypeError(f"{cls.__name__} has no items to walk")
            if key < 0:
                raise IndexError(key)
            value = value[key]
        elif kind == "attr" and key in declared_fields(cls):
            value = getattr(value, key)
        elif kind == "json" and cls is str:
            value = json_text_structure(value)
        else:
            raise TypeError(f"{cls.__name__} has no {kind} {key!r} to walk")
    return value


@functools.lru_cache(maxsize=1024)
def declared_fields(cls: Any) -> frozenset[str]:
    """The field names of a named tuple, a dataclass or a pydantic model class (none for others)."""
    names = getattr(cls, "_fields", None)
    if issubclass(cls, tuple) and isinstance(names, tuple):
        return frozenset(name for name in names if type(name) is str)
    if dataclasses.is_dataclass(cls):
        return frozenset(f.name for f in dataclasses.fields(cls))
    model_fields = getattr(cls, "model_fields", None)
    return frozenset(model_fields) if isinstance(model_fields, dict) else frozenset()


Direct = tuple[int, Any]
"""An argument a replay passes without evaluating it: ``(-1, value)`` for a constant scalar, ``(step, None)``
for the whole output of an earlier step."""
Fixed = tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]]
"""A call's positional values and keyword items when every argument is a constant scalar."""
DirectArguments = tuple[tuple[Direct, ...], tuple[tuple[str, Direct], ...], Fixed | None]
"""A call's positional and keyword arguments, each :data:`Direct`, and their values if all are constant."""


def direct_arguments(args: Sequence[Arg], kwargs: Sequence[tuple[str, Arg]]) -> DirectArguments | None:
    """How to pass each argument without :func:`evaluate` when all are constant scalars (the same in
    every run, and immutable: no copy is needed) or whole outputs (what ``evaluate`` gives for them
    too), else None."""
    positional: list[Direct] = []
    for arg in args:
        direct = _direct(arg)
        if direct is None:
            return None
        positional.append(direct)
    named: list[tuple[str, Direct]] = []
    for key, arg in kwargs:
        direct = _direct(arg)
        if direct is None:
            return None
        named.append((key, direct))
    fixed = None
    if all(step < 0 for step, _ in positional) and all(step < 0 for _, (step, _) in named):
        fixed = tuple(value for _, value in positional), tuple((key, value) for key, (_, value) in named)
    return tuple(positional), tuple(named), fixed


def _direct(arg: Arg) -> Direct | None:
    if type(arg) is Const and type(arg.value) in SCALAR_TYPES:
        return (-1, arg.value)
    if type(arg) is Output and not arg.path and not arg.picks and arg.form is SAME:
        return (arg.step, None)
    return None


def evaluate(arg: Arg, params: Mapping[str, Any], outputs: Sequence[Any]) -> Any:
    """The live value ``arg`` stands for in a run with these params and step outputs."""
    try:
        if type(arg) is Const and type(arg.value) in SCALAR_TYPES:  # the common cases first: a hit's cost
            return arg.value
        if type(arg) is Output and not arg.picks:
            value = walk(outputs[arg.step], arg.path)
            return value if arg.form is SAME else arg.form.render(value)
        return _evaluate(arg, params, outputs)
    except Unresolved:
        raise
    except (KeyError, IndexError, AttributeError, TypeError, FormError) as exc:
        raise Unresolved(f"{describe(arg)} cannot be resolved: {exc!r}") from None
    except Exception as exc:  # RecursionError, ...: a stored value this run cannot use, never a crash
        raise Broken(f"{_described(arg)} cannot be resolved: {type(exc).__name__}: {exc}"[:500]) from None


def _evaluate(arg: Arg, params: Mapping[str, Any], outputs: Sequence[Any]) -> Any:
    match arg:
        case Const(value):
            return value if isinstance(value, _SCALARS) else _fresh(value)
        case Param(name, form):
            return form.render(params[name])
        case Output(step, path, form, picks):
            value = outputs[step]
            for pick in picks:
                _check_pick(value, path, pick, step)
            return form.render(walk(value, path))
        case Agree(options):
            values = [_evaluate(option, params, outputs) for option in options]
            if any(not _same(values[0], other) for other in values[1:]):
                shown = ", ".join(f"{describe(o)} = {v!r}" for o, v in zip(options, values, strict=True))
                raise Disagreement(f"the recorded value has origins that now disagree ({shown})")
            return values[0]
        case Guarded(value, guards, sources):
            for name, digest in guards:
                if name not in params or param_digest(params[name]) != digest:
                    raise Unresolved(f"{describe(value)} depends on param {name!r}, which changed")
            for step, path, digest in sources:
                if param_digest(walk(outputs[step], path)) != digest:
                    raise Disagreement(
                        f"{describe(value)} was read out of step {step}'s output, which changed"
                    )
            return _evaluate(value, params, outputs)
        case Template(parts):
            return "".join(
                part.text if isinstance(part, Text) else _part_text(part, params, outputs) for part in parts
            )
        case Struct(container, items):
            if container == "dict":
                return {key: _evaluate(item, params, outputs) for key, item in items}
            values = [_evaluate(item, params, outputs) for _, item in items]
            return values if container == "list" else tuple(values)
    raise TypeError(f"not a recorded value: {arg!r}")


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _part_text(part: Arg, params: Mapping[str, Any], outputs: Sequence[Any]) -> str:
    """A template part as text; origins of a part agree when they read the same as text (``1`` and ``"1"``)."""
    if type(part) is not Agree:
        return _as_text(_evaluate(part, params, outputs))
    texts = [_as_text(_evaluate(option, params, outputs)) for option in part.options]
    if any(text != texts[0] for text in texts[1:]):
        shown = ", ".join(f"{describe(o)} = {t!r}" for o, t in zip(part.options, texts, strict=True))
        raise Disagreement(f"the recorded value has origins that now disagree ({shown})")
    return texts[0]


def _same(a: Any, b: Any) -> bool:
    """Whether two origins give one value: equal, and of one type (a text enum and its text are one)."""
    if isinstance(a, str) and isinstance(b, str):
        return str.__eq__(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, _SCALARS):
        return bool(a == b)
    try:
        return codec.fingerprint(a) == codec.fingerprint(b)
    except codec.CodecError:
        return False


def _check_pick(output: Any, path: tuple[PathElement, ...], pick: Pick, step: int) -> None:
    """Raise :class:`Disagreement` unless position and identity choose the same element."""
    container = walk(output, path[: pick.depth])
    kind, index = path[pick.depth]
    if kind != "item" or not isinstance(container, list | tuple):
        raise TypeError(f"a pick at depth {pick.depth} is not a choice from a list")
    if pick.identity == SOLE:
        if len(container) != 1:
            raise Disagreement(f"step {step}'s output held one element, and now holds {len(container)}")
        return
    rest = path[pick.depth + 1 :]
    chosen = container[index]
    if element_identity(chosen, rest) != pick.identity:
        raise Disagreement(
            f"step {step}'s output holds another element at position {index} than the one chosen when recorded"
        )
    twins = [other for other in container if element_identity(other, rest) == pick.identity]
    if len(twins) > 1 and not _told_apart_by_chosen(twins, rest):
        raise Disagreement(f"step {step}'s output holds {len(twins)} elements like the one chosen at {index}")


def _told_apart_by_chosen(twins: Sequence[Any], rest: tuple[PathElement, ...]) -> bool:
    """Whether elements alike but for the chosen value each hold another chosen value.

    Twins differ only in the value chosen out of them: the agent told them apart by their position or
    by that value, whose every equality (to a param, to an earlier leaf, to a sibling) the step's
    observation compares. The one at the recorded position is then the one a replay must choose; a
    chosen value held twice (whole elements alike) stays ambiguous. A value chosen whole (``rest``
    empty) is its element's identity: twins are then equal elements.
    """
    if not rest:
        return False
    try:
        values = [codec.digest(_plain(walk(twin, rest), None, 0)) for twin in twins]
    except (KeyError, IndexError, AttributeError, TypeError):
        return False
    return len(set(values)) == len(values)


_HOLE = "\x00chosen"


def element_identity(element: Any, rest: Sequence[PathElement]) -> str:
    """A digest of a list element with the chosen value (at ``rest`` inside it) left out.

    When the element is itself the value chosen, the digest is of the element: a text picked from a
    list of texts is known only by its value.
    """
    return codec.digest(_plain(element, tuple(rest) if rest else None, 0))


def _plain(value: Any, hole: tuple[PathElement, ...] | None, depth: int) -> Any:
    """``value`` as plain JSON-like data for a digest, with the value at ``hole`` blanked."""
    if hole == ():
        return _HOLE
    if depth > 6:
        return repr(type(value))
    head = hole[0][1] if hole else None
    tail = hole[1:] if hole else None
    found = list(children(value))
    if found or isinstance(value, Mapping | list | tuple):
        plain = [(key, _plain(child, tail if key == head else None, depth + 1)) for (_, key), child in found]
        if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
            return [item for _, item in plain]
        return {str(key): item for key, item in sorted(plain, key=lambda kv: repr(kv[0]))}
    try:
        return codec.encode(value)
    except codec.CodecError:
        return repr(type(value))


def children(value: Any) -> Iterator[tuple[PathElement, Any]]:
    """The values directly inside ``value`` with the path element that reaches each.

    These are the items of a dict (str or int keys) or a list, and the fields of a named tuple, a
    dataclass (its public ones) or a pydantic model.
    """
    kind = type(value)
    if kind in SCALAR_TYPES:
        return  # the common case, and the slowest through the checks below
    if kind is list or kind is tuple:
        for index, item in enumerate(value):
            yield ("item", index), item
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str | int) and not isinstance(key, bool):
                yield ("key", key), item
    elif isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        for index, item in enumerate(value):
            yield ("item", index), item
    elif hasattr(value, "_fields"):
        for name in value._fields:
            yield ("attr", name), getattr(value, name)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if not field.name.startswith("_"):  # a stored path walks public names only
                yield ("attr", field.name), getattr(value, field.name)
    elif isinstance(getattr(type(value), "model_fields", None), dict) and not isinstance(value, type):
        for name in type(value).model_fields:
            yield ("attr", name), getattr(value, name)


def _fresh(value: Any) -> Any:
    """A copy of a stored constant for one replay, made without running any code of its classes.

    Plain data (lists, dicts, tuples of scalars) is copied directly; anything else is decoded anew,
    so a class allowed since it was read is rebuilt now. A constant that still does not decode as
    its class is not passed on.
    """
    try:
        return _plain_copy(value)
    except _NotPlain:
        pass
    fresh = codec.decode(codec.encode(value))
    if codec.holds_opaque(fresh):
        raise Unresolved(f"a stored {type(value).__name__} does not decode as its class here")
    return fresh


class _NotPlain(Exception):
    """Raised by :func:`_plain_copy` at a value that is not plain data."""


def _plain_copy(value: Any) -> Any:
    """A deep copy of lists, dicts and tuples of scalars; raises :class:`_NotPlain` at anything else."""
    kind = type(value)
    if kind in SCALAR_TYPES:
        return value
    if kind is list:
        return [_plain_copy(item) for item in value]
    if kind is dict:
        return {_plain_key(key): _plain_copy(item) for key, item in value.items()}
    if kind is tuple:
        return tuple([_plain_copy(item) for item in value])
    raise _NotPlain


def _plain_key(key: Any) -> Any:
    if type(key) not in SCALAR_TYPES:
        raise _NotPlain
    return key


def _described(arg: Arg) -> str:
    """:func:`describe`, or the kind of value if even describing it fails."""
    try:
        return describe(arg)
    except Exception:
        return f"a stored {type(arg).__name__}"


def readable(value: object) -> str:
    """``repr(value)``, or what the value is if it cannot be written out (an int of more digits than
    Python converts to text)."""
    try:
        return repr(value)
    except ValueError:
        return f"<a {type(value).__name__} too large to show>"


def describe(arg: Arg | Text) -> str:
    """A short human-readable form, as the CLI shows it."""
    match arg:
        case Const(value):
            return readable(value)
        case Param(name, form):
            return f"params[{name!r}]" + _form_suffix(form)
        case Output(step, path, form, picks):
            where = _path_text(path)
            chosen = " (chosen element)" if picks else ""
            return f"step{step}.output{where}{_form_suffix(form)}{chosen}"
        case Agree(options):
            return "agree(" + ", ".join(describe(o) for o in options) + ")"
        case Guarded(value, guards, sources):
            watched = [f"params[{n!r}]" for n, _ in guards] + [
                f"step{s}.output{_path_text(p)}" for s, p, _ in sources
            ]
            return f"{describe(value)} while {' and '.join(watched)} unchanged"
        case Template(parts):
            text = "".join(
                part.text.replace("{", "{{").replace("}", "}}")
                if isinstance(part, Text)
                else "{"
                + (part.name if isinstance(part, Param) and part.form == SAME else describe(part))
                + "}"
                for part in parts
            )
            return f"f{text!r}"
        case Struct(container, items):
            inner = ", ".join(
                f"{k!r}: {describe(a)}" if container == "dict" else describe(a) for k, a in items
            )
            return "{" + inner + "}" if container == "dict" else f"{container}([{inner}])"
        case Text(text):
            return repr(text)
    raise TypeError(f"not a recorded value: {arg!r}")


def _path_text(path: Sequence[PathElement]) -> str:
    return "".join("" if k == "json" else f".{v}" if k == "attr" else f"[{v!r}]" for k, v in path)


def _form_suffix(form: Form) -> str:
    return "" if form == SAME else f" as {form.describe()}"


def nested(arg: Arg) -> list[Arg]:
    """The values directly inside ``arg`` (options, parts, items)."""
    match arg:
        case Agree(options):
            return list(options)
        case Guarded(value, _, _):
            return [value]
        case Template(parts):
            return [p for p in parts if not isinstance(p, Text)]
        case Struct(_, items):
            return [a for _, a in items]
    return []


def all_args(arg: Arg) -> list[Arg]:
    """``arg`` and every value inside it, outermost first."""
    found = [arg]
    for inner in nested(arg):
        found += all_args(inner)
    return found
