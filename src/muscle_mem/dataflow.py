"""From a finished run to a trajectory: params, templates and data-flow references.

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

A value equal to a param wins over an output reference (params are declared by the caller); an
output reference wins over a template (a string that came from a tool and happens to contain a param
value is that tool's fresh output at replay). A run that a replay could not repeat faithfully is
refused (:class:`Unreplayable`): a param or an output hidden in a constant it cannot rebuild, a value
equal to two params.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import uuid
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from muscle_mem import codec
from muscle_mem.keys import (
    MIN_TEMPLATE_LENGTH,
    MIN_UNBOUNDED_LENGTH,
    params_equal_to,
    split_parts,
    whole_number,
    whole_word,
)
from muscle_mem.recording import MAX_INDEXED_PER_OUTPUT, NOT_CAPTURED, Run
from muscle_mem.secrecy import plain_params
from muscle_mem.trajectory import (
    Arg,
    PathElement,
    Snapshot,
    Step,
    TemplatePart,
    Trajectory,
    output_fields,
    output_of,
    output_part,
)

MIN_REFERENCE_STRING = 4
MIN_REFERENCE_INT = 1000
_ID_SUFFIXES = ("Id", "ID", "Ids", "IDs")


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
        for _, child in itertools.islice(_children(value), MAX_INDEXED_PER_OUTPUT):
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
        self.texts: dict[str, _Origin] = {}
        self.words: dict[str, _Origin] = {}
        """Plain words (see :func:`_plain_word`) that outputs returned: met as words in a later string,
        they become guarded template parts (a replay goes on only if the word is the same)."""
        """Distinctive output texts (see :func:`_distinctive`), by where they came from: found as whole
        words inside a later string, they become template parts (the latest wins)."""

    def add_output(self, step: int, output: Any) -> None:
        budget = [MAX_INDEXED_PER_OUTPUT]

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
                if isinstance(value, str | uuid.UUID) or (
                    isinstance(value, int) and not isinstance(value, bool)
                ):
                    text = str(value)
                    found = self.texts if _distinctive(text) else self.words if _plain_word(text) else None
                    if found is not None:
                        known = found.get(text)
                        if known is None or origin.id_like or not known.id_like:
                            found[text] = origin
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


def _distinctive(text: str) -> bool:
    """Whether an output's text, met inside a later string, is that output rather than a coincidence:
    4 characters or more with a digit, ``@``, ``-``, ``_``, ``/`` or ``.`` (an id, an e-mail, a number,
    a UUID, a path)."""
    return len(text) >= MIN_REFERENCE_STRING and any(c.isdigit() or c in "@-_/." for c in text)


def _plain_word(text: str) -> bool:
    """A word of letters only, 4 or more (a name ``Alice``, a status ``shipped``): met in a later
    string, it may be data flow (``Order status: shipped``) or a coincidence (``Thanks for your
    business!``); as a guarded part, either replays right while the word stays, and misses once it
    changes."""
    return len(text) >= MIN_REFERENCE_STRING and text.isalpha()


def _origin_text(part: TemplatePart) -> str:
    return f"step {output_of(part[1])[0]}" if part[0] == "output" else f"param {part[1]!r}"


def _same_number(needle: str, found: str) -> bool:
    """Whether a number left in a text is ``needle`` written another way (``2.00`` for ``2``,
    ``1042.50`` for ``1042``): the same value, or an integer's digits before a decimal point."""
    if float(found) == float(needle):
        return True
    whole = needle.lstrip("+-")
    return whole.isdigit() and "." in found and found.lstrip("+-").split(".")[0] == whole


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


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
            parts = self._template(value)
            if parts is not None:
                return Arg.template(parts)
        converted = self._converted_param(value)
        if converted is not None:
            raise Unreplayable(
                f"{where} equals param {converted!r} converted to a number: a replay could not tell"
            )
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

    def _template(self, text: str) -> tuple[TemplatePart, ...] | None:
        """``text`` as literal, output and param parts, or None if nothing in it is either.

        Distinctive text of earlier outputs, plain words they returned (guarded: see
        :func:`output_part`), numbers of params where they stand whole, and string params are found
        together, longest first (a param first among equals), so one never cuts another. A number of a param or an output written
        in another form (``1042.00``), left in the text, is refused.
        """
        needles: list[tuple[str, re.Pattern[str], TemplatePart]] = [
            (found, whole_number(found), output_part(origin.step, origin.path))
            for found, origin in self.provenance.texts.items()
            if found in text
        ]
        needles += [
            (word, whole_word(word), output_part(origin.step, origin.path, guard=word))
            for word, origin in self.provenance.words.items()
            if word in text
        ]
        for name, value in self.params.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                needles.append((str(value), whole_number(str(value)), ("param", name)))
            elif isinstance(value, str) and len(value) >= MIN_TEMPLATE_LENGTH and value in text:
                pattern = (
                    re.compile(re.escape(value)) if len(value) >= MIN_UNBOUNDED_LENGTH else whole_word(value)
                )
                needles.append((value, pattern, ("param", name)))
        parts: list[TemplatePart] = [("text", text)]
        for _, pattern, part in sorted(
            needles, key=lambda needle: (-len(needle[0]), needle[2][0] != "param")
        ):
            parts = split_parts(parts, pattern, part)
        left = " ".join(part for kind, part in parts if kind == "text")
        numbers_left = _NUMBER.findall(left) if any(c.isdigit() for c in left) else []
        for needle, _, part in needles:
            other_form = (
                any(_same_number(needle, number) for number in numbers_left)
                if _NUMBER.fullmatch(needle)
                else part[0] == "output" and output_fields(part[1])[2] is None and needle in left
            )
            if other_form:
                raise Unreplayable(
                    f"{needle!r} (from {_origin_text(part)}) is written in a form a replay could not rebuild"
                )
        return tuple(parts) if any(kind != "text" for kind, _ in parts) else None

    def _converted_param(self, value: Any) -> str | None:
        """The name of a string param that ``value`` (a number) is the number of, if any."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        for name, param in self.params.items():
            if isinstance(param, str) and _NUMBER.fullmatch(param.strip()) and float(param) == value:
                return name
        return None

    def _hidden_reference(self, value: Any) -> str | None:
        """What a constant hides that a replay would have to change: a param value or an earlier
        output, deep inside a value that is not a list, tuple or dict of str or int keys."""
        stack = [(path_element, child, 1) for path_element, child in _children(value)]
        budget = MAX_INDEXED_PER_OUTPUT
        while stack and budget > 0:
            budget -= 1
            (_, name), child, depth = stack.pop()
            names = params_equal_to(child, self.params)
            if names:
                return f"the value of param {names[0]!r} is"
            if isinstance(child, str) and self._template(child) is not None:
                return "a param's value or an earlier output is"
            if self._converted_param(child) is not None:
                return "a param converted to a number is"
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
