"""Whether what a replay saw is covered by what the agent's own runs showed not to matter.

Runs that made the same next call after seeing different values at a leaf show, within what they
saw, that the leaf did not steer the agent there. So a live observation is covered by a set of runs
(those that went on the same way) when, leaf by leaf:

* an identity in every run that has it is an identity now too, equal to what it was equal to then
  (its label: the param or earlier leaf it repeats, or none);
* a number, date or timestamp lies within the closed range the runs saw (one run: its value);
* a text, a category word, a bool, a list length is one the runs saw; an identifier, a timestamp or
  a name under a key that says so (``name``, ``email``) that the runs saw take two or more values is
  free;
* no path is new, and none that every run had is gone;

and every relation that held in every run still holds: the order of any two numbers or dates, and
whether any two texts are equal. A set of one run covers only what that run saw, up to identities.
"""

from __future__ import annotations

import calendar
import datetime
import functools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy

from muscle_mem.model._leaf_kinds import Leaf, can_name, names_a_thing
from muscle_mem.model._observations import EQUAL_WITHIN, LABELLED_KINDS, Observation, sign_of
from muscle_mem.model._run_observations import COMPUTED_ON, FAILED_ATTEMPTS

MAX_RELATED = 48
"""Numbers, and texts, that may differ from the recorded runs with their relations still compared;
past it, a replay stops (a bound reached may only make it stop)."""
History = tuple[Observation | None, ...]
"""What one recorded run saw: its params, then each step's output."""
Live = Sequence[tuple[Leaf, ...]]
"""What the replay saw: its params, then each step's output, as :func:`observations.kept_leaves` writes them."""
_TOLERANCE = 1e-9
NUMERIC_KINDS = frozenset("nqds")
"""The kinds of leaf that hold a number: a number, one written as text, a date, a timestamp."""
_TEXTUAL = frozenset("wip")
_PLAIN_TEXTS = frozenset("wp")
"""A category word and another text: one the runs saw is one they saw, whatever kinds the others were."""


def uncovered(live: Live, histories: Sequence[History], names: Sequence[str]) -> str | None:
    """Why the runs' ``histories`` do not cover the ``live`` observations, or None if they do.

    ``names``: what to call each observation in a message (``param``, ``step 0 lookup``).
    """
    if not histories:
        return "no recorded run went on from here"
    saw = [[o.leaves if o is not None else () for o in h] for h in histories]
    named_live, named_saw = _with_item_places(live, saw, from_end=False)  # the eu host's load, wherever it is
    for at, leaves in enumerate(live):
        seen = [h[at] if at < len(h) else None for h in histories]
        if all(o is None for o in seen) and not leaves:
            continue
        if any(o is None for o in seen):
            return f"{names[at]}: the recorded runs did not keep what they saw here"
        why = _leaves_uncovered(named_live[at], [run[at] for run in named_saw], names[at])
        if why is not None:
            return why
    alike, why = _seen_together(live, histories, names)
    if why is not None:
        return why
    if len(alike) < len(histories):
        why = _numbers_uncovered(live, alike, names)
        if why is not None:
            return why
    runs_saw = [[o.leaves if o is not None else () for o in h] for h in alike]
    return _relations_broken(*_with_item_places(live, runs_saw), names)


FROM_END = "[-"
"""What a list position counted from the list's end starts with: ``['values'][-1]``, the latest reading."""
BY_WHOLE = "[="
"""What a list position named by its item's categories starts with: ``['hosts'][=['zone']:'eu']``."""
_ITEM_CATEGORIES = frozenset("wb")
"""The kinds of an item's fields that name it among the others (a category word, a bool)."""

Leaves = Sequence[tuple[Leaf, ...]]
"""What one run (or the replay) saw: its params' leaves, then each step's."""


def _item_places(leaves: tuple[Leaf, ...], ends: frozenset[str]) -> dict[str, tuple[Leaf, str]]:
    """Each number in a list item placed also from the list's end, and by its item's categories where no other item has them.

    An agent may weigh the latest reading, or the one before, or the eu host among us hosts, wherever
    that item stands: runs whose lists differ in length, or whose items moved, saw the same number
    at another position from the start. ``ends``: the lists (by path) whose items are counted from
    the end. By the new place: the leaf there, and its place by position from the start.
    """
    categories: dict[str, list[tuple[str, str]]] = {}
    for path, kind, value, _label in leaves:
        if kind in _ITEM_CATEGORIES and "[" in path:
            positions = list(_POSITION_AT.finditer(path))
            if positions:
                item = path[: positions[-1].end()]
                categories.setdefault(item, []).append((path[positions[-1].end() :], repr(value)))
    names: dict[str, str] = {}
    named: dict[tuple[str, str], int] = {}
    for item, fields in categories.items():
        name = ",".join(f"{field}:{value}" for field, value in sorted(fields))
        head = item[: item.rindex("[")]
        names[item] = name
        named[(head, name)] = named.get((head, name), 0) + 1
    if not ends and 1 not in named.values():
        return {}
    lengths = {leaf[0]: leaf[2] for leaf in leaves if leaf[1] == "l" and leaf[0] in ends}
    found: dict[str, tuple[Leaf, str]] = {}
    for leaf in leaves:
        path, kind, value, label = leaf
        if kind not in NUMERIC_KINDS or type(value) not in (int, float) or "[" not in path:
            continue
        for position in _POSITION_AT.finditer(path):
            head, rest = path[: position.start()], path[position.end() :]
            length = lengths.get(head)
            if type(length) is int and length > 1:
                back = f"{head}[{int(position.group(1)) - length}]{rest}"  # [-1]: the last item
                found[back] = ((back, kind, value, label), path)
            item_name = names.get(path[: position.end()])
            if item_name is not None and named.get((head, item_name)) == 1:
                by_whole = f"{head}{BY_WHOLE}{item_name}]{rest}"
                found[by_whole] = ((by_whole, kind, value, label), path)
    return found


