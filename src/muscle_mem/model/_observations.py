"""What a step's output showed the agent: its leaves, and the key a replay compares them by.

An agent decides its next call from what its tools returned. A replay may make the recorded next call
only where the agent's own runs show it would: after each replayed step, the step's fresh output is
flattened into leaves (every value at every path, list lengths and empty mappings included; dict key
order is not an observation) and compared with what the recorded runs of that step saw.

A leaf that is an **identity** (a value that names a thing: an id, a handle, a path, a name; never a
plain number, a date, a category word or prose) and that flowed on only as a copy into a later
argument or the answer is masked: data flow rebuilds what depends on it. It is written by where an
equal value was first seen in the run (a param, an earlier leaf) so the equalities it takes part in
still hold. Every other leaf is written as it is: floats to 12 significant digits, so float noise is
equal and nothing wider is.

The masked leaves make an observation's :attr:`Observation.key`: a replay whose output has the same
key as a recorded run's saw the same thing, up to identities. The leaves themselves are kept too
(texts that may name a person or hold prose as digests only) for :mod:`muscle_mem.model._evidence`, which
decides what several runs showed not to matter.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model._json_texts import JsonDecimal, JsonObject, json_structure, looks_like_json
from muscle_mem.model._leaf_kinds import (
    ID_PREFIX,
    MEMO_LENGTH,
    NUMBER_TEXT,
    Leaf,
    can_name,
    digest,
    element_text,
    forms_of,
    free_forms,
    is_identity,
    key_order,
    seconds_of,
    text_kind,
    text_shape,
    words_pattern,
)
from muscle_mem.model.provenance import (
    SCALAR_TYPES,
    children,
)

MAX_LEAVES = 512
"""Leaves kept one by one per observation; the rest are folded into one digest (a change there stops a replay)."""

MAX_DEPTH = 8
"""How deep an output is walked; below that a value is one folded leaf."""

MAX_STATE = 256
"""Attributes read for the digest of one object the codec cannot encode; past them it is unseen."""

MIN_ECHO = 1
"""The shortest free value masked where a later leaf repeats it (shorter ones repeat by chance)."""


@dataclass(frozen=True, slots=True)
class Observation:
    """What one recorded run saw in one step's output (or in its params, before its first step)."""

    key: str
    """The digest of the masked leaves: equal keys saw the same thing, up to identities."""
    identities: frozenset[str] = frozenset()
    """The paths of the leaves masked as identities."""
    leaves: tuple[Leaf, ...] = ()


_NO_IDENTITIES: frozenset[str] = frozenset()

_WHOLE = frozenset({""})
"""The identities of an output masked whole."""


class Flat:
    """An output flattened once: each leaf's path, kind, value written for the key, and label."""

    __slots__ = ("leaves", "numbers", "raw")

    def __init__(self) -> None:
        self.leaves: list[tuple[str, str, Any, str, str]] = []
        """``(path, kind, value, written, label)``."""
        self.raw: dict[str, Any] = {}
        """The texts and ints as they are, by path (what a later leaf may repeat)."""
        self.numbers: list[tuple[str, float]] = []
        """The numeric leaves (for the relations with numeric params)."""


