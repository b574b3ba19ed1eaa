"""Where the evidence places what it judges, and how its messages name those places."""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Sequence
from typing import Any

from muscle_mem.model._leaf_kinds import Leaf
from muscle_mem.model._observations import Observation
from muscle_mem.model._run_observations import FAILED_ATTEMPTS

History = tuple[Observation | None, ...]
"""What one recorded run saw: its params, then each step's output."""

Live = Sequence[tuple[Leaf, ...]]
"""What the replay saw: its params, then each step's output, as :func:`observations.kept_leaves` writes them."""

FROM_END = "[-"
"""What a list position counted from the list's end starts with: ``['values'][-1]``, the latest reading."""

BY_WHOLE = "[="
"""What a list position named by its item's categories starts with: ``['hosts'][=['zone']:'eu']``."""

Leaves = Sequence[tuple[Leaf, ...]]
"""What one run (or the replay) saw: its params' leaves, then each step's."""

ITEMS, FIRST, LAST, ORDER, ROWS = "[items]", "[first]", "[last]", "[order]", "[rows]"
"""What the places of a list's items as a set, its first item, its last, their order, and the rows
of lists side by side start with."""

POSITION_AT = re.compile(r"\[(\d+)\]")
"""A list position in a path, and its index."""


def shown_range(seen: Sequence[float]) -> str:
    """The range of the numbers seen, as a message writes it (``from 12 to 40``, or the one value)."""
    low, high = min(seen), max(seen)
    return f"{low:g}" if low == high else f"from {low:g} to {high:g}"


Place = tuple[int, str]
"""Where a value was seen: the observation's position, the leaf's path."""

Places = dict[Place, Any]
"""Values by where they were seen."""

LENGTH = "#"
"""What the path of a list's length starts with: ``#['lines']``."""

TOTAL = "Σ"
"""What the path of a list's total starts with: ``Σ['lines'][*]['amount']``."""


@functools.lru_cache(maxsize=4096)
def list_pattern(path: str) -> str | None:
    """The path with its list positions made ``[*]``, or None for a leaf in no list."""
    pattern = _POSITION.sub("[*]", path)
    return pattern if pattern != path else None


_POSITION = re.compile(r"\[\d+\]")

PERCENT = ("%", "1+%", "1-%", "1+", "1-")
"""What the path of a steady percentage read as a factor starts with: ``1+%['vat_pct']`` is 1 + vat_pct / 100."""


def place_text(place: Place, names: Sequence[str]) -> str:
    at, path = place
    return where(names[at], path)


def where(name: str, path: str) -> str:
    """A leaf as a message names it: ``step 0 lookup output['status']``, ``param 'qty'``."""
    if "?" in path:  # a number's order to a bound number param
        leaf, _, param = path.rpartition("?")
        return f"{where(name, leaf)} against param {param!r}"
    if path.startswith(TOTAL):
        return f"the total of {where(name, path[len(TOTAL) :])}"
    for prefix, shown in (
        (ITEMS, "the items of"),
        (FIRST, "the first item of"),
        (LAST, "the last item of"),
        (ORDER, "the order of the items of"),
        (ROWS, "the rows of"),
    ):
        if path.startswith(prefix):
            return f"{shown} {where(name, path[len(prefix) :])}"
    if path.startswith(LENGTH):
        return f"the length of {where(name, path[len(LENGTH) :])}"
    for prefix, shown in (
        ("1+%", "1 + {}/100"),
        ("1-%", "1 - {}/100"),
        ("%", "{}/100"),
        ("1+", "1 + {}"),
        ("1-", "1 - {}"),
    ):
        if path.startswith(prefix):
            return shown.format(where(name, path[len(prefix) :]))
    if path.startswith("{") and "}" in path:
        return f"param {path[1 : path.index('}')]!r}{path[path.index('}') + 1 :]}"
    if path == FAILED_ATTEMPTS:
        return f"the times {name} raised before it returned"
    return f"{name} output{path}"


def shown_leaf(kind: str, value: Any) -> str:
    if kind == "l":
        return f"a list of {value}"
    if kind == "e":
        return "an empty mapping"
    if kind in ("w", "n", "b"):
        return repr(value)
    if kind == "r":
        return {"<": "below", "=": "equal", ">": "above"}.get(str(value), repr(value))
    if kind in ("d", "s") and type(value) in (int, float):
        moment = datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
        return repr(moment.date().isoformat() if kind == "d" else moment.isoformat().replace("+00:00", "Z"))
    if kind == "q":
        return f"{value:g}" if type(value) is float else repr(value)
    if kind == "x":
        unseen = type(value) is str and value.startswith("unseen:")
        return "an object whose state cannot be read" if unseen else "another value"
    return "another text"


_SHAPES = {
    "_": "with blanks around it",
    "w": "of several words",
    "s": "with blanks inside other than single spaces",
    "u": "in upper case",
    "t": "in title case",
    "m": "in mixed case",
    "0": "with no cased letter",
    "a": "shaped as an address",
}
"""What each mark of the shape an identity's label keeps says (see :func:`muscle_mem.model._leaf_kinds.text_shape`)."""


def label_text(label: str) -> str:
    """What an identity's label says it equals, in words."""
    if label == "secret":
        return "a secret"
    label, _, shape = label.partition("^")
    place, _, kind = label.removeprefix("=").partition("~")
    suffix = f" (a {kind} name)" if kind else ""
    if shape:
        suffix += " (" + ", ".join(_SHAPES.get(mark, mark) for mark in shape) + ")"
    if not place:
        return "a value new to the run" + suffix
    if place.startswith("p:"):
        return f"the value of param {place[2:].partition('{')[0]!r}" + suffix
    step, _, path = place.partition(":")
    return f"equal to step {step}'s output{path}" + suffix


def shown_all(recorded: list[Leaf]) -> str:
    shown = list(dict.fromkeys(shown_leaf(r[1], r[2]) for r in recorded))
    if len(shown) == 1:
        return shown[0]
    return "one of " + ", ".join(shown[:5]) + (" …" if len(shown) > 5 else "")
