"""The red-team soundness suite: scenarios by class, judged against the agent alone on a copy of its world."""

from __future__ import annotations

from . import (
    branches,
    choices,
    computed,
    context,
    harmless,
    identities,
    loops,
    more,
    objects,
    params,
    relations,
    tool_errors,
)
from .harness import Scenario

SCENARIOS: list[Scenario] = [
    *branches.SCENARIOS,
    *tool_errors.SCENARIOS,
    *objects.SCENARIOS,
    *loops.SCENARIOS,
    *computed.SCENARIOS,
    *choices.SCENARIOS,
    *params.SCENARIOS,
    *relations.SCENARIOS,
    *context.SCENARIOS,
    *identities.SCENARIOS,
    *more.SCENARIOS,
    *harmless.SCENARIOS,
]
"""Every scenario, in class order."""

BY_NAME: dict[str, Scenario] = {s.name: s for s in SCENARIOS}
assert len(BY_NAME) == len(SCENARIOS), "scenario names must be unique"