class Observer:
    """Flattens a run's params and outputs in order, remembering where each value was first seen."""

    __slots__ = ("_free", "_pattern", "_seen", "bound_numbers", "hidden", "params")

    def __init__(self, params: Mapping[str, Any], hidden: Iterable[Any] = ()) -> None:
        self.params = params
        self.hidden: frozenset[Any] = frozenset()
        """Secret values: always masked, never kept."""
        if hidden:
            self.hide(hidden)
        self._seen: dict[Any, str] = {}
        self.bound_numbers: tuple[tuple[str, float], ...] = ()
        """The numeric params bound by the run (free); a step's key keeps each number's order to them."""
        self._free: dict[str, str] = {}
        """Values already free (bound params, identities), as texts, by where they were first seen."""
        self._pattern: re.Pattern[str] | None = None

    def free(self, values: Iterable[tuple[str, Any]]) -> None:
        """Treat these values as free from now on: a leaf repeating one, whole or as a word in a text, is masked."""
        free = self._free
        for place, value in values:
            if isinstance(value, datetime.date):
                value = value.isoformat()
            if (type(value) is int or type(value) is str) and len(str(value)) >= MIN_ECHO:
                free.setdefault(str(value), place)
            if type(value) is str:
                for form in free_forms(value) if len(value) <= MEMO_LENGTH else forms_of(value):
                    free.setdefault(form, place)
        self._pattern = None  # made again when a text next needs it

    def _words(self) -> re.Pattern[str]:
        """Where a free value stands as a word of its own in a text (longest first)."""
        if self._pattern is None:
            self._pattern = words_pattern(tuple(self._free))
        return self._pattern

    def free_params(self, names: Iterable[str]) -> None:
        """Treat these params' values as free (the params a run bound), in the order of their names."""
        self.free((f"p:{name}", self.params[name]) for name in sorted(names) if name in self.params)

    def free_leaves(self, step: int, flat: Flat, identities: frozenset[str]) -> None:
        """Treat the values of a step's identities as free, in the order of the output's leaves."""
        self.free(
            (f"{step}:{path}", flat.raw[path])
            for path, *_ in flat.leaves
            if path in identities and path in flat.raw
        )

    def hide(self, hidden: Iterable[Any]) -> None:
        """Mask these secret values too (a secret output noted since)."""
        self.hidden = frozenset(_hashable(v) for v in hidden)

    def flatten_params(self) -> Flat:
        """The params as the first observation of a run (each at path ``{name}``)."""
        flat = Flat()
        for name in sorted(self.params):
            self._walk(self.params[name], "{" + name + "}", 0, flat, f"p:{name}")
        return flat

    def int_key(self, step: int, output: int, identities: frozenset[str]) -> str:
        """What :meth:`flatten`, :func:`key_of` and :meth:`free_leaves` make of an output that is one int, in one step.

        Only for an observer without bound numbers or secrets (the caller checks): a hit's common case.
        """
        memo = (int, output)
        seen = self._seen
        label = seen.get(memo, "")
        if not label:
            seen[memo] = f"{step}:"
        text = int.__repr__(output)
        free = self._free
        if free:
            echoed = free.get(text)
            if echoed is not None:
                return _part_key("=#=" + echoed)
        if "" not in identities:
            return _part_key("=n" + text)
        free.setdefault(text, f"{step}:")
        self._pattern = None
        return _part_key("=#" + label)

    def scalar_observation(
        self, step: int, output: Any, copied: tuple[str, ...], into_calls: tuple[str, ...]
    ) -> Observation:
        """What :func:`observe_run` makes of an output that is one scalar, without walking a tree for it.

        ``copied``, ``into_calls``: the paths the run copied out of the output (into a later call).
        """
        flat = Flat()
        self._leaf(output, "", flat, f"{step}:")
        identities = _WHOLE if is_identity(flat.leaves[0], flat.raw, copied, into_calls) else _NO_IDENTITIES
        bound = self.bound_numbers
        observation = Observation(
            key_of(flat, identities, bound), identities, kept_leaves(flat, identities, bound)
        )
        if identities and "" in flat.raw:
            self.free(((f"{step}:", flat.raw[""]),))
        return observation

    def int_observation(self, step: int, output: int, copied: bool) -> Observation:
        """What :func:`observe_run` makes of an output that is one int (``copied``: whole into a later call).

        Only for an observer without bound numbers or secrets (the caller checks): a miss's common case.
        It is what :meth:`scalar_observation` makes of the int.
        """
        memo = (int, output)
        seen = self._seen
        label = seen.get(memo)
        if label is None:  # a place is never empty
            label = ""
            seen[memo] = f"{step}:"
        free = self._free
        echoed = free.get(int.__repr__(output)) if free else None
        if echoed is not None:  # a free value repeated: free too, its equality kept
            label = "=" + echoed
        elif not copied or output < 1:
            found = _INT_OBSERVATIONS.get((output, label))
            if found is None:
                if len(_INT_OBSERVATIONS) >= _SCALAR_KEYS_KEPT:
                    _INT_OBSERVATIONS.clear()
                found = _INT_OBSERVATIONS[(output, label)] = Observation(
                    _part_key("=n" + int.__repr__(output)), _NO_IDENTITIES, (("", "n", output, label),)
                )
            return found
        else:
            free.setdefault(int.__repr__(output), f"{step}:")
            self._pattern = None
        found = _MASKED_OBSERVATIONS.get(label)
        if found is None:
            if len(_MASKED_OBSERVATIONS) >= _SCALAR_KEYS_KEPT:
                _MASKED_OBSERVATIONS.clear()
            found = _MASKED_OBSERVATIONS[label] = Observation(
                _part_key("=#" + label), _WHOLE, (("", "#", None, label),)
            )
        return found

    def flatten(self, step: int, output: Any) -> Flat:
        """One step's output, flattened; its values are remembered for the labels of later leaves."""
        flat = Flat()
        self._walk(output, "", 0, flat, f"{step}:")
        return flat

    def _walk(self, value: Any, path: str, depth: int, flat: Flat, place: str) -> None:
        kind = type(value)
        if kind is str and depth < MAX_DEPTH and looks_like_json(value):
            structure = json_structure(value)
            if structure is not None:  # a JSON text: compared value by value, as the record it holds
                self._walk(structure, path, depth + 1, flat, place)
                return
        if kind in SCALAR_TYPES or not _has_children(value):
            self._leaf(value, path, flat, place)
            return
        if depth >= MAX_DEPTH:
            folded = _fingerprint(value)
            flat.leaves.append((path, "x", folded, "x" + folded, ""))
            return
        if isinstance(value, Mapping):
            if kind is JsonObject and len(value) > 1:  # the order a reader of the text met the keys in
                order = digest(repr(list(value)))
                flat.leaves.append((path + ".keys()", "x", order, "x" + order, ""))
            pairs = list(children(value))
            items = [pairs[i] for i in key_order(tuple(element[1] for element, _ in pairs))]
            if not items and not value:
                flat.leaves.append((path, "e", None, "e", ""))
            if len(pairs) != len(value):  # keys a path cannot name (an enum, a tuple, a bool): digested
                named = {element[1] for element, _ in pairs}
                rest = _fingerprint([(key, item) for key, item in value.items() if key not in named])
                flat.leaves.append((path + "{…}", "x", rest, "x" + rest, ""))
        else:
            items = list(children(value))
            if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
                flat.leaves.append((path, "l", len(value), f"l{len(value)}", ""))
            else:  # a dataclass or a model: what its public fields leave out (private ones) is digested
                private = _unnamed_state(value, {element[1] for element, _ in items})
                if private is not None:
                    flat.leaves.append((path + ".…", "x", private, "x" + private, ""))
        for element, child in items:
            self._walk(child, path + element_text(element), depth + 1, flat, place)

    def _leaf(self, value: Any, path: str, flat: Flat, place: str) -> None:
        kind = type(value)
        label = ""
        if kind is bool or value is None:
            flat.leaves.append((path, "b", value, "b" + repr(value), ""))
            return
        if kind is JsonDecimal:  # a JSON number as written: its value for ranges, its text for the key
            number = float(value)
            flat.leaves.append((path, "q", number, "j" + str.__str__(value), ""))
            flat.numbers.append((path, number))
            return
        if self.hidden and _hashable(value) in self.hidden:
            flat.leaves.append((path, "#", None, "#secret", "secret"))
            return
        if kind is int or kind is str:
            flat.raw[path] = value
            memo = (kind, value)
            label = self._seen.get(memo, "")
            if not label:
                self._seen[memo] = place + path
            if kind is str:
                if (prefix := ID_PREFIX.match(value)) is not None:
                    label += "~" + prefix.group(0)  # an id's kind (usr_, svc_) is kept with it
                label += text_shape(value)  # and its shape: blanks around it, several words
            if self._free:
                echoed = self._free.get(str(value))
                if echoed is not None:  # a free value repeated: free too, its equality kept
                    flat.leaves.append((path, "#", None, "#=" + echoed, "=" + echoed))
                    return
        if kind is int:
            flat.leaves.append((path, "n", value, "n" + int.__repr__(value), label))
            flat.numbers.append((path, float(value)))
        elif kind is float or isinstance(value, decimal.Decimal):
            number = float(value)
            if math.isfinite(number):
                flat.leaves.append((path, "n", number, "n" + format(number, ".12g"), label))
                flat.numbers.append((path, number))
            else:
                flat.leaves.append((path, "p", digest(repr(number)), "p" + repr(number), label))
        elif kind is str:
            self._text(value, path, flat, label)
        elif isinstance(value, datetime.datetime | datetime.date):
            text = value.isoformat()
            flat.raw[path] = value
            echoed = self._free.get(text) if self._free else None
            if echoed is not None:  # a free date repeated: free too, its equality kept
                flat.leaves.append((path, "#", None, "#=" + echoed, "=" + echoed))
                return
            self._text(text, path, flat, label)
        elif isinstance(value, uuid.UUID):
            flat.leaves.append((path, "i", digest(str(value)), "i" + str(value), label))
        elif isinstance(value, bytes | bytearray):
            flat.leaves.append((path, "p", digest(bytes(value).hex()), "p" + bytes(value).hex(), label))
        elif type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
            self._leaf(value.item(), path, flat, place)  # a numpy scalar: the Python value it holds
        else:
            folded = _fingerprint(value)
            flat.leaves.append((path, "x", folded, "x" + folded, ""))

    def _text(self, text: str, path: str, flat: Flat, label: str) -> None:
        if not text.strip():  # an empty or blank text says "none", as None does: never an identity
            flat.leaves.append((path, "b", text, "b" + repr(text), label))
            return
        pattern = self._words() if self._free else None
        if pattern is not None and len(text) > MIN_ECHO and text_kind(text) != "i":
            masked = pattern.sub(lambda m: "{" + self._free[m.group(0)] + "}", text)
            if masked != text:  # free values written into a text: the rest of it is compared
                flat.leaves.append((path, "p", digest(masked), "p" + repr(masked), label))
                return
        kind = text_kind(text)
        written = kind + repr(text)
        if kind in ("d", "s"):
            seconds = seconds_of(text)
            if seconds is None:
                flat.leaves.append((path, "p", digest(text), written, label))
                return
            flat.leaves.append((path, kind, seconds, written, label))
            flat.numbers.append((path, seconds))
        elif kind == "q":
            number = float(text)
            flat.leaves.append((path, "q", number, written, label))
            flat.numbers.append((path, number))
        elif kind == "w":
            flat.leaves.append((path, "w", text, written, label))
        elif kind == "p" and text.endswith("%") and NUMBER_TEXT.match(text[:-1].rstrip()):
            # a percentage ("20%"): a number written as a text (ranges, relations, a rate), its key as before
            flat.leaves.append((path, "q", float(text[:-1].rstrip()), written, label))
        else:
            flat.leaves.append((path, kind, digest(text), written, label))


