"""The run's hooks, with each model turn's start said to the engine's session."""

from __future__ import annotations

from typing import Any

from agents import Agent, RunContextWrapper, RunHooks
from agents.items import ModelResponse
from agents.lifecycle import RunHooksBase
from agents.run_context import AgentHookContext

from muscle_mem import Session


class TurnHooks(RunHooks[Any]):
    """The hooks a run was given (if any), and a turn begun in the session before each model call.

    The calls of one model response are then stored as decided together, so a replay makes them
    together and hands over between turns.
    """

    def __init__(self, given: RunHooksBase[Any, Agent[Any]] | None, session: Session) -> None:
        self.given = given
        self.session = session

    async def on_llm_start(
        self, context: RunContextWrapper[Any], agent: Agent[Any], system_prompt: str | None, input_items: Any
    ) -> None:
        self.session.begin_turn()
        if self.given is not None:
            await self.given.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        if self.given is not None:
            await self.given.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        if self.given is not None:
            await self.given.on_agent_start(context, agent)

    async def on_agent_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        if self.given is not None:
            await self.given.on_agent_end(context, agent, output)

    async def on_handoff(
        self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]
    ) -> None:
        if self.given is not None:
            await self.given.on_handoff(context, from_agent, to_agent)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Any) -> None:
        if self.given is not None:
            await self.given.on_tool_start(context, agent, tool)

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Any, result: object
    ) -> None:
        if self.given is not None:
            await self.given.on_tool_end(context, agent, tool, result)