def _lengths_that_differ(live: Leaves, runs: Sequence[Leaves]) -> list[frozenset[str]]:
    """For each observation, the lists whose length the replay or a run saw otherwise (their items counted from the end)."""
    found = []
    for at, leaves in enumerate(live):
        mine = {leaf[0]: leaf[2] for leaf in leaves if leaf[1] == "l"}
        theirs = [
            {leaf[0]: leaf[2] for leaf in run[at] if leaf[1] == "l"} if at < len(run) else {} for run in runs
        ]
        found.append(
            frozenset(path for path, n in mine.items() if any(other.get(path) != n for other in theirs))
        )
    return found


def _with_item_places(
    live: Leaves, runs: Sequence[Leaves], *, from_end: bool = True
) -> tuple[list[tuple[Leaf, ...]], list[list[tuple[Leaf, ...]]]]:
    """What the replay and the runs saw, with the numbers of list items also at :func:`_item_places`' places.

    Only where such a place is not at one position from the start in the replay and every run (lists
    of one length, items that did not move): there they are judged already. ``from_end``: places
    counted from a list's end too (for relations; a range there would cost needless misses).
    """
    ends = _lengths_that_differ(live, runs) if from_end else [frozenset()] * len(live)
    now = [_item_places(leaves, ends[at]) for at, leaves in enumerate(live)]
    theirs = [
        [_item_places(leaves, ends[at] if at < len(ends) else frozenset()) for at, leaves in enumerate(run)]
        for run in runs
    ]
    if not any(now):
        return list(live), [list(run) for run in runs]
    moved: list[list[str]] = []
    for at, mine in enumerate(now):
        moved.append(
            sorted(
                place
                for place, (_, path) in mine.items()
                if any(at >= len(other) or other[at].get(place, (None, None))[1] != path for other in theirs)
            )
        )
    with_places = [(*leaves, *(now[at][p][0] for p in moved[at])) for at, leaves in enumerate(live)]
    runs_with_places = [
        [
            (*leaves, *(other[at][p][0] for p in moved[at] if p in other[at])) if at < len(moved) else leaves
            for at, leaves in enumerate(run)
        ]
        for run, other in zip(runs, theirs, strict=True)
    ]
    return with_places, runs_with_places


_ABSENT = ("-", None)
"""What a run saw at a place it did not have."""


def _leaves_by_pattern(observations: Sequence[tuple[Leaf, ...]]) -> dict[Place, list[Leaf]]:
    """The leaves that are not list lengths, by place; a list's items by the list's pattern."""
    found: dict[Place, list[Leaf]] = {}
    for at, leaves in enumerate(observations):
        for leaf in leaves:
            if leaf[1] == "l":
                continue
            found.setdefault((at, list_pattern(leaf[0]) or leaf[0]), []).append(leaf)
    return found


def _items(observations: Sequence[tuple[Leaf, ...]], how: dict[Place, str]) -> dict[Place, Any]:
    """Each list's items as wholes, by the list's place: the set of its items (each item the compared
    leaves it holds) with how many of each, its first item, its last, and the order of its items
    (consecutive equal ones taken once; items holding only numbers left out).

    An item's fields are taken together (a hazmat item sent by air is not a hazmat item beside an
    item sent by air); how many items are alike is a number, judged on the runs that saw the whole
    (two hazmat items where every run had one); and the order counts (the latest event of a
    history, a hazmat item loaded right after a food item).
    """
    found: dict[Place, Any] = {}
    for at, leaves in enumerate(observations):
        lists: dict[str, dict[int, list[Any]]] = {}
        for leaf in leaves:
            path = leaf[0]
            if leaf[1] == "l" or "[" not in path:
                continue
            memberships = _memberships(path)
            if not memberships:
                continue
            shown = _shown_as(leaf, how.get((at, list_pattern(path) or path)))
            if shown is None:
                continue
            for head, index, sub in memberships:
                lists.setdefault(head, {}).setdefault(index, []).append((sub, shown))
        found.update(_rows(at, lists))
        for head, items in lists.items():
            whole = {i: tuple(sorted(map(repr, fields))) for i, fields in items.items()}
            counts: dict[tuple[str, ...], int] = {}
            for item in whole.values():
                counts[item] = counts.get(item, 0) + 1
            found[(at, ITEMS + head + "]")] = (frozenset(counts), counts)
            found[(at, FIRST + head + "]")] = whole[min(whole)]
            found[(at, LAST + head + "]")] = whole[max(whole)]
            named = [whole[i] for i in sorted(whole) if any("'number'" not in f for f in whole[i])]
            found[(at, ORDER + head + "]")] = tuple(
                a for i, a in enumerate(named) if i == 0 or a != named[i - 1]
            )
    return found


@functools.lru_cache(maxsize=16384)
def _memberships(path: str) -> tuple[tuple[str, int, str], ...]:
    """Each list a leaf is in (an inner one by its outer positions), its position there, and its path inside the item."""
    found = []
    for position in _POSITION_AT.finditer(path):
        rest = path[position.end() - 1 :]
        sub = list_pattern(rest) or rest
        found.append((path[: position.start() + 1] + "*", int(position.group(1)), sub[1:]))
    return tuple(found)


ITEMS, FIRST, LAST, ORDER, ROWS = "[items]", "[first]", "[last]", "[order]", "[rows]"
"""What the places of a list's items as a set, its first item, its last, their order, and the rows
of lists side by side start with."""
_POSITION_AT = re.compile(r"\[(\d+)\]")
_COLUMN = re.compile(r"^(.*)\[(?:'[^']*'|\"[^\"]*\")\]\[\*$")
"""A list's head under a key: the mapping that holds it, then the key."""