def key_of(flat: Flat, identities: frozenset[str], bound_numbers: Iterable[tuple[str, float]] = ()) -> str:
    """The key of a flattened observation with these identities masked.

    With numeric params bound by the run (free to change), each numeric leaf that is not an identity
    keeps its order to each of them: an amount read from a tool still covers the amount asked for.
    """
    if not bound_numbers and len(flat.leaves) == 1:  # one part: its hash remembered (a hit's common case)
        return _part_key(_part(flat.leaves[0], identities))
    parts = [_part(leaf, identities) for leaf in flat.leaves]
    parts += [f"{path}?{name}{sign}" for path, name, sign in _orders(flat.numbers, identities, bound_numbers)]
    return codec.hash_text("\x1f".join(parts))


def _part(leaf: tuple[str, str, Any, str, str], identities: frozenset[str]) -> str:
    """A leaf as a key writes it: its path, and its value, or for an identity what it equals."""
    path, kind, value, written, label = leaf
    return f"{path}=#{label}" if path in identities and can_name(kind, value) else f"{path}={written}"


def _orders(
    numbers: Iterable[tuple[str, float]],
    identities: frozenset[str],
    bound_numbers: Iterable[tuple[str, float]],
) -> Iterator[tuple[str, str, str]]:
    """Each numeric leaf's order to each bound number param: ``(path, param, sign)``."""
    for name, number in bound_numbers:
        for path, leaf in numbers:
            if path not in identities:
                yield path, name, sign_of(leaf - number)


