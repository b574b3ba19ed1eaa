"""A step whose arguments are passed as they are is replayed as evaluating them would."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.model.provenance import Arg, Const, Output, direct_arguments
from muscle_mem.model.trajectory import Step
from muscle_mem.reasons import MissReason
from muscle_mem.record._run import Run
from muscle_mem.record._task import plain_task
from muscle_mem.record.tools import ToolRegistry, make_tool
from muscle_mem.replay._drivers import Ending, drive
from muscle_mem.replay._replayer import Replayer


@dataclass
class _Edge:
    step: Step
    node: Any
    trajectories: frozenset[str] = frozenset({"t"})
    stamp: float = 1.0


@dataclass
class _Group:
    step: Step
    edge: _Edge | None = None
    direct: Any = None

    def __post_init__(self) -> None:
        self.direct = direct_arguments(self.step.args, self.step.kwargs)

    def ordered(self, pre_key: str | None = None, *, keyed: bool = False) -> Iterator[_Edge]:
        return iter([self.edge] if self.edge is not None else [])

    def latest_stamp(self) -> float:
        return 1.0


@dataclass
class _Node:
    groups: dict[str, _Group] = field(default_factory=dict)
    ends: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Task:
    root: _Node


def _replayed(args: tuple[Arg, ...], kwargs: tuple[tuple[str, Arg], ...]) -> tuple[Ending, list[Any]]:
    """Replay one recorded call of ``echo`` made with these arguments; what it ended with, and its calls."""
    seen: list[Any] = []

    def echo(*a: Any, **k: Any) -> str:
        seen.append((a, k))
        return "done"

    registry = ToolRegistry()
    tool = make_tool(echo, "echo", "v1", None, None, is_method=False)
    registry.add(tool)
    step = Step("echo", "v1", args, kwargs)
    group = _Group(step)
    group.edge = _Edge(step, _Node())
    run = Run(object(), plain_task("key", "task", (), {}))
    ending = drive(Replayer(registry, None, run, {}).replay(_Task(_Node({"s": group}))), TypeError)
    return ending, seen


def test_constant_arguments_are_passed_as_recorded() -> None:
    """Constant scalars, positional and named, reach the tool as they were recorded, in a fresh dict."""
    _, seen = _replayed((Const(1), Const("a")), (("k", Const(None)),))
    assert seen == [((1, "a"), {"k": None})]


def test_an_output_the_run_has_not_made_misses_with_unresolved_value() -> None:
    """A recorded reference to an output no step made yet is not guessed: the step is unresolved."""
    ending, seen = _replayed((Output(3),), ())
    assert seen == [] and ending.kind is MissReason.UNRESOLVED_VALUE