def _rows(at: int, lists: dict[str, dict[int, list[Any]]]) -> dict[Place, Any]:
    """Lists side by side in one mapping, read as a table: the set of its rows, how many of each.

    A tool may return columns (``classes[i]`` goes with ``labels[i]``): each list alone covers its
    items, but a hazmat class beside a missing label is a row no run showed.
    """
    by_parent: dict[str, list[str]] = {}
    for head in lists:
        column = _COLUMN.match(head)
        if column is not None:
            by_parent.setdefault(column.group(1), []).append(head)
    found: dict[Place, Any] = {}
    for parent, heads in by_parent.items():
        if len(heads) < 2:
            continue
        heads.sort()
        shared = set.intersection(*(set(lists[head]) for head in heads))
        counts: dict[tuple[Any, ...], int] = {}
        for i in shared:
            row = tuple(tuple(sorted(map(repr, lists[head][i]))) for head in heads)
            counts[row] = counts.get(row, 0) + 1
        found[(at, ROWS + parent + "[*]")] = (frozenset(counts), counts)
    return found


def _whole(value: Any) -> Any:
    """What the whole compares of a list's items: the set of the items (how many of each is a number)."""
    return value[0] if type(value) is tuple and len(value) == 2 and type(value[1]) is dict else value


def _counts_uncovered(
    mine: dict[Place, Any], theirs: list[dict[Place, Any]], names: Sequence[str]
) -> str | None:
    """Why how many of a list's items are one item lies outside what the runs that saw the whole saw (two hazmat items, each run one)."""
    for place, value in mine.items():
        prefix = ITEMS if place[1].startswith(ITEMS) else ROWS if place[1].startswith(ROWS) else None
        if prefix is None:
            continue
        for item, count in value[1].items():
            seen = [run[place][1].get(item, 0) for run in theirs if place in run]
            if seen and not _within(count, seen):
                return (
                    f"{_place((place[0], place[1][len(prefix) :]), names)}: {count} items alike, recorded "
                    f"{_shown_range(seen)} where the runs saw what the replay saw with them"
                )
    return None


def _shown_range(seen: Sequence[float]) -> str:
    low, high = min(seen), max(seen)
    return f"{low:g}" if low == high else f"from {low:g} to {high:g}"


def _shown_as(leaf: Leaf, how: str | None) -> Any:
    """What of a leaf the whole compares, by how its place is compared (None: nothing)."""
    if how is None:
        return None
    kind = leaf[1]
    if how == "masked" or (how == "mixed" and kind == "#"):
        return ("#", leaf[3])
    if how == "number":
        return ("number",)
    if how == "mixed":
        return (kind, leaf[2]) if not can_name(kind, leaf[2]) else (kind,)
    if how == "free":
        return ("free", leaf[3] if kind in LABELLED_KINDS else "")
    return (kind, leaf[2])


def _seen_together(
    live: Live, histories: Sequence[History], names: Sequence[str]
) -> tuple[list[History], str | None]:
    """The runs that saw what the replay saw but for numbers, dates, list lengths and free leaves (all of it at once), or why none did.

    A category, a bool, an identity's label, and whether a field is there at all steer an agent
    together: a role seen with one class and another role with another do not cover the first role
    with the second, nor does every pair of three cover the three, nor does a tier seen with small
    amounts and another with large ones cover the first with a large one. A list's items are taken
    as the items they are (a hazmat item sent by air), in their order, how many of each a number.
    Whether a number is there at all is part of the whole; so is what a free identifier equals
    (a voter equal to the submitter), and a None or a 0 where other runs had an identity. The
    numbers and relations are then judged on the runs that saw all of it as the replay did.
    """
    if len(histories) < 2:
        return list(histories), None
    observations = [[o.leaves if o is not None else () for o in h] for h in histories]
    runs = [_leaves_by_pattern(o) for o in observations]
    now = _leaves_by_pattern(live)
    places = sorted(set(now).union(*runs))
    how: dict[Place, str] = {}
    for place in places:
        had = [leaf for run in runs for leaf in run.get(place, ())]
        kinds = {leaf[1] for leaf in had} or {leaf[1] for leaf in now.get(place, ())}
        if kinds == {"#"}:
            how[place] = "masked"  # an identity: what it equals is compared, whatever it is now
        elif "#" in kinds:
            how[place] = "mixed"  # an identity in some runs: a None, a bool, a 0 in others is compared
        elif kinds & NUMERIC_KINDS:
            how[place] = "number"  # a number (ranges and relations judge it): only whether it is there
        elif free_by_variation(had, place[1]):
            how[place] = "free"  # free, but for what it equals
        else:
            how[place] = "compared"

    def seen(leaves: list[Leaf] | None, place: Place) -> Any:
        if not leaves:
            return _ABSENT
        return frozenset(_shown_as(leaf, how[place]) for leaf in leaves)

    in_lists = {p for p in places if "[*]" in p[1]}
    compared = [p for p in places if p not in in_lists]
    mine: list[Any] = [seen(now.get(p), p) for p in compared]
    my_items = _items(live, how)
    their_items = [_items(o, how) for o in observations]
    item_places = sorted(set(my_items).union(*their_items))
    mine += [_whole(my_items.get(p, _ABSENT)) for p in item_places]
    labels: list[Place] = [*compared, *item_places]
    alike = []
    best: tuple[int, Place | None] = (-1, None)
    for h, run, items in zip(histories, runs, their_items, strict=True):
        theirs = [seen(run.get(p), p) for p in compared] + [
            _whole(items.get(p, _ABSENT)) for p in item_places
        ]
        differing = [p for p, a, b in zip(labels, mine, theirs, strict=True) if a != b]
        if not differing:
            alike.append((h, items))
        elif best[0] < 0 or len(differing) < best[0]:
            best = (len(differing), differing[0])
    if alike:
        why = _counts_uncovered(my_items, [items for _, items in alike], names)
        return [h for h, _ in alike], why
    shown = _place(best[1], names) if best[1] is not None else "what it saw"
    return [], f"{shown}: with what the replay saw beside it, each seen in a recorded run but never together"


