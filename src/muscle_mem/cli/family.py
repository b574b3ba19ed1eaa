"""A family's evidence as ``muscle-mem show --family`` prints it: what its runs saw, step by step.

A family is the runs of one task (its text and tags). At each step of the trajectory shown, the runs
that made the same calls so far are its evidence: for each leaf of that step's output, what they saw
(an identity, a range of numbers, a set of values) and, where the runs went different ways (their
calls in order), which values went with which way. A replay goes on only as far as that evidence covers what it sees.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from muscle_mem.cli.phrases import plural
from muscle_mem.cli.untrusted import shown
from muscle_mem.model._evidence_leaves import NUMERIC_KINDS, free_by_variation
from muscle_mem.model._evidence_places import label_text, shown_leaf, where
from muscle_mem.model._leaf_kinds import Leaf
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.stores.base import Browsable, CoreStore

MAX_RUNS = 500
"""The most runs of a family read (the most recently used first)."""


def family_of(store: CoreStore, trajectory: Trajectory) -> list[Trajectory]:
    """The stored runs of the trajectory's task (the same text and tags), the trajectory first."""
    runs = [trajectory]
    if not isinstance(store, Browsable):
        return runs
    for summary in store.summaries():
        if len(runs) >= MAX_RUNS:
            break
        if (
            summary.id != trajectory.id
            and summary.task == trajectory.task
            and summary.tags == trajectory.tags
        ):
            run = store.get(summary.id)
            if run is not None and run.task_key == trajectory.task_key:
                runs.append(run)
    return runs


def describe_family(trajectory: Trajectory, runs: Sequence[Trajectory]) -> list[str]:
    """The lines that say what a family's runs saw at each step of ``trajectory``, and how they went on.

    Each distinct way the runs went, their tools in order, is named by a letter; a leaf whose values
    went with different ways is one the agent decided on, and a replay may only take a value a run
    saw, to go the way that run went.
    """
    ways = _ways(runs)
    lines = [
        f"family      {plural(len(runs), 'run')} of this task, which went {len(set(ways.values()))} way(s):"
    ]
    legend: dict[str, list[str]] = defaultdict(list)
    for run in runs:
        legend[ways[run.id]].append(" → ".join(step.tool for step in run.steps) or "no call")
    lines.extend(
        f"  {letter}: {tools[0]} ({plural(len(tools), 'run')})" for letter, tools in sorted(legend.items())
    )
    along = list(runs)
    for number, step in enumerate(trajectory.steps):
        along = [r for r in along if len(r.steps) > number and r.steps[number].signature == step.signature]
        lines.append("")
        lines.append(f"step {number}  {step.tool}: {plural(len(along), 'run')} made this call")
        lines.extend(f"  {line}" for line in _step_evidence(number, along, ways))
    return [shown(line) for line in lines]  # paths, values and tool names are the store's


def _ways(runs: Sequence[Trajectory]) -> dict[str, str]:
    """Each run's way (its calls in order, by signature) named by a letter, in the order first seen."""
    letters: dict[tuple[str, ...], str] = {}
    ways = {}
    for run in runs:
        calls = tuple(step.signature for step in run.steps)
        ways[run.id] = letters.setdefault(calls, _letter(len(letters)))
    return ways


def _letter(number: int) -> str:
    return chr(ord("A") + number) if number < 26 else f"W{number}"


def _step_evidence(number: int, runs: Sequence[Trajectory], ways: dict[str, str]) -> list[str]:
    """Each leaf of one step's output with what the runs saw of it, by the way each run went on."""
    seen: dict[str, dict[str, list[Leaf]]] = defaultdict(lambda: defaultdict(list))
    unkept = 0
    went: dict[str, int] = defaultdict(int)
    for run in runs:
        observed = run.steps[number].observed
        way = ways[run.id]
        went[way] += 1
        if observed is None:
            unkept += 1
            continue
        for leaf in observed.leaves:
            seen[leaf[0]][way].append(leaf)
    lines = []
    name = f"step {number}"
    for path in sorted(seen):
        by_way = seen[path]
        every = [leaf for leaves in by_way.values() for leaf in leaves]
        label = where(name, path).removeprefix(f"{name} ")
        per_way = {way: _evidence(leaves, path) for way, leaves in sorted(by_way.items())}
        if len(set(per_way.values())) == 1:
            lines.append(f"{label}: {_evidence(every, path)}")
        else:
            parts = [f"{evidence} ({way})" for way, evidence in per_way.items()]
            lines.append(f"{label}: differs by way: " + "; ".join(parts))
        if len(every) < len(runs) - unkept:
            lines[-1] += f" (in {len(every)} of {len(runs) - unkept} runs)"
    if unkept:
        lines.append(f"{plural(unkept, 'run')} recorded before 0.3.0 kept nothing here")
    lines.append("went on as " + ", ".join(f"{way} ({count})" for way, count in sorted(went.items())))
    return lines


def _evidence(leaves: Sequence[Leaf], path: str) -> str:
    """What runs that went on alike saw of one leaf, and so how far a replay may let it vary."""
    kinds = {leaf[1] for leaf in leaves}
    values: list[Any] = [leaf[2] for leaf in leaves]
    if _free(leaves, path):
        if kinds == {"#"}:
            labels = sorted({label_text(leaf[3]) for leaf in leaves})
            return "an identity, free (" + " or ".join(labels) + ")"
        return f"free, {len(set(values))} values seen"
    if len(kinds) > 1:
        return "of different kinds: only a value a run saw"
    kind = kinds.pop()
    distinct = list(dict.fromkeys(values))
    if kind in NUMERIC_KINDS and len(distinct) > 1 and all(type(v) in (int, float) for v in distinct):
        low, high = min(distinct), max(distinct)
        return f"from {shown_leaf(kind, low)} to {shown_leaf(kind, high)}"
    if len(distinct) == 1:
        return f"always {shown_leaf(kind, distinct[0])}"
    written = list(dict.fromkeys(shown_leaf(kind, v) for v in distinct))
    if written == ["another text"]:
        return f"{len(distinct)} texts, each only as seen"
    return "one of " + ", ".join(written[:6]) + (" …" if len(written) > 6 else "")


def _free(leaves: Sequence[Leaf], path: str) -> bool:
    """Whether runs that went one way showed a leaf free: an identity in each, or seen varying freely."""
    kinds = {leaf[1] for leaf in leaves}
    if kinds == {"#"}:
        return True
    return free_by_variation(leaves, path)


def generality(runs: Sequence[Trajectory]) -> tuple[int, int]:
    """How many ways a family's runs went, and how many of the leaves they saw are free.

    A leaf (a step's output path) is free when, among the runs that went the same way, it is an
    identity or the runs showed it varying freely (:func:`evidence.free_by_variation`).
    """
    ways = _ways(runs)
    by_way: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_way[ways[run.id]].append(run)
    free: set[tuple[int, str]] = set()
    for members in by_way.values():
        seen: dict[tuple[int, str], list[Leaf]] = defaultdict(list)
        for run in members:
            for number, step in enumerate(run.steps):
                for leaf in step.observed.leaves if step.observed is not None else ():
                    seen[(number, leaf[0])].append(leaf)
        free.update(place for place, leaves in seen.items() if _free(leaves, place[1]))
    return len(by_way), len(free)
