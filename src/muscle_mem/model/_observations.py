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
import functools
import hashlib
import math
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model.provenance import (
    SCALAR_TYPES,
    Arg,
    Const,
    Guarded,
    Output,
    Param,
    PathElement,
    children,
    nested,
)

MAX_LEAVES = 512
"""Leaves kept one by one per observation; the rest are folded into one digest (a change there stops a replay)."""
MAX_DEPTH = 8
"""How deep an output is walked; below that a value is one folded leaf."""
MIN_ECHO = 1
"""The shortest free value masked where a later leaf repeats it (shorter ones repeat by chance)."""
MAX_WORD = 24
MEMO_LENGTH = 256
"""Texts up to this long have their kind and digest remembered (outputs repeat from one replay to the next)."""
"""The longest category word kept as it is (longer texts are kept as digests)."""

Leaf = tuple[str, str, Any, str]
"""``(path, kind, value, label)``: where the leaf is, its kind (see :data:`KINDS`), the value kept, and
for a text or an int, where an equal value was first seen in the run ("" if nowhere)."""

KINDS = frozenset("nbdsqwiplexr#")
"""``n`` number, ``q`` number written as a text, ``b`` bool or None, ``d`` date, ``s`` timestamp (seconds for both), ``w`` category word
(as it is), ``i`` identifier-shaped text, ``p`` other text (digests for both), ``l`` list length, ``e``
empty mapping, ``x`` folded digest, ``r`` a number's order to a bound number param (``<``, ``=``, ``>``),
``#`` identity (masked; nothing kept but its label)."""