def _numbers_uncovered(live: Live, alike: Sequence[History], names: Sequence[str]) -> str | None:
    """Why a number, date, timestamp or list length lies outside what the runs that saw the replay's whole saw.

    A list's length must lie within their range; any other number as :func:`_value_covered` judges
    it, free only where these runs saw it vary.
    """
    these = [_by_place(h) for h in alike]
    for at, leaves in enumerate(live):
        for path, kind, value, _label in leaves:
            if (kind not in NUMERIC_KINDS and kind != "l") or type(value) not in (int, float):
                continue
            near = [leaf for run in these if (leaf := run.get((at, path))) is not None and leaf[1] != "#"]
            if not near:
                continue
            if kind == "l":
                covered = _within(value, [leaf[2] for leaf in near])
            else:
                covered = _value_covered(kind, value, near, path)
            if not covered:
                return (
                    f"{where(names[at], path)}: {shown_leaf(kind, value)}, recorded {_shown_all(near)} "
                    "where the runs saw what the replay saw with it"
                )
    return None


def _by_place(history: History) -> dict[Place, Leaf]:
    """What a run saw, leaf by leaf, by place."""
    return {
        (at, leaf[0]): leaf
        for at, observation in enumerate(history)
        if observation is not None
        for leaf in observation.leaves
    }


def _leaves_uncovered(leaves: tuple[Leaf, ...], runs: list[tuple[Leaf, ...]], name: str) -> str | None:
    by_path = [{leaf[0]: leaf for leaf in run} for run in runs]
    live_paths = set()
    for path, kind, value, label in leaves:
        live_paths.add(path)
        recorded = [run[path] for run in by_path if path in run]
        if not recorded:
            return f"{where(name, path)}: {shown_leaf(kind, value)}, in no recorded run"
        if all(r[1] == "#" for r in recorded):  # an identity: free, but for what it equals
            if not can_name(kind, value):
                return f"{where(name, path)}: {shown_leaf(kind, value)}, recorded an identity"
            labels = {r[3] for r in recorded}
            if label not in labels:
                was = " or ".join(sorted({label_text(r) for r in labels}))
                return f"{where(name, path)}: now {label_text(label)}, recorded {was}"
            continue
        plain = [r for r in recorded if r[1] != "#"]
        if kind == "#" or not _value_covered(kind, value, plain, path):
            shown = label_text(label) if kind == "#" else shown_leaf(kind, value)
            return f"{where(name, path)}: {shown}, recorded {_shown_all(plain)}"
    if by_path:
        shared = set(by_path[0]).intersection(*by_path[1:])
        gone = sorted(shared - live_paths)
        if gone == [FAILED_ATTEMPTS]:
            return f"{name}: returned at once, where every recorded run saw it raise first (the agent retried it)"
        if gone:
            return f"{where(name, gone[0])}: gone, recorded in every run"
    return None


def _value_covered(kind: str, value: Any, recorded: list[Leaf], path: str) -> bool:
    kinds = {r[1] for r in recorded}
    if kinds != {kind}:
        if kind in NUMERIC_KINDS or not (kinds <= _PLAIN_TEXTS and kind in _PLAIN_TEXTS):
            return False
        return any(r[1] == kind and r[2] == value for r in recorded)
    values = [r[2] for r in recorded]
    if free_by_variation(recorded, path):
        return True
    if kind in NUMERIC_KINDS and type(value) in (int, float):
        if type(value) is float and not value.is_integer() and all(type(v) is int for v in values):
            return False  # a fraction where every run saw a whole number
        if type(value) is float and not value.is_integer():
            places = max(_decimals(v) for v in values)
            if places and _decimals(value) > places:  # finer than every run's (2.75 for 2.5, 4.2): rounded?
                return False
            if places and not _on_grid(value, values, places):  # 3.2 where every run saw halves: rounded?
                return False
        return _within(value, values)
    return value in values


def _on_grid(value: float, seen: Sequence[float], places: int) -> bool:
    """Whether a fraction lies on the grid every run's number stood on, in units of their finest decimal
    place and dividing one (halves for 2.5, 3.5 and 4.0; none for 15.9 and 12.3, nor for 19.99 and
    5.49): an agent may have rounded to it."""
    scale = 10**places
    grid = math.gcd(
        scale, *(round(v * scale) for v in seen)
    )  # a grid rounding makes (halves, fifths), not 0.3
    return grid <= 1 or round(value * scale) % grid == 0


def _decimals(number: float) -> int:
    """How many decimal places a number is written with at its shortest (``2.75``: 2; ``3.0``, ``3``: 0)."""
    if type(number) is not float or number.is_integer() or not math.isfinite(number):
        return 0
    text = repr(number)
    if "e" in text or "E" in text:
        mantissa, exponent = text.lower().split("e")
        places = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return max(0, places - int(exponent))
    return len(text.split(".")[1])


def _within(value: float, seen: Sequence[float]) -> bool:
    """Whether a number lies within the closed range of those seen (float noise tolerated)."""
    low, high = min(seen), max(seen)
    slack = _TOLERANCE * max(1.0, abs(low), abs(high))
    return bool(low - slack <= value <= high + slack)


def free_by_variation(recorded: Sequence[Leaf], path: str) -> bool:
    """Whether runs that went on alike showed a leaf free: an identifier, a name or a time seen taking two values.

    Not a leaf a run may have computed a value of its calls from (labelled
    :data:`~muscle_mem.model._run_observations.COMPUTED_ON`): that one must be what the runs saw, or
    for a time within the range they saw.
    """
    kinds = {leaf[1] for leaf in recorded}
    if len(kinds) != 1 or any(leaf[3] == COMPUTED_ON for leaf in recorded):
        return False
    kind = kinds.pop()
    values = {leaf[2] for leaf in recorded}
    return len(values) >= 2 and (kind in ("i", "s") or (kind in ("p", "w") and names_a_thing(path)))


