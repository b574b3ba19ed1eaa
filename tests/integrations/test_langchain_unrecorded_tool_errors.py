"""LangChain: a run whose model went on from a tool error the engine did not record is not stored.

An argument schema that refuses a call answers the model with an error ``ToolMessage`` before the
tool's function runs; the model decides on it, and a replay could not see it. A retry of the same
call is stored, as for a tool that raised.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, field_validator

from muscle_mem import Engine, NotStoredReason
from muscle_mem.integrations.langchain import CachedAgent


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, with tools bound (ignored)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def turn(name: str, call_id: str) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": name, "args": {"address": "A1"}, "id": call_id, "type": "tool_call"}]
    )


class Depot:
    """A shipping depot whose embargo refuses shipments in the argument schema (so many times)."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.done: list[str] = []

    def tools(self) -> list[BaseTool]:
        depot = self

        class ShipArgs(BaseModel):
            address: str

            @field_validator("address")
            @classmethod
            def not_embargoed(cls, value: str) -> str:
                if depot.refusals > 0:
                    depot.refusals -= 1
                    raise ValueError("shipping to this address is embargoed")
                return value

        def ship(address: str) -> str:
            depot.done.append(f"shipped {address}")
            return "shipped"

        def hold(address: str) -> str:
            """Hold a parcel."""
            depot.done.append(f"held {address}")
            return "held"

        return [
            StructuredTool.from_function(
                ship, description="Ship a parcel.", args_schema=ShipArgs, handle_validation_error=True
            ),
            StructuredTool.from_function(hold),
        ]


def test_a_refused_argument_the_model_went_on_from_keeps_the_run_out() -> None:
    """The model read the schema's error and held the parcel: that run is not stored."""
    depot = Depot(refusals=1)
    model = ScriptedModel(messages=iter([turn("ship", "c1"), turn("hold", "c2"), AIMessage("held")]))
    agent = CachedAgent(Engine(), create_agent(model, depot.tools()))
    state = agent.invoke({"messages": [HumanMessage("ship to A1")]})
    assert state["messages"][2].status == "error" and depot.done == ["held A1"]
    result = agent.last_result
    assert result is not None and not result.stored
    assert result.not_stored_reason is NotStoredReason.REFUSED
    assert result.not_stored is not None and "error result of tool 'ship'" in result.not_stored

    depot.done = []
    model = ScriptedModel(messages=iter([turn("ship", "c1"), AIMessage("shipped")]))
    again = CachedAgent(agent.engine, create_agent(model, depot.tools()))
    again.invoke({"messages": [HumanMessage("ship to A1")]})
    assert again.last_result is not None and not again.last_result.hit and depot.done == ["shipped A1"]


def test_a_refused_call_made_again_the_same_way_is_stored() -> None:
    """A retry with the same arguments that goes through is stored as the call that returned."""
    depot = Depot(refusals=1)
    model = ScriptedModel(messages=iter([turn("ship", "c1"), turn("ship", "c2"), AIMessage("shipped")]))
    agent = CachedAgent(Engine(), create_agent(model, depot.tools()))
    agent.invoke({"messages": [HumanMessage("ship to A1")]})
    result = agent.last_result
    assert result is not None and result.stored and depot.done == ["shipped A1"]
    assert [c.tool for c in result.calls] == ["ship"]
