"""What an Agents SDK run spent: its ``Usage`` (tokens in and out, requests), and the model's name."""

from __future__ import annotations

from typing import Any

from agents import Agent, RunResult, RunResultStreaming

from muscle_mem import Session


def report_usage(session: Session, result: RunResult | RunResultStreaming, start: Agent[Any]) -> None:
    """Add the run's usage to the session's run; named by its model when every agent of the run had one name."""
    usage = result.context_wrapper.usage
    agents = {
        id(item.agent): item.agent
        for item in result.new_items
        if isinstance(getattr(item, "agent", None), Agent)
    }
    names = {_model_name(agent) for agent in (start, *agents.values())}
    model = names.pop() if len(names) == 1 else None
    session.add_usage(usage.input_tokens, usage.output_tokens, requests=usage.requests, model=model)


def _model_name(agent: Agent[Any]) -> str | None:
    """The name of an agent's model: as given, or the ``model`` a Model object names (None if none)."""
    model = agent.model
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    return name if isinstance(name, str) else None