def params_leaves(flat: Flat, identities: frozenset[str], *, labelled: bool = False) -> tuple[Leaf, ...]:
    """The leaves a run's params observation keeps: :func:`kept_leaves`, and the order of every two numbers among them.

    Each order is a leaf of its own (``{a}?{b}``, kind ``r``), as :func:`params_key` holds it, so a
    param the run bound (masked, free) keeps its order to the other params (a quantity to release
    under the total booked, a deposit under the budget), as a bound param keeps its order to each
    output. ``labelled``: as for :func:`kept_leaves`.
    """
    orders = [(f"{a}?{b}", "r", sign, "") for a, b, sign in _pair_orders(flat.numbers[:MAX_LEAVES])]
    return (*kept_leaves(flat, identities, labelled=labelled), *orders)


def _pair_orders(numbers: Sequence[tuple[str, float]]) -> Iterator[tuple[str, str, str]]:
    """The order of every two numbers, each pair once: ``(path, other path, sign)``."""
    for i, (a, x) in enumerate(numbers):
        for b, y in numbers[i + 1 :]:
            yield a, b, sign_of(x - y)


def params_key(flat: Flat, identities: frozenset[str]) -> str:
    """The key of a run's params: unbound ones as they are, bound ones masked, and the order of every two numbers."""
    parts = [_part(leaf, identities) for leaf in flat.leaves]
    parts += [f"{a}?{b}{sign}" for a, b, sign in _pair_orders(flat.numbers)]
    return codec.hash_text("\x1f".join(parts))