def _relations_broken(live: Leaves, seen: Sequence[Leaves], names: Sequence[str]) -> str | None:
    """Why a relation between numbers, or texts, that held in every run no longer holds."""
    now = _related(live)
    runs = [_related(leaves) for leaves in seen]
    run_numbers = [run.numbers for run in runs]
    why = _totals_uncovered(now.numbers, run_numbers, names)
    if why is None:
        why = _orders_broken(now.numbers, run_numbers, names)
    if why is None:
        why = _combinations_broken(now, run_numbers, names)
    if why is None:
        why = _combined_orders_broken(now, run_numbers, names)
    if why is None:
        why = _equalities_broken(now.texts, [run.texts for run in runs], names)
    return why


Place = tuple[int, str]
"""Where a value was seen: the observation's position, the leaf's path."""
Places = dict[Place, Any]
"""Values by where they were seen."""


class Related(NamedTuple):
    """What one run (or the replay) saw that relations are compared on."""

    numbers: Places
    texts: Places
    dates: frozenset[Place]
    """The numbers that are dates, or times a run may have computed a date from."""
    free_times: frozenset[Place]
    """The timestamps runs may show free: only their order is compared, not what they add up to."""


LENGTH = "#"
"""What the path of a list's length starts with: ``#['lines']``."""
TOTAL = "Σ"
"""What the path of a list's total starts with: ``Σ['lines'][*]['amount']``."""


def _related(observations: Sequence[tuple[Leaf, ...]]) -> Related:
    """The numbers (with each list's totals), the texts, and which numbers are dates and which free times, by place."""
    numbers: Places = {}
    texts: Places = {}
    dates: set[Place] = set()
    free_times: set[Place] = set()
    for at, leaves in enumerate(observations):
        totals: dict[str, float] = {}
        for path, kind, value, label in leaves:
            if kind in NUMERIC_KINDS and type(value) in (int, float):
                numbers[(at, path)] = float(value)
                if kind == "d" or label == COMPUTED_ON:
                    dates.add((at, path))
                elif kind == "s":
                    free_times.add((at, path))
                aliased = FROM_END in path or BY_WHOLE in path
                pattern = list_pattern(path) if kind in ("n", "q") and not aliased else None
                if pattern is not None:
                    totals[pattern] = totals.get(pattern, 0.0) + float(value)
            elif kind in _TEXTUAL:
                texts[(at, path)] = value
            elif kind == "l":  # a list's length is a count the agent may weigh against a number
                numbers[(at, LENGTH + path)] = float(value)
        for pattern, total in totals.items():
            numbers[(at, TOTAL + pattern)] = total
    return Related(numbers, texts, frozenset(dates), frozenset(free_times))


@functools.lru_cache(maxsize=4096)
def list_pattern(path: str) -> str | None:
    """The path with its list positions made ``[*]``, or None for a leaf in no list."""
    pattern = _POSITION.sub("[*]", path)
    return pattern if pattern != path else None


_POSITION = re.compile(r"\[\d+\]")


def _moving(live: Places, runs: list[Places]) -> tuple[list[Place], list[Place]]:
    """The places every run has, and among them those whose value is not the same in every run and now."""
    places = [p for p in live if all(p in run for run in runs)]
    moving = [p for p in places if any(run[p] != live[p] for run in runs)]
    return places, moving


def _totals_uncovered(live: Places, runs: list[Places], names: Sequence[str]) -> str | None:
    """Whether a list's total lies outside the range the runs saw (items each in range can add up to more)."""
    for place, value in live.items():
        if not place[1].startswith(TOTAL) or not all(place in run for run in runs):
            continue
        seen = [run[place] for run in runs]
        if not _within(value, seen):
            return f"{_place(place, names)}: {value:g}, recorded {_shown_range(seen)}"
    return None


def _orders_broken(live: Places, runs: list[Places], names: Sequence[str]) -> str | None:
    """Why two numbers, one of them differing from the runs, are now in another order than in every run."""
    places, moving = _moving(live, runs)
    if len(moving) > MAX_RELATED:
        return f"{len(moving)} numbers differ from the recorded runs: more than the {MAX_RELATED} whose relations are compared"
    if not moving:
        return None
    column = {place: k for k, place in enumerate(places)}
    then = numpy.array([[run[p] for p in places] for run in runs], dtype=float)
    now = numpy.array([live[p] for p in places], dtype=float)
    rank = {place: i for i, place in enumerate(moving)}
    for i, a in enumerate(moving):
        k = column[a]
        was = _signs(then[:, k : k + 1] - then)
        broken = (was == was[0]).all(axis=0) & (_signs(now[k] - now) != was[0])
        for other in numpy.flatnonzero(broken):
            b = places[int(other)]
            if b == a or rank.get(b, len(moving)) <= i:
                continue  # the pair is weighed from its first number that differs
            return (
                f"{_place(a, names)} and {_place(b, names)}: their order changed "
                f"({live[a]:g} {sign_of(live[a] - live[b])} {live[b]:g}, "
                f"recorded {_SIGNS[int(was[0][other])]})"
            )
    return None


def _signs(difference: Any) -> numpy.ndarray[Any, Any]:
    """:func:`~muscle_mem.model._observations.sign_of` of each difference, as -1, 0 or 1."""
    return numpy.where(difference > EQUAL_WITHIN, 1, numpy.where(difference < -EQUAL_WITHIN, -1, 0))


