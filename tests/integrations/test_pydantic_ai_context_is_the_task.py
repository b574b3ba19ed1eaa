"""What a pydantic-ai agent's model reads and may do is part of the task: instructions at each turn,
the tools offered, the run's usage limits, and tool failures the engine did not see."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, RunContext, Tool, ToolFailed
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from muscle_mem import Engine, MissReason
from muscle_mem.integrations.pydantic_ai import MuscleMem

Policy = Callable[[str, dict[str, str | None], list[tuple[str, Any]]], tuple[str, dict[str, Any]] | str]


def model(policy: Policy) -> FunctionModel:
    """A model that decides from its instructions, the tools it is offered and the tool results so far."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done: list[tuple[str, Any]] = [
            (part.tool_name, part.content if part.outcome == "success" else "failed")
            for message in messages
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        done += [
            (part.tool_name, "failed")
            for message in messages
            for part in message.parts
            if isinstance(part, RetryPromptPart) and part.tool_name is not None
        ]
        tools = {tool.name: tool.description for tool in info.function_tools}
        move = policy(info.instructions or "", tools, done)
        if isinstance(move, tuple):
            return ModelResponse(parts=[ToolCallPart(move[0], move[1], tool_call_id=f"c{len(done)}")])
        return ModelResponse(parts=[TextPart(move)])

    return FunctionModel(respond)


def called(done: list[tuple[str, Any]], tool: str) -> bool:
    return any(name == tool for name, _ in done)


class Desk:
    """An order desk whose account goes under review when an order is submitted, if it is set to."""

    def __init__(self, review: bool) -> None:
        self.review, self.status, self.log = review, "active", list[str]()

    def tools(self) -> list[Callable[..., str]]:
        def submit_order(sku: str) -> str:
            self.log.append("submit_order")
            self.status = "under_review" if self.review else self.status
            return "ok"

        def confirm(sku: str) -> str:
            self.log.append("confirm")
            return "confirmed"

        def notify_compliance(sku: str) -> str:
            self.log.append("notify_compliance")
            return "notified"

        return [submit_order, confirm, notify_compliance]


def desk_policy(instructions: str, tools: dict[str, str | None], done: list[tuple[str, Any]]) -> Any:
    if not called(done, "submit_order"):
        return ("submit_order", {"sku": "s1"})
    if "under_review" in instructions:
        return ("notify_compliance", {"sku": "s1"}) if not called(done, "notify_compliance") else "escalated"
    return ("confirm", {"sku": "s1"}) if not called(done, "confirm") else "ordered"


def desk_agent(engine: Engine, desk: Desk, policy: Any = desk_policy) -> tuple[Agent[None, str], MuscleMem]:
    capability = MuscleMem(engine)
    agent: Agent[None, str] = Agent(model(policy), tools=desk.tools(), capabilities=[capability])

    @agent.instructions
    def account() -> str:
        return f"You are the order desk. Account status: {desk.status}."

    return agent, capability


async def test_instructions_that_change_after_a_replayed_step_hand_the_next_turn_to_the_model() -> None:
    """An instruction function is read again at each turn: a step replays only where it reads as recorded."""
    engine = Engine()
    await desk_agent(engine, Desk(review=False))[0].run("order s1")
    desk = Desk(review=True)
    agent, capability = desk_agent(engine, desk)
    result = await agent.run("order s1")
    assert desk.log == ["submit_order", "notify_compliance"] and result.output == "escalated"
    assert capability.last_result is not None and capability.last_result.steps_replayed == 1
    assert capability.last_result.miss_reason is MissReason.PRE_CHECK_FAILED


async def test_instructions_that_change_before_the_answer_turn_leave_the_answer_to_the_model() -> None:
    """The recorded answer is given only at a turn that reads what the recorded answer's turn read."""

    def policy(instructions: str, tools: dict[str, str | None], done: list[tuple[str, Any]]) -> Any:
        if not called(done, "submit_order"):
            return ("submit_order", {"sku": "s1"})
        return "under review: escalated" if "under_review" in instructions else "ordered"

    engine = Engine()
    await desk_agent(engine, Desk(review=False), policy)[0].run("order s1")
    same = Desk(review=False)
    assert (await desk_agent(engine, same, policy)[0].run("order s1")).output == "ordered"
    desk = Desk(review=True)
    agent, capability = desk_agent(engine, desk, policy)
    result = await agent.run("order s1")
    assert result.output == "under review: escalated" and desk.log == ["submit_order"]
    assert capability.last_result is not None and capability.last_result.steps_replayed == 1