LABELLED_KINDS = frozenset({"w", "i", "q", "n"})
"""The kinds of leaf a record keeps the label of (what the value equals, its id kind, its shape) unmasked."""


def kept_leaves(
    flat: Flat,
    identities: frozenset[str],
    bound_numbers: Iterable[tuple[str, float]] = (),
    *,
    labelled: bool = False,
) -> tuple[Leaf, ...]:
    """The leaves a record keeps (identities masked; at most :data:`MAX_LEAVES`, the rest folded).

    Every value kept is one the observation's key holds, so any run filed under that key kept the
    same: a masked value keeps only its label, and each numeric leaf's order to each bound numeric
    param is kept as a leaf of its own (``['limit']?amount``, kind ``r``). ``labelled``: every leaf
    keeps its label (what a replay saw, compared where runs masked an identity of any kind).
    """
    leaves: list[Leaf] = []
    for path, kind, value, _, label in flat.leaves[:MAX_LEAVES]:
        if kind == "#" or (path in identities and can_name(kind, value)):
            leaves.append((path, "#", None, label))
        else:
            leaves.append((path, kind, value, label if labelled or kind in LABELLED_KINDS else ""))
    for path, name, sign in _orders(flat.numbers[:MAX_LEAVES], identities, bound_numbers):
        leaves.append((f"{path}?{name}", "r", sign, ""))
    rest = flat.leaves[MAX_LEAVES:]
    if rest:
        text = "\x1f".join(f"{p}={w}" for p, _, _, w, _ in rest)
        leaves.append(("…", "x", digest(text), ""))
    return tuple(leaves)


EQUAL_WITHIN = 1e-9
"""How close two numbers are to be in no order (:func:`sign_of`)."""


def sign_of(difference: float) -> str:
    """How two numbers are ordered, by their difference: ``<``, ``=`` (within :data:`EQUAL_WITHIN`) or ``>``."""
    if abs(difference) <= EQUAL_WITHIN:
        return "="
    return "<" if difference < 0 else ">"


_SCALAR_KEYS: dict[str, str] = {}

_SCALAR_KEYS_KEPT = 4096


def _part_key(part: str) -> str:
    """The key of an observation of one part (``hash_text`` of it), remembered for recent ones."""
    found = _SCALAR_KEYS.get(part)
    if found is None:
        if len(_SCALAR_KEYS) >= _SCALAR_KEYS_KEPT:
            _SCALAR_KEYS.clear()
        found = _SCALAR_KEYS[part] = codec.hash_text(part)
    return found


def scalar_key(value: Any) -> str:
    """The key of an output that is one scalar, with nothing masked and no bound number to compare it to."""
    memo = (type(value), value)
    try:
        found = _SCALAR_OUTPUTS.get(memo)
    except TypeError:  # unhashable: not a plain scalar after all
        found = None
    if found is None:
        found = key_of(Observer({}).flatten(0, value), frozenset())
        if len(_SCALAR_OUTPUTS) >= _SCALAR_KEYS_KEPT:
            _SCALAR_OUTPUTS.clear()
        _SCALAR_OUTPUTS[memo] = found
    return found