def _related_pairs(live: Places, runs: list[Places], what: str) -> list[tuple[Place, Place]] | str:
    """The pairs of places whose relation may have changed (one of them differs from the runs), or why there are too many.

    Two values each the same in every run and now keep their relation; past :data:`MAX_RELATED`
    values that differ, the replay stops.
    """
    places, moving = _moving(live, runs)
    if len(moving) > MAX_RELATED:
        return f"{len(moving)} {what} differ from the recorded runs: more than the {MAX_RELATED} whose relations are compared"
    rank = {place: i for i, place in enumerate(moving)}
    return [(a, b) for i, a in enumerate(moving) for b in places if b != a and rank.get(b, len(moving)) > i]


def _combinations_broken(now: Related, runs: list[Places], names: Sequence[str]) -> str | None:
    """Why a sum, difference, product or ratio of two numbers that came out the same in every run differs now.

    Runs whose answer or calls hold the same constant while their numbers differ may have computed
    it from them (100 from 40 and 60, then from 30 and 70): where a combination of two numbers came
    out the same in every run, it is evidence, as an order is, and it must come out the same now. A
    date plus a number of days counts too (issued plus the payment terms). Timestamps runs may show
    free are left out: only their order is compared.
    """
    if len(runs) < 2:
        return None
    live = now.numbers
    varied = [
        p
        for p in live
        if p not in now.free_times and all(p in run for run in runs) and len({run[p] for run in runs}) > 1
    ][:MAX_RELATED]
    if len(varied) < 2:
        return None
    column = {place: k for k, place in enumerate(varied)}
    ways: list[Way] = [
        (name, a, b, combine, i, j)
        for i, a in enumerate(varied)
        for j, b in enumerate(varied[i + 1 :], start=i + 1)
        for name, combine in _combinations_of(a in now.dates, b in now.dates)
    ]
    then_all = numpy.array([[run[place] for place in varied] for run in runs], dtype=float)
    then, values = _made(ways, column, then_all, numpy.array([live[p] for p in varied], dtype=float))
    first = then[:, :1]
    slack = _TOLERANCE * numpy.maximum(1.0, numpy.maximum(numpy.abs(then), numpy.abs(first)))
    kept = numpy.isfinite(then).all(axis=1) & (numpy.abs(then - first) <= slack).all(axis=1)
    for k in numpy.flatnonzero(kept):
        name, a, b, *_ = ways[k]
        value, was = float(values[k]), float(first[k, 0])
        if not math.isfinite(value) or not _same(value, was):
            shown = format(value, "g") if math.isfinite(value) else "none"
            return (
                f"{_place(a, names)} and {_place(b, names)}: their {name} changed "
                f"({shown}, {was:g} in every recorded run)"
            )
    return None


def _combined_orders_broken(now: Related, runs: list[Places], names: Sequence[str]) -> str | None:
    """Why a combination of two numbers now lies on another side of a third number than in every run.

    The agent may weigh two numbers together against a third: ship when base + fee is within the
    limit, when price / qty is under the unit cap, when issued + terms is not before today, when
    ordered equals shipped + returned. Each of the three may lie within its range while the
    relation flips. So for two numbers that differ from the runs (now or between them), each
    combination of them that lay above, below or on a third number in every run must still do so.
    The third may be any number the runs and the replay share; past :data:`MAX_COMBINED` numbers
    that differ, the replay stops.
    """
    live = now.numbers
    shared = [p for p in live if p not in now.free_times and all(p in run for run in runs)]
    moving = [p for p in shared if any(run[p] != live[p] for run in runs)]
    if len(moving) < 2:
        return None
    if len(moving) > MAX_COMBINED:
        return (
            f"{len(moving)} numbers differ from the recorded runs: more than the {MAX_COMBINED} "
            "whose combinations are compared"
        )
    still = set(moving)
    derived = _percent_factors(live, [p for p in shared if p not in still])
    if derived:
        live = {**live, **derived}
        runs = [{**run, **derived} for run in runs]
    steady = sorted((live[p], p) for p in [*shared, *derived] if p not in still)
    thirds_then = numpy.array([[run[place] for place in moving] for run in runs], dtype=float)
    thirds_now = numpy.array([live[place] for place in moving], dtype=float)
    column = {place: k for k, place in enumerate(moving)}
    ways = [
        (name, x, y, combine, i, j)
        for i, a in enumerate(moving)
        for j in range(i + 1, len(moving))
        for name, x, y, combine in _ordered_combinations(a, moving[j], now.dates)
    ]
    then, values = _made(ways, column, thirds_then, thirds_now)
    steady_values = numpy.array([number for number, _ in steady], dtype=float)
    for k, third, was in _crossings(then, values, thirds_then, thirds_now, ways, steady_values):
        name, x, y, *_ = ways[k]
        c = moving[third] if third >= 0 else steady[-1 - third][1]
        return (
            f"the {name} of {_place(x, names)} and {_place(y, names)} against "
            f"{_place(c, names)}: its order changed ({values[k]:g} {_order(float(values[k]), live[c])} "
            f"{live[c]:g}, recorded {_SIGNS[was]})"
        )
    return None


Way = tuple[str, Place, Place, "Combine", int, int]
"""One combination of two numbers that differ: its name, its two places in order, how it is made, and the pair's columns."""


