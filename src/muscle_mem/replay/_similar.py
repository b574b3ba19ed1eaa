"""A similar task is a candidate, never a replay on its own: the agent's run is compared with it.

Semantic matching finds a stored task whose text says the same (``embed/matcher.py``). No guard
tells every pair of meanings apart, so its trajectories are not replayed for the new text: the
agent solves it, and its run, stored under the new text's own key, is compared with the similar
task's runs. Whether they agreed is counted (``metrics.similar_agreed`` and ``similar_disagreed``),
which says, before anyone relies on it, how often a replay of the similar task would have been right.
"""

from __future__ import annotations

from collections.abc import Iterable

from muscle_mem.model.trajectory import Trajectory, arg_record
from muscle_mem.replay._step_index import StepNode, TaskSteps


def agrees(trajectory: Trajectory, similar: TaskSteps) -> bool:
    """Whether a stored run of the similar task made the same calls in order and gave the same answer.

    Calls are the same when their signatures are (tool, version, and each argument with its origin).
    """
    nodes: Iterable[StepNode] = (similar.root,)
    for step in trajectory.steps:
        signature = step.signature
        nodes = [
            edge.node
            for node in nodes
            if (group := node.groups.get(signature)) is not None
            for edge in group.ordered()
        ]
        if not nodes:
            return False
    answer = arg_record(trajectory.result)
    return any(arg_record(ended.result) == answer for node in nodes for ended in node.ends.values())