_ID_KEY = re.compile(
    r"(?:^|[_\-.])(?:id|ids|uuid|guid|key|ref|handle|slug|sku|no|num|number|code|email|path|file|"
    r"filename|url|uri|name|username|login|owner|author|user|account|assignee|customer|host|replica)$"
    r"|[a-z](?:Id|ID|Name|Email|Path|Url|Key)$",
    re.IGNORECASE,
)
_NAME_KEY = re.compile(
    r"(?:^|[_\-.])(?:id|ids|uuid|guid|name|username|login|email|handle|slug)$|[a-z](?:Id|ID|Name|Email)$",
    re.IGNORECASE,
)
_ID_TEXT = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][\w.:/@+#~\-\"'=]{0,127}$")
_ADDRESS = re.compile(r"^[^\s@]+@[^\s@]+\.[^\s@]+$|^(?:[a-z]+://|/|\./)[^\s]+$|^[\w\-]+\.[A-Za-z0-9]{1,5}$")
_WORDS = re.compile(r"[^\W\d_]{3,}")
"""The words of a free text that a later text may repeat on their own (three letters or more)."""
_PREFIX = re.compile(r"^[A-Za-z]{1,8}_(?=[A-Za-z]*\d)")
"""The kind an identifier's prefix names (``usr_41``, ``svc_9``, ``cus_N8x1``): part of what it is."""
_SHORT_NAME = re.compile(r"^[^\W\d_][\w'.\-]*(?: [\w'.\-]+){0,3}$")
_NUMBER_TEXT = re.compile(r"^[+-]?\d+(?:\.\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


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


def _forms_of(value: str) -> tuple[str, ...]:
    """The texts a free text makes free too: its other cases, and its words (an email's local part) in theirs."""
    forms = [value.upper(), value.lower(), value.title(), value.capitalize()]
    local, at, _ = value.partition("@")
    for word in _WORDS.findall(value) + ([local] if at and local else []):
        forms += (word, word.upper(), word.lower(), word.capitalize())
    return tuple(forms)


_free_forms = functools.lru_cache(maxsize=4096)(_forms_of)
""":func:`_forms_of` remembered for short texts (the same ids and names are freed on every replay)."""


@functools.lru_cache(maxsize=1024)
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of these free words standing as words of their own, longest first."""
    longest = sorted(words, key=len, reverse=True)
    return re.compile("(?<![^\\W_])(?:" + "|".join(re.escape(w) for w in longest) + ")(?![^\\W_])")


def digest(text: str) -> str:
    """A short digest of a text kept in place of the text."""
    return _digest_memo(text) if len(text) <= MEMO_LENGTH else _digest(text)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


_digest_memo = functools.lru_cache(maxsize=8192)(_digest)
""":func:`digest` remembered for short texts (outputs repeat from one replay to the next)."""


@functools.lru_cache(maxsize=4096)
def _key_order(keys: tuple[str | int, ...]) -> tuple[int, ...]:
    """The positions of a mapping's keys in the order its leaves are flattened (by their repr), remembered."""
    return tuple(sorted(range(len(keys)), key=lambda i: repr(keys[i])))


@functools.lru_cache(maxsize=4096)
def _element_text(element: PathElement) -> str:
    """One step of a path as :func:`path_text` writes it, remembered (the keys of a task's outputs repeat)."""
    kind, key = element
    return f".{key}" if kind == "attr" else f"[{key!r}]"


def path_text(path: Iterable[PathElement]) -> str:
    """A path as the messages and records write it: ``['items'][0].name``."""
    return "".join(_element_text(element) for element in path)


def text_kind(text: str) -> str:
    """The kind of a text leaf: a date, a timestamp, a number, an identifier, a word or other text."""
    if len(text) <= MEMO_LENGTH:
        return _text_kind_memo(text)
    return _text_kind(text)


def _text_kind(text: str) -> str:
    if _STAMP.match(text):
        return "s"
    if _DATE.match(text):
        return "d"
    if _NUMBER_TEXT.match(text):
        return "q"
    if _ID_TEXT.match(text) or _ADDRESS.match(text):
        return "i"
    if text.isalpha() and len(text) <= MAX_WORD:
        return "w"
    return "p"


_text_kind_memo = functools.lru_cache(maxsize=8192)(_text_kind)
"""The kind of a short text, remembered: the texts of a task's outputs come back on every replay."""


def seconds_of(text: str) -> float | None:
    """The seconds since the epoch a date or timestamp text stands for (None if it is not one)."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return (moment - _EPOCH).total_seconds()


def is_identity_shape(path: str, leaf_kind: str, value: Any) -> bool:
    """Whether a leaf copied into a later call names a thing (so data flow may rebuild it)."""
    if leaf_kind == "i":
        return True
    last = _last_key(path)
    if leaf_kind == "p":  # a person's or a thing's name of a few words, under a key that says so
        return (
            last is not None
            and _ID_KEY.search(last.strip("_")) is not None
            and _SHORT_NAME.match(value or "") is not None
        )
    if leaf_kind in ("w", "q") or (leaf_kind == "n" and type(value) is int):
        if leaf_kind != "w" and (path == "" or (path.endswith("]") and last is None)):
            return True  # a number a tool returned whole, or as an item of a list: a handle
        return last is not None and _ID_KEY.search(last.strip("_")) is not None
    return False


@functools.lru_cache(maxsize=4096)
def is_name(path: str) -> bool:
    """Whether the key a leaf is under says it is the name or id of a thing (``id``, ``user_id``, ``name``, ``email``).

    Such a leaf is an identity even where it flowed nowhere: an agent treats a name as opaque, and
    what it is equal to is still compared.
    """
    last = _last_key(path)
    return last is not None and _NAME_KEY.search(last.strip("_")) is not None


@functools.lru_cache(maxsize=4096)
def names_a_thing(path: str) -> bool:
    """Whether the key a leaf is under says it names a thing (``id``, ``user_id``, ``email``, ``name``)."""
    last = _last_key(path)
    return last is not None and _ID_KEY.search(last.strip("_")) is not None


@functools.lru_cache(maxsize=4096)
def _last_key(path: str) -> str | None:
    match = re.search(r"\[['\"]([^'\"]*)['\"]\]$|\.(\w+)$", path)
    if match is None:
        return None
    return match.group(1) if match.group(1) is not None else match.group(2)


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
                for form in _free_forms(value) if len(value) <= MEMO_LENGTH else _forms_of(value):
                    free.setdefault(form, place)
        self._pattern = None  # made again when a text next needs it

    def _words(self) -> re.Pattern[str]:
        """Where a free value stands as a word of its own in a text (longest first)."""
        if self._pattern is None:
            self._pattern = _words_pattern(tuple(self._free))
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
        identities = _WHOLE if _is_identity(flat.leaves[0], flat.raw, copied, into_calls) else _NO_IDENTITIES
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
        elif not copied:
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
        if kind in SCALAR_TYPES or not _has_children(value):
            self._leaf(value, path, flat, place)
            return
        if depth >= MAX_DEPTH:
            flat.leaves.append((path, "x", None, "x" + _fingerprint(value), ""))
            return
        if isinstance(value, Mapping):
            pairs = list(children(value))
            items = [pairs[i] for i in _key_order(tuple(element[1] for element, _ in pairs))]
            if not items:
                flat.leaves.append((path, "e", None, "e", ""))
        else:
            items = list(children(value))
            if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
                flat.leaves.append((path, "l", len(value), f"l{len(value)}", ""))
        for element, child in items:
            self._walk(child, path + _element_text(element), depth + 1, flat, place)

    def _leaf(self, value: Any, path: str, flat: Flat, place: str) -> None:
        kind = type(value)
        label = ""
        if kind is bool or value is None:
            flat.leaves.append((path, "b", value, "b" + repr(value), ""))
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
            if kind is str and (prefix := _PREFIX.match(value)) is not None:
                label += "~" + prefix.group(0)  # an id's kind (usr_, svc_) is kept with it
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
        else:
            flat.leaves.append((path, "x", None, "x" + _fingerprint(value), ""))

    def _text(self, text: str, path: str, flat: Flat, label: str) -> None:
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
    path, _, _, written, label = leaf
    return f"{path}=#{label}" if path in identities else f"{path}={written}"


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


def params_key(flat: Flat, identities: frozenset[str]) -> str:
    """The key of a run's params: unbound ones as they are, bound ones masked, and the order of every two numbers."""
    parts = [_part(leaf, identities) for leaf in flat.leaves]
    numbers = flat.numbers
    for i, (a, x) in enumerate(numbers):
        for b, y in numbers[i + 1 :]:
            parts.append(f"{a}?{b}{sign_of(x - y)}")
    return codec.hash_text("\x1f".join(parts))


def kept_leaves(
    flat: Flat, identities: frozenset[str], bound_numbers: Iterable[tuple[str, float]] = ()
) -> tuple[Leaf, ...]:
    """The leaves a record keeps (identities masked; at most :data:`MAX_LEAVES`, the rest folded).

    Every value kept is one the observation's key holds, so any run filed under that key kept the
    same: a masked value keeps only its label, and each numeric leaf's order to each bound numeric
    param is kept as a leaf of its own (``['limit']?amount``, kind ``r``).
    """
    leaves: list[Leaf] = []
    for path, kind, value, _, label in flat.leaves[:MAX_LEAVES]:
        if path in identities or kind == "#":
            leaves.append((path, "#", None, label))
        else:
            leaves.append((path, kind, value, label if kind in ("w", "i", "q", "n") else ""))
    for path, name, sign in _orders(flat.numbers[:MAX_LEAVES], identities, bound_numbers):
        leaves.append((f"{path}?{name}", "r", sign, ""))
    rest = flat.leaves[MAX_LEAVES:]
    if rest:
        text = "\x1f".join(f"{p}={w}" for p, _, _, w, _ in rest)
        leaves.append(("…", "x", digest(text), ""))
    return tuple(leaves)


def sign_of(difference: float) -> str:
    """How two numbers are ordered, by their difference: ``<``, ``=`` (within 1e-9) or ``>``."""
    if abs(difference) <= 1e-9:
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
    try:
        return codec.fingerprint(value)
    except codec.CodecError:
        return f"opaque:{type(value).__qualname__}"


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return (type(value), value)


@dataclass(slots=True)
class Copies:
    """What a run's recorded values copy: output leaves and params, and whether it chose numbers of its own."""

    outputs: set[tuple[int, str]]
    """(step, path) of each output value copied into a later call or the answer."""
    into_calls: set[tuple[int, str]]
    """Those copied into a later call's arguments."""
    params: dict[str, int]
    """How many times each param is copied."""
    numbers: bool
    """Whether a call's arguments hold a number the agent chose or computed (other than 0 and 1)."""


def copies_in(args: Iterable[Arg], answer: Arg) -> Copies:
    """What the recorded values copy (a guarded value's params are compared, not copied)."""
    copies = Copies(set(), set(), {}, False)
    outputs, into_calls = copies.outputs, copies.into_calls
    stack = [(arg, True) for arg in args]
    stack.append((answer, False))
    while stack:
        arg, in_call = stack.pop()
        kind = type(arg)
        if kind is Const:
            value = arg.value  # type: ignore[union-attr]
            if in_call and type(value) in (int, float) and value not in (0, 1):
                copies.numbers = True
        elif kind is Output or (kind is Guarded and type(arg.value) is Output):  # type: ignore[union-attr]
            output = arg if kind is Output else arg.value  # type: ignore[union-attr]
            if output.form.kind == "secret":  # type: ignore[union-attr]
                continue  # a value read out of a text: the text is compared, not freed as a copy
            path = output.path  # type: ignore[union-attr]
            place = (output.step, path_text(path) if path else "")  # type: ignore[union-attr]
            outputs.add(place)
            if in_call:
                into_calls.add(place)
        elif kind is Param:
            name = arg.name  # type: ignore[union-attr]
            copies.params[name] = copies.params.get(name, 0) + 1
        elif kind is not Guarded:  # a guarded value's params must keep their values: not free
            stack += [(inner, in_call) for inner in nested(arg)]
    return copies


def observe_run(
    params: Mapping[str, Any],
    outputs: list[Any],
    args: Iterable[Arg],
    answer: Arg,
    hidden: Iterable[Any],
    secret_params: Iterable[str],
) -> tuple[Observation | None, list[Observation]]:
    """What a finished run saw: its params (None without any) and each step's output, identities masked.

    ``args``: the recorded arguments of the steps; ``answer``: the recorded answer.

    A param the run copied is free (data flow rebuilds it), and so is one an output repeats whole;
    a number param only where the run copied it once and chose no number of its own: ``book(nights,
    2)`` with nights 2, or ``pay(120)`` for 3 at 40, could as well be computed from it, so the runs
    must show it first.
    """
    copies = copies_in(args, answer)
    copied = copies.outputs
    observer = Observer(params, hidden)
    given = None
    if params:
        bound = {name for name in copies.params if not _unproven_number(params.get(name), copies, name)}
        bound |= set(secret_params) | _echoed(params, outputs)
        flat = observer.flatten_params()
        identities = frozenset(
            path for path, *_ in flat.leaves if any(path.startswith("{" + name + "}") for name in bound)
        )
        given = Observation(params_key(flat, identities), identities, kept_leaves(flat, identities))
        observer.bound_numbers = bound_numbers(params, bound)
        observer.free_params(bound)
    observed = []
    into_calls = copies.into_calls
    copied_at: dict[int, tuple[str, ...]] | None = None
    into_calls_at: dict[int, tuple[str, ...]] = {}
    quick_ints = int in _ONE_LEAF and not observer.hidden and not observer.bound_numbers
    for step, output in enumerate(outputs):
        kind = type(output)
        if kind is int and quick_ints:
            whole = (step, "")
            observed.append(observer.int_observation(step, output, whole in copied and whole in into_calls))
            continue
        if copied_at is None:  # the paths copied out of each step, once an output needs them
            copied_at, into_calls_at = _by_step(copied), _by_step(into_calls)
        here, calls_here = copied_at.get(step, ()), into_calls_at.get(step, ())
        if kind in _ONE_LEAF:
            observed.append(observer.scalar_observation(step, output, here, calls_here))
        else:
            flat = observer.flatten(step, output)
            identities = frozenset(
                leaf[0] for leaf in flat.leaves if _is_identity(leaf, flat.raw, here, calls_here)
            )
            key = key_of(flat, identities, observer.bound_numbers)
            observed.append(
                Observation(key, identities, kept_leaves(flat, identities, observer.bound_numbers))
            )
            observer.free_leaves(step, flat, identities)
    return given, observed


_ONE_LEAF = SCALAR_TYPES
"""The outputs flattened into one leaf at the empty path (see :meth:`Observer.scalar_observation`)."""


def _is_identity(
    leaf: tuple[str, str, Any, str, str],
    raw: dict[str, Any],
    copied: tuple[str, ...],
    into_calls: tuple[str, ...],
) -> bool:
    """Whether a leaf of a step's output is masked as an identity, given the paths copied out of the output.

    A free value repeated is one; so is a value shaped as one that flowed into a later call or the
    answer (a number only into a call, or under a key naming a thing), and one under a key naming it.
    """
    path, kind, value, _, _ = leaf
    if kind == "#":
        return True
    shown = raw.get(path, value)
    return (
        _under(path, copied)
        and is_identity_shape(path, kind, shown)
        and (kind not in ("n", "q") or names_a_thing(path) or _under(path, into_calls))
    ) or (is_name(path) and is_identity_shape(path, kind, shown))


def _unproven_number(value: Any, copies: Copies, name: str) -> bool:
    """Whether a number param's binding is not proven by one run (copied twice, or beside numbers of the agent's)."""
    if type(value) not in (int, float):
        return False
    return copies.params.get(name, 0) > 1 or copies.numbers


def _echoed(params: Mapping[str, Any], outputs: list[Any]) -> set[str]:
    """The params whose value an output repeats whole (an order looked up by its id): the equality is kept, not the value."""
    wanted = {(type(v), v): name for name, v in params.items() if type(v) in (int, str) and v != ""}
    if not wanted:
        return set()
    probe = Observer({})
    found: set[str] = set()
    for step, output in enumerate(outputs):
        for value in probe.flatten(step, output).raw.values():
            name = wanted.get((type(value), value))
            if name is not None:
                found.add(name)
    return found


def _by_step(places: set[tuple[int, str]]) -> dict[int, tuple[str, ...]]:
    """The paths copied out of each step's output."""
    found: dict[int, list[str]] = {}
    for step, path in places:
        found.setdefault(step, []).append(path)
    return {step: tuple(paths) for step, paths in found.items()}


def _under(path: str, copied: tuple[str, ...]) -> bool:
    """Whether the leaf at ``path``, or a value holding it, is among those ``copied``."""
    return any(path.startswith(p) for p in copied) if copied else False


def bound_numbers(params: Mapping[str, Any], bound: Iterable[str]) -> tuple[tuple[str, float], ...]:
    """The numeric params among those bound (their values free), by name: numbers, and texts of numbers ("13.38")."""
    found = []
    for name in sorted(bound):
        value: Any = params.get(name)
        if type(value) is str and _NUMBER_TEXT.match(value):
            value = float(value)
        if type(value) in (int, float) and math.isfinite(value):
            found.append((name, float(value)))
    return tuple(found)


def bound_names(given: Observation | None) -> frozenset[str]:
    """The params a recorded run bound (masked in its params' observation)."""
    if given is None:
        return frozenset()
    return frozenset(path[1 : path.index("}")] for path in given.identities if path.startswith("{"))