def _made(
    ways: list[Way],
    column: dict[Place, int],
    thirds_then: numpy.ndarray[Any, Any],
    thirds_now: numpy.ndarray[Any, Any],
) -> tuple[numpy.ndarray[Any, Any], numpy.ndarray[Any, Any]]:
    """Each combination in every run (a row of runs) and now, made on arrays a kind at a time (NaN where it cannot be made)."""
    then = numpy.empty((len(ways), thirds_then.shape[0]))
    values = numpy.empty(len(ways))
    rows_of: dict[Combine, list[int]] = {}
    for k, way in enumerate(ways):
        rows_of.setdefault(way[3], []).append(k)
    for combine, rows in rows_of.items():
        xs = [column[ways[k][1]] for k in rows]
        ys = [column[ways[k][2]] for k in rows]
        if combine in _BY_CALENDAR:  # made run by run, as a calendar counts
            for k, x, y in zip(rows, xs, ys, strict=True):
                then[k] = [
                    _number(combine(a, b))
                    for a, b in zip(thirds_then[:, x].tolist(), thirds_then[:, y].tolist(), strict=True)
                ]
                values[k] = _number(combine(float(thirds_now[x]), float(thirds_now[y])))
            continue
        with numpy.errstate(all="ignore"):
            then[rows] = combine(thirds_then[:, xs].T, thirds_then[:, ys].T)  # type: ignore[arg-type]
            values[rows] = combine(thirds_now[xs], thirds_now[ys])  # type: ignore[arg-type]
    return then, values


_CELLS_AT_ONCE = 1 << 20
"""The most (combination, run, third) triples weighed in one array."""