_SCALAR_OUTPUTS: dict[tuple[type, Any], str] = {}

_INT_OBSERVATIONS: dict[tuple[int, str], Observation] = {}
"""The observations of an int output nothing masks, by the int and its label, for recent ones (they are immutable)."""

_MASKED_OBSERVATIONS: dict[str, Observation] = {}
"""The observations of an output masked whole, by its label, for recent ones (they are immutable)."""


def _has_children(value: Any) -> bool:
    if isinstance(value, Mapping | list | tuple):
        return True
    return next(children(value), None) is not None


def _fingerprint(value: Any) -> str:
    """A digest of everything ``value`` holds, as far as it can be read (see :func:`_state_fingerprint`)."""
    return _state_fingerprint(value, [0])


def _state_fingerprint(value: Any, spent: list[int], depth: int = 0) -> str:
    """The digest of a value the codec cannot encode: its type and what it holds, private attributes included.

    What it holds: a container's items, an object's ``__dict__`` and ``__slots__``, the value of a
    subclass of a built-in type (a ``str`` or an ``int`` of its own), an exception's arguments. An
    object none of which can be read (a handle of a C library), or one too large or deep to read, is
    *unseen*: it gets a digest of its own, equal to no other, so a replay stops after the step that
    returned it, as after a changed value. Two such objects cannot be told apart, so neither may be
    taken for the other.
    """
    spent[0] += 1
    if depth >= MAX_DEPTH or spent[0] > MAX_STATE:
        return _unseen()
    try:
        return codec.fingerprint(value)
    except codec.CodecError:
        pass
    deeper = depth + 1
    parts = [f"{type(value).__module__}.{type(value).__qualname__}"]
    if isinstance(value, Mapping):
        parts += [
            f"{_state_fingerprint(k, spent, deeper)}:{_state_fingerprint(v, spent, deeper)}"
            for k, v in value.items()
        ]
    elif isinstance(value, list | tuple):
        parts += [_state_fingerprint(item, spent, deeper) for item in value]
    elif isinstance(value, set | frozenset):
        parts += sorted(_state_fingerprint(item, spent, deeper) for item in value)
    state = _attributes(value)
    base = _builtin_value(value)
    if state is None and base is None and len(parts) == 1 and not isinstance(value, BaseException):
        return _unseen()
    if base is not None:
        parts.append(f"={_state_fingerprint(base, spent, deeper)}")
    if isinstance(value, BaseException):
        parts.append(f"args={_state_fingerprint(list(value.args), spent, deeper)}")
    for name, attribute in state or ():
        parts.append(f"{name}={_state_fingerprint(attribute, spent, deeper)}")
    return digest("\x1f".join(parts))


def _unseen() -> str:
    """A digest equal to no other: for a value whose state cannot be read."""
    return "unseen:" + uuid.uuid4().hex


def _builtin_value(value: Any) -> Any:
    """The built-in value of a subclass of a built-in scalar type, or of a complex number (None for others)."""
    kind = type(value)
    if isinstance(value, str) and kind is not str:
        return str(value)
    if isinstance(value, bytes) and kind is not bytes:
        return bytes(value)
    if isinstance(value, int) and kind is not int:
        return int(value)
    if isinstance(value, float) and kind is not float:
        return float(value)
    if isinstance(value, complex):
        return repr(complex(value))  # the codec writes no complex number: its text is the value
    return None


def _attributes(value: Any) -> list[tuple[str, Any]] | None:
    """An object's attributes by name (``__dict__`` and ``__slots__``), or None if it has neither."""
    found: dict[str, Any] = {}
    has_state = False
    try:
        found.update(vars(value))
        has_state = True
    except TypeError:
        pass
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            has_state = True
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                found[name] = getattr(value, name)
    return sorted(found.items()) if has_state else None


def _unnamed_state(value: Any, named: set[Any]) -> str | None:
    """The digest of the attributes of a dataclass or a model that its public fields leave out, if any."""
    state = _attributes(value)
    if not state:
        return None
    rest = [
        (name, attribute)
        for name, attribute in state
        if name not in named and name != "__pydantic_fields_set__"
    ]
    return _fingerprint(rest) if rest else None


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return (type(value), value)
