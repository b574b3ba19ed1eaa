"""Frozen dataclasses made in one step are the objects their own constructor makes."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from muscle_mem.model._frozen_instances import fast_instance
from muscle_mem.reasons import MissReason
from muscle_mem.replay._drivers import Ending
from muscle_mem.result import Result
from muscle_mem.stores.base import Event


@pytest.mark.parametrize(
    ("cls", "fields"),
    [
        (Result, {"hit": True, "output": [1], "steps_replayed": 5, "trajectory_id": "t", "steps": (1,)}),
        (Result, {"hit": False, "reason": "r", "miss_reason": MissReason.NO_TRAJECTORY}),
        (Ending, {"trajectory": None, "answer": {"a": 1}}),
        (Event, {"at": 1.0, "task": "t", "task_key": "k", "hit": True, "steps_replayed": 2}),
    ],
)
def test_a_fast_instance_equals_the_constructors(cls: type, fields: dict[str, object]) -> None:
    """Every field, given or defaulted, is what ``cls(**fields)`` holds; its repr is the same."""
    made, built = fast_instance(cls, **fields), cls(**fields)
    assert type(made) is cls
    for f in dataclasses.fields(cls):
        assert getattr(made, f.name) == getattr(built, f.name)
    assert repr(made) == repr(built)
    assert made == built and dataclasses.asdict(made) == dataclasses.asdict(built)
    assert pickle.loads(pickle.dumps(made)) == built  # a defaulted field too, read from the class


def test_a_fast_instance_keeps_only_the_given_fields() -> None:
    """The fields not given are not copied into the instance: they read the class's defaults."""
    made = fast_instance(Result, hit=True, steps_replayed=5)
    assert vars(made) == {"hit": True, "steps_replayed": 5}
    assert made.reason is None and made.steps == ()


def test_a_fast_instance_stays_frozen() -> None:
    """Its fields cannot be assigned, as for any frozen dataclass."""
    result = fast_instance(Result, hit=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.hit = False  # type: ignore[misc]
    assert not dataclasses.replace(result, hit=False).hit


def test_classes_it_cannot_serve_are_refused() -> None:
    """A class with slots, a ``__post_init__`` or a default factory is refused, not half made."""

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        a: int = 0

    @dataclasses.dataclass(frozen=True)
    class Checked:
        a: int = 0

        def __post_init__(self) -> None:
            raise AssertionError

    @dataclasses.dataclass(frozen=True)
    class Listed:
        a: list[int] = dataclasses.field(default_factory=list)

    for cls in (Slotted, Checked, Listed):
        with pytest.raises(TypeError):
            fast_instance(cls)