def test_a_tools_changed_description_or_an_added_tool_is_another_task() -> None:
    """The tools offered (name, description, parameters) are part of the task the model is given."""
    engine, log = Engine(), list[str]()

    def wipe(disk: str) -> str:
        log.append("wipe")
        return "wiped"

    def archive(disk: str) -> str:
        log.append("archive")
        return "archived"

    def policy(instructions: str, tools: dict[str, str | None], done: list[tuple[str, Any]]) -> Any:
        if done:
            return "done"
        if "DISABLED" in (tools.get("wipe") or ""):
            return "not allowed"
        return ("archive" if "archive" in tools else "wipe", {"disk": "d1"})

    def run(tools: list[Tool[None]]) -> MuscleMem:
        capability = MuscleMem(engine)
        Agent(model(policy), tools=tools, capabilities=[capability]).run_sync("clear d1")
        return capability

    run([Tool(wipe, description="Wipe a disk.")])
    assert run([Tool(wipe, description="Wipe a disk.")]).last_result.hit  # type: ignore[union-attr]
    log.clear()
    disabled = run([Tool(wipe, description="DISABLED by ops: never call this tool.")]).last_result
    assert disabled is not None and disabled.miss_reason is MissReason.NO_TRAJECTORY and log == []
    added = run([Tool(wipe, description="Wipe a disk."), Tool(archive)]).last_result
    assert added is not None and added.miss_reason is MissReason.NO_TRAJECTORY and log == ["archive"]


def test_a_run_that_may_not_call_tools_is_another_task() -> None:
    """``tool_choice="none"`` in the run's model settings: the model cannot make the recorded calls."""
    engine, log = Engine(), list[str]()

    def wipe(disk: str) -> str:
        log.append("wipe")
        return "wiped"

    def policy(instructions: str, tools: dict[str, str | None], done: list[tuple[str, Any]]) -> Any:
        return "done" if done else ("wipe", {"disk": "d1"})

    capability = MuscleMem(engine)
    agent = Agent(model(policy), tools=[Tool(wipe)], capabilities=[capability])
    agent.run_sync("clear d1")
    agent.run_sync("clear d1")
    assert capability.last_result is not None and capability.last_result.hit
    log.clear()
    agent.run_sync("clear d1", model_settings={"tool_choice": "none"})
    result = capability.last_result
    assert result is not None and result.miss_reason is MissReason.NO_TRAJECTORY


async def test_a_replay_makes_no_more_steps_than_the_runs_request_limit_allows() -> None:
    """A replayed step is a model turn: under ``request_limit=2`` the run raises after two, as alone."""
    engine, log = Engine(), list[int]()

    def step(n: int) -> str:
        log.append(n)
        return "ok"

    def policy(instructions: str, tools: dict[str, str | None], done: list[tuple[str, Any]]) -> Any:
        return ("step", {"n": len(done)}) if len(done) < 3 else "three steps"

    def agent() -> tuple[Agent[None, str], MuscleMem]:
        capability = MuscleMem(engine)
        return Agent(model(policy), tools=[step], capabilities=[capability]), capability

    await agent()[0].run("do three steps")
    log.clear()
    with pytest.raises(UsageLimitExceeded):
        await Agent(model(policy), tools=[step]).run(
            "do three steps", usage_limits=UsageLimits(request_limit=2)
        )
    alone, log[:] = list(log), []
    cached, capability = agent()
    with pytest.raises(UsageLimitExceeded):
        await cached.run("do three steps", usage_limits=UsageLimits(request_limit=2))
    assert log == alone == [0, 1]
    assert capability.last_result is None or capability.last_result.steps_replayed <= 2


def shipping(engine: Engine, embargo: list[bool], log: list[str]) -> tuple[Agent[None, str], MuscleMem]:
    """An agent whose ``ship`` tool has an arguments validator that reads the world."""

    def check_ship(ctx: RunContext[None], address: str) -> None:
        if embargo.pop(0) if embargo else False:
            raise ToolFailed("shipping to this address is embargoed")

    def ship(address: str) -> str:
        log.append("ship")
        return "shipped"

    def hold(address: str) -> str:
        log.append("hold")
        return "held"

    def policy(instructions: str, tools: dict[str, str | None], done: list[tuple[str, Any]]) -> Any:
        if not called(done, "ship") or (
            done[-1] == ("ship", "failed") and len(done) == 1 and embargo_retries
        ):
            return ("ship", {"address": "A1"})
        if done[-1] == ("ship", "failed") and not called(done, "hold"):
            return ("hold", {"address": "A1"})
        return "held" if called(done, "hold") else "shipped"

    embargo_retries = not embargo[1:] and bool(embargo)  # a validator that fails once: the model retries
    capability = MuscleMem(engine)
    tools: list[Tool[None]] = [Tool(ship, args_validator=check_ship), Tool(hold)]
    return Agent(model(policy), tools=tools, capabilities=[capability]), capability


async def test_a_call_its_validator_refused_keeps_the_run_out_of_the_store_unless_retried() -> None:
    """A failure the model saw and the engine did not (an arguments validator) is treated as a raise."""
    engine, log = Engine(), list[str]()
    agent, capability = shipping(engine, [True, True], log)
    assert (await agent.run("ship to A1")).output == "held"
    assert capability.last_result is not None and not capability.last_result.stored
    assert "'ship' failed and the model saw it" in str(capability.last_result.not_stored)
    agent, capability = shipping(engine, [], log)
    log.clear()
    assert (await agent.run("ship to A1")).output == "shipped" and log == ["ship"]
    agent, capability = shipping(Engine(), [True], log)
    await agent.run("ship to A1")
    assert (
        capability.last_result is not None and capability.last_result.stored
    )  # the same call again: a retry
