"""Frozen dataclasses made in one step on the hit path, instead of one ``object.__setattr__`` per field."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_instance(cls: type[T], **fields: Any) -> T:
    """``cls(**fields)`` for a frozen dataclass without slots whose omitted fields have plain defaults.

    The ``__init__`` a frozen dataclass gets sets each field with ``object.__setattr__``, about a
    quarter of a µs apiece; this writes the given fields into the instance's ``__dict__`` at once.
    An omitted field reads its default from the class, where the dataclass put it (so ``vars()``
    shows the given fields only; attribute access, ``==``, ``repr``, ``asdict`` and pickling see
    every field). It runs no ``__post_init__`` (the classes it serves have none) and takes only
    names of fields.
    """
    if cls not in _CHECKED:
        _check(cls)
    made = object.__new__(cls)
    made.__dict__.update(fields)
    return made


_CHECKED: set[type] = set()


def _check(cls: type) -> None:
    """Refuse a class whose omitted fields would not read their defaults from the class."""
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name} has a default factory")
        if f.default is not dataclasses.MISSING and vars(cls).get(f.name, _ABSENT) is not f.default:
            raise TypeError(f"{cls.__name__}.{f.name} does not keep its default on the class")
    if hasattr(cls, "__slots__") or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has slots or a __post_init__")
    _CHECKED.add(cls)


_ABSENT = object()