def _crossings(
    then: numpy.ndarray[Any, Any],
    values: numpy.ndarray[Any, Any],
    thirds_then: numpy.ndarray[Any, Any],
    thirds_now: numpy.ndarray[Any, Any],
    ways: list[Way],
    steady: numpy.ndarray[Any, Any],
) -> Iterator[tuple[int, int, int]]:
    """Each combination that now lies on another side of a third than in every run: its row, the third, and the side it was on.

    A third that differs from the runs is given by its column (the pair's own two left out), a
    steady one by ``-1 - its index`` in ``steady`` (ascending); the first found of each combination.
    A combination a run or the replay cannot make (a ratio to 0) is not weighed.
    """
    runs, thirds = thirds_then.shape
    chunk = max(1, _CELLS_AT_ONCE // max(1, runs * max(thirds, 1)))
    for start in range(0, len(ways), chunk):
        rows = slice(start, start + chunk)
        part, now = then[rows], values[rows]
        weighed = numpy.isfinite(now) & numpy.isfinite(part).all(axis=1)
        was = _orders(part[:, :, None], thirds_then[None, :, :])
        kept = (was == was[:, :1, :]).all(axis=1) & (
            _orders(now[:, None], thirds_now[None, :]) != was[:, 0, :]
        )
        index = numpy.arange(len(now))
        kept[index, [way[4] for way in ways[rows]]] = False
        kept[index, [way[5] for way in ways[rows]]] = False
        kept &= weighed[:, None]
        low, high = (
            part.min(axis=1, initial=numpy.inf, where=True),
            part.max(axis=1, initial=-numpy.inf, where=True),
        )
        below = _orders(low[:, None], steady[None, :])
        crossed = (below == _orders(high[:, None], steady[None, :])) & (
            _orders(now[:, None], steady[None, :]) != below
        )
        crossed &= weighed[:, None]
        for k in numpy.flatnonzero(kept.any(axis=1) | crossed.any(axis=1)):
            if kept[k].any():
                third = int(numpy.flatnonzero(kept[k])[0])
                yield start + int(k), third, int(was[k, 0, third])
            else:
                third = int(numpy.flatnonzero(crossed[k])[0])
                yield start + int(k), -1 - third, int(below[k, third])


def _number(value: float | None) -> float:
    return math.nan if value is None else value


def _orders(a: numpy.ndarray[Any, Any], b: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """:func:`_order` of each pair, as -1, 0 or 1 (``<``, ``=``, ``>``)."""
    slack = _TOLERANCE * numpy.maximum(1.0, numpy.maximum(numpy.abs(a), numpy.abs(b)))
    difference = a - b
    return numpy.where(difference > slack, 1, numpy.where(difference < -slack, -1, 0))


_SIGNS = {-1: "<", 0: "=", 1: ">"}


PERCENT = ("%", "1+%", "1-%", "1+", "1-")
"""What the path of a steady percentage read as a factor starts with: ``1+%['vat_pct']`` is 1 + vat_pct / 100."""


def _percent_factors(live: Places, steady: list[Place]) -> Places:
    """Each steady number that may be a percentage (above 0, at most 100) as the factors an agent applies it by."""
    found: Places = {}
    for at, path in steady:
        value = live[(at, path)]
        if path.startswith((LENGTH, TOTAL, *PERCENT)) or not 0 < value <= 100:
            continue
        found[(at, "%" + path)] = value / 100
        found[(at, "1+%" + path)] = 1 + value / 100
        found[(at, "1-%" + path)] = 1 - value / 100
        if value < 1:  # a rate written as a fraction (a VAT rate of 0.2): 1 + rate, 1 - rate
            found[(at, "1+" + path)] = 1 + value
            found[(at, "1-" + path)] = 1 - value
    return found


MAX_COMBINED = 24
"""Numbers that may differ from the recorded runs with the combinations of each two weighed against a
third; past it, a replay stops (a bound reached may only make it stop)."""


def _ordered_combinations(
    a: Place, b: Place, dates: frozenset[Place]
) -> Iterator[tuple[str, Place, Place, Combine]]:
    """Each combination of two numbers, both ways round where the order matters."""
    for name, combine in (*_combinations_of(a in dates, b in dates), *_calendar_of(a in dates, b in dates)):
        yield name, a, b, combine
        if name in _ONE_WAY:
            yield name, b, a, combine


def _calendar_of(a_is_date: bool, b_is_date: bool) -> tuple[tuple[str, Combine], ...]:
    """Calendar combinations, weighed against a third only: whole months and years between two dates, a date plus or minus months or years."""
    if a_is_date and b_is_date:
        return _CALENDAR_DATES
    if a_is_date and not b_is_date:
        return _CALENDAR_DATE_AND_COUNT
    if b_is_date and not a_is_date:
        return _CALENDAR_COUNT_AND_DATE
    return ()


def _swapped(combine: Combine) -> Combine:
    return lambda a, b: combine(b, a)


def _moment(seconds: float) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _plus_months(seconds: float, months: float) -> float | None:
    if months != int(months) or abs(months) > 120_000:
        return None
    moment = _moment(seconds)
    if moment is None:
        return None
    total = moment.year * 12 + moment.month - 1 + int(months)
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        return None
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day).timestamp()


def _months_between(a: float, b: float) -> float | None:
    """Calendar months from ``b`` to ``a``, with the fraction of the month under way (negative if ``a`` is before ``b``).

    Whole where ``a`` is ``b`` plus a number of months as :func:`_plus_months` counts them (Jan 31
    plus one month is Feb 28), so its order to a count of months is the order of ``a`` to ``b`` plus
    that many months: returned on the due day, or a day late.
    """
    if a < b:
        back = _months_between(b, a)
        return None if back is None else -back
    later, earlier = _moment(a), _moment(b)
    if later is None or earlier is None:
        return None
    months = (later.year - earlier.year) * 12 + later.month - earlier.month
    start = _plus_months(b, months)
    while start is not None and start > a and months > 0:
        months -= 1
        start = _plus_months(b, months)
    end = _plus_months(b, months + 1)
    if start is None or end is None or end <= start:
        return None
    return months + (a - start) / (end - start)


_CALENDAR_DATES: tuple[tuple[str, Combine], ...] = (
    ("months between", _months_between),
    ("years between", lambda a, b: None if (m := _months_between(a, b)) is None else m / 12),
)
_CALENDAR_DATE_AND_COUNT: tuple[tuple[str, Combine], ...] = (
    ("date plus months", lambda a, b: _plus_months(a, b)),
    ("date minus months", lambda a, b: _plus_months(a, -b)),
    ("date plus years", lambda a, b: _plus_months(a, 12 * b)),
    ("date minus years", lambda a, b: _plus_months(a, -12 * b)),
)
_CALENDAR_COUNT_AND_DATE: tuple[tuple[str, Combine], ...] = tuple(
    (name, _swapped(combine)) for name, combine in _CALENDAR_DATE_AND_COUNT
)


_BY_CALENDAR = frozenset(
    combine for _, combine in (*_CALENDAR_DATES, *_CALENDAR_DATE_AND_COUNT, *_CALENDAR_COUNT_AND_DATE)
)
"""The combinations a calendar makes (months, years): made run by run, not on arrays."""

_ONE_WAY = frozenset({"difference", "ratio", "days between", "months between", "years between"})
"""The combinations that differ with the order of their two numbers (a date plus or minus days takes the date either way)."""


def _order(a: float, b: float) -> str:
    """How two numbers are ordered, equal within the float noise tolerated."""
    if _same(a, b):
        return "="
    return "<" if a < b else ">"


Combine = Callable[[float, float], "float | None"]
_DAY = 86_400.0
_COMBINATIONS: tuple[tuple[str, Combine], ...] = (
    ("sum", lambda a, b: a + b),
    ("difference", lambda a, b: a - b),
    ("absolute difference", lambda a, b: abs(a - b)),
    ("product", lambda a, b: a * b),
    ("ratio", lambda a, b: _ratio(a, b)),
)


def _ratio(a: Any, b: Any) -> Any:
    """``a / b``, None (a number) or NaN (numbers in arrays) where ``b`` is 0."""
    if isinstance(b, numpy.ndarray):
        return numpy.where(b != 0, a / numpy.where(b != 0, b, 1.0), numpy.nan)
    return a / b if b else None


def _combinations_of(a_is_date: bool, b_is_date: bool) -> tuple[tuple[str, Combine], ...]:
    """The combinations compared for two numbers: a date and a number also as the date plus or minus that many days, two dates as the days between them."""
    if a_is_date and b_is_date:
        return _DATES_COMBINED
    if not a_is_date and not b_is_date:
        return _COMBINATIONS
    if a_is_date:
        return _DATE_AND_DAYS
    return _DAYS_AND_DATE


_DATES_COMBINED: tuple[tuple[str, Combine], ...] = (
    *_COMBINATIONS,
    ("days between", lambda a, b: (a - b) / _DAY),
)
_DATE_AND_DAYS: tuple[tuple[str, Combine], ...] = (
    *_COMBINATIONS,
    ("date plus days", lambda a, b: a + b * _DAY),
    ("date minus days", lambda a, b: a - b * _DAY),
)
_DAYS_AND_DATE: tuple[tuple[str, Combine], ...] = (
    *_COMBINATIONS,
    ("date plus days", lambda a, b: b + a * _DAY),
    ("date minus days", lambda a, b: b - a * _DAY),
)


def _same(a: float | None, b: float | None) -> bool:
    """Whether two numbers are equal within the float noise tolerated (None only to None)."""
    if a is None or b is None:
        return a is b
    return abs(a - b) <= _TOLERANCE * max(1.0, abs(a), abs(b))


def _equalities_broken(live: Places, runs: list[Places], names: Sequence[str]) -> str | None:
    pairs = _related_pairs(live, runs, "texts")
    if isinstance(pairs, str):
        return pairs
    for a, b in pairs:
        equal = {run[a] == run[b] for run in runs}
        if len(equal) == 1 and (live[a] == live[b]) not in equal:
            was = "equal" if equal.pop() else "different"
            return f"{_place(a, names)} and {_place(b, names)}: no longer {was} as in every recorded run"
    return None


def _place(place: Place, names: Sequence[str]) -> str:
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


def _shown_all(recorded: list[Leaf]) -> str:
    shown = list(dict.fromkeys(shown_leaf(r[1], r[2]) for r in recorded))
    if len(shown) == 1:
        return shown[0]
    return "one of " + ", ".join(shown[:5]) + (" …" if len(shown) > 5 else "")
