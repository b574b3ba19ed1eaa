"""What a run saw as a whole: categories, texts, identities and list items seen together, and items placed by their own names."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from muscle_mem.model._evidence_leaves import NUMERIC_KINDS, free_by_variation, within
from muscle_mem.model._evidence_places import (
    BY_WHOLE,
    FIRST,
    ITEMS,
    LAST,
    ORDER,
    POSITION_AT,
    ROWS,
    History,
    Leaves,
    Live,
    Place,
    list_pattern,
    place_text,
    shown_range,
)
from muscle_mem.model._leaf_kinds import Leaf, can_name, seconds_of
from muscle_mem.model._observations import LABELLED_KINDS

_ITEM_CATEGORIES = frozenset("wb")
"""The kinds of an item's fields that name it among the others (a category word, a bool)."""


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
            positions = list(POSITION_AT.finditer(path))
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
        for position in POSITION_AT.finditer(path):
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


def with_item_places(
    live: Leaves, runs: Sequence[Leaves], *, from_end: bool = True
) -> tuple[list[tuple[Leaf, ...]], list[list[tuple[Leaf, ...]]]]:
    """What the replay and the runs saw, with the numbers of list items also at :func:`_item_places`' places.

    Only where such a place is not at one position from the start in the replay and every run (lists
    of one length, items that did not move): there they are judged already. ``from_end``: places
    counted from a list's end too (for relations; a range there would cost needless misses).
    """
    ends = _lengths_that_differ(live, runs) if from_end else [frozenset()] * len(live)
    now = [
        _item_places(leaves, ends[at]) | _param_places(live[0], leaves, at) for at, leaves in enumerate(live)
    ]
    theirs = [
        [
            _item_places(leaves, ends[at] if at < len(ends) else frozenset())
            | _param_places(run[0], leaves, at)
            for at, leaves in enumerate(run)
        ]
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


BY_PARAM = "[@"
"""What a place named by a param starts with: ``['by_day'][@{day}]``, the entry keyed by the day asked for."""

_KEY = re.compile(r"\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]")


def _param_places(params: tuple[Leaf, ...], leaves: tuple[Leaf, ...], at: int) -> dict[str, tuple[Leaf, str]]:
    """Each leaf under a mapping key or a list position a param names, placed also by that param.

    An agent may read the entry a param names (the load on the day asked for, the line numbered in
    the task): the runs saw that entry at other keys or positions, so what they showed of it is
    judged where the param points now. A date param names a key that is that date; a category word
    one that is that word; a whole number param a list position, counted from 0 or from 1.
    """
    if at == 0 or not params or not leaves:
        return {}
    dates: dict[float, list[str]] = {}
    words: dict[str, list[str]] = {}
    indices: dict[int, list[str]] = {}
    for path, kind, value, _label in params:
        if not path.startswith("{") or not path.endswith("}"):
            continue
        if kind == "d" and type(value) in (int, float):
            dates.setdefault(float(value), []).append(path)
        elif kind == "w" and type(value) is str:
            words.setdefault(value, []).append(path)
        elif kind == "n" and type(value) is int and 0 <= value <= 1000:
            indices.setdefault(value, []).append(path)
            indices.setdefault(value - 1, []).append(f"{path}-1")
    if not (dates or words or indices):
        return {}
    found: dict[str, tuple[Leaf, str]] = {}
    for leaf in leaves:
        path, kind, value, label = leaf
        if kind == "l" or "[" not in path:
            continue
        for segment in _KEY.finditer(path):
            key, position = segment.group(1), segment.group(2)
            names: list[str] = []
            if position is not None:
                names = indices.get(int(position), [])
            elif key is not None:
                names = words.get(key, [])
                if dates and len(key) >= 8 and key[:1].isdigit():
                    seconds = seconds_of(key)
                    if seconds is not None:
                        names = names + dates.get(seconds, [])
            for name in names:
                place = f"{path[: segment.start()]}{BY_PARAM}{name}]{path[segment.end() :]}"
                found[place] = ((place, kind, value, label), path)
    return found


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
    for position in POSITION_AT.finditer(path):
        rest = path[position.end() - 1 :]
        sub = list_pattern(rest) or rest
        found.append((path[: position.start() + 1] + "*", int(position.group(1)), sub[1:]))
    return tuple(found)


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
            if seen and not within(count, seen):
                return (
                    f"{place_text((place[0], place[1][len(prefix) :]), names)}: {count} items alike, recorded "
                    f"{shown_range(seen)} where the runs saw what the replay saw with them"
                )
    return None


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


def seen_together(
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
    shown = place_text(best[1], names) if best[1] is not None else "what it saw"
    return [], f"{shown}: with what the replay saw beside it, each seen in a recorded run but never together"
