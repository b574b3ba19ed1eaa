"""What an Agents SDK agent reads and how its run is set up are part of the task: instructions at
each turn, the tools offered, ``max_turns``, ``tool_use_behavior`` and tool guardrails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    MaxTurnsExceeded,
    ModelSettings,
    RunContextWrapper,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.tool_guardrails import ToolGuardrailFunctionOutput, ToolOutputGuardrailData, tool_output_guardrail
from pydantic import BaseModel

from muscle_mem import Engine, MissReason
from muscle_mem.integrations.openai_agents import CachedRunner

set_tracing_disabled(True)

Done = list[tuple[str, Any]]
Policy = Callable[[str, dict[str, str], Done], Any]


def model(policy: Policy) -> ScriptedModel:
    """A model that decides from its instructions, the tools it is offered and the tool outputs so far."""

    def respond(call: ModelCall) -> list[Any]:
        asked: dict[str, str] = {}
        done: Done = []
        for item in call.input if isinstance(call.input, list) else []:
            if item.get("type") == "function_call":
                asked[item["call_id"]] = item["name"]
            elif item.get("type") == "function_call_output":
                done.append((asked[item["call_id"]], item["output"]))
        tools = {tool.name: getattr(tool, "description", "") for tool in call.tools}
        move = policy(call.system_instructions or "", tools, done)
        if isinstance(move, tuple):
            return [function_call(move[0], move[1], call_id=f"c{len(done)}")]
        return [assistant_message(move)]

    return ScriptedModel([ModelStep.respond(respond) for _ in range(50)])


def called(done: Done, tool: str) -> bool:
    return any(name == tool for name, _ in done)


async def test_instructions_that_change_after_a_replayed_step_hand_the_next_turn_to_the_agent() -> None:
    """Callable instructions are read again at each turn: a step replays only where they read as recorded."""
    world = {"review": False, "status": "active"}
    log: list[str] = []

    @function_tool
    def submit_order(sku: str) -> str:
        log.append("submit_order")
        world["status"] = "under_review" if world["review"] else "active"
        return "ok"

    @function_tool
    def confirm(sku: str) -> str:
        log.append("confirm")
        return "confirmed"

    @function_tool
    def notify_compliance(sku: str) -> str:
        log.append("notify_compliance")
        return "notified"

    def policy(instructions: str, tools: dict[str, str], done: Done) -> Any:
        if not called(done, "submit_order"):
            return ("submit_order", {"sku": "s1"})
        if "under_review" in instructions:
            return (
                ("notify_compliance", {"sku": "s1"}) if not called(done, "notify_compliance") else "escalated"
            )
        return ("confirm", {"sku": "s1"}) if not called(done, "confirm") else "ordered"

    def instructions(ctx: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        return f"You are the order desk. Account status: {world['status']}."

    agent = Agent(
        name="desk",
        instructions=instructions,
        model=model(policy),
        tools=[submit_order, confirm, notify_compliance],
    )
    runner = CachedRunner(Engine(), agent)
    await runner.run("order s1")
    world.update(review=True, status="active")
    log.clear()
    result = await runner.run("order s1")
    assert log == ["submit_order", "notify_compliance"] and result.final_output == "escalated"
    assert runner.last_result is not None and runner.last_result.steps_replayed == 1
    assert runner.last_result.miss_reason is MissReason.PRE_CHECK_FAILED


async def test_a_tools_changed_description_or_an_added_tool_is_another_task() -> None:
    """The tools offered (name, description, parameters) are part of the task the model is given."""
    log: list[str] = []

    def wipe(disk: str) -> str:
        log.append("wipe")
        return "wiped"

    def archive(disk: str) -> str:
        log.append("archive")
        return "archived"

    def policy(instructions: str, tools: dict[str, str], done: Done) -> Any:
        if done:
            return "done"
        if "DISABLED" in tools.get("wipe", ""):
            return "not allowed"
        return ("archive" if "archive" in tools else "wipe", {"disk": "d1"})

    engine = Engine()

    async def run(*tools: Any) -> CachedRunner:
        runner = CachedRunner(engine, Agent(name="ops", model=model(policy), tools=list(tools)))
        await runner.run("clear d1")
        return runner

    await run(function_tool(wipe, description_override="Wipe a disk."))
    same = await run(function_tool(wipe, description_override="Wipe a disk."))
    assert same.last_result is not None and same.last_result.hit
    log.clear()
    disabled = await run(function_tool(wipe, description_override="DISABLED by ops: never call this tool."))
    assert disabled.last_result is not None and disabled.last_result.miss_reason is MissReason.NO_TRAJECTORY
    added = await run(function_tool(wipe, description_override="Wipe a disk."), function_tool(archive))
    assert added.last_result is not None and added.last_result.miss_reason is MissReason.NO_TRAJECTORY
    assert log == ["archive"]


async def test_a_replay_makes_no_more_steps_than_max_turns_allows() -> None:
    """A replayed step is a model turn: under ``max_turns=2`` the run raises after two steps, as alone."""
    log: list[int] = []

    @function_tool
    def step(n: int) -> str:
        log.append(n)
        return "ok"

    def policy(instructions: str, tools: dict[str, str], done: Done) -> Any:
        return ("step", {"n": len(done)}) if len(done) < 3 else "three steps"

    runner = CachedRunner(Engine(), Agent(name="stepper", model=model(policy), tools=[step]))
    await runner.run("three steps")
    log.clear()
    with pytest.raises(MaxTurnsExceeded):
        await Runner.run(Agent(name="stepper", model=model(policy), tools=[step]), "three steps", max_turns=2)
    alone, log[:] = list(log), []
    with pytest.raises(MaxTurnsExceeded):
        await runner.run("three steps", max_turns=2)
    assert log == alone == [0, 1]


async def test_stop_on_first_tool_ends_a_partly_replayed_run_with_that_tools_output() -> None:
    """With ``stop_on_first_tool`` the run ends on the replayed tool's output: the model is not asked again."""
    world: dict[str, Any] = {"price": 10, "bought": []}

    @function_tool
    def get_price(sku: str) -> dict[str, int]:
        return {"price": world["price"]}

    @function_tool
    def buy(sku: str) -> str:
        world["bought"].append(sku)
        return "bought"

    def policy(instructions: str, tools: dict[str, str], done: Done) -> Any:
        if not called(done, "get_price"):
            return ("get_price", {"sku": "s1"})
        return ("buy", {"sku": "s1"}) if not called(done, "buy") else "done"

    agent = Agent(
        name="shop", model=model(policy), tools=[get_price, buy], tool_use_behavior="stop_on_first_tool"
    )
    runner = CachedRunner(Engine(), agent)
    assert (await runner.run("price of s1")).final_output == "{'price': 10}"
    world["price"] = 12
    result = await runner.run("price of s1")
    assert result.final_output == "{'price': 12}" and world["bought"] == []
    assert runner.last_result is not None and runner.last_result.steps_replayed == 1


async def test_a_tool_with_guardrails_is_not_replayed_so_they_run_as_in_the_agent_alone() -> None:
    """A replay does not run a tool's guardrails: the step is left to the agent, whose run applies them."""
    world: dict[str, Any] = {"bio": "likes tea", "published": []}

    @tool_output_guardrail
    def no_pii(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        if "SSN" in str(data.output):
            return ToolGuardrailFunctionOutput.reject_content("blocked: the output held PII")
        return ToolGuardrailFunctionOutput.allow()

    def fetch_profile(user: str) -> str:
        return str(world["bio"])

    @function_tool
    def publish(user: str, bio: str) -> str:
        world["published"].append(bio)
        return "published"

    def policy(instructions: str, tools: dict[str, str], done: Done) -> Any:
        if not called(done, "fetch_profile"):
            return ("fetch_profile", {"user": "u1"})
        output = done[0][1]
        if output.startswith("blocked"):
            return "blocked"
        return ("publish", {"user": "u1", "bio": output}) if not called(done, "publish") else "ok"

    tools = [function_tool(fetch_profile, tool_output_guardrails=[no_pii]), publish]
    runner = CachedRunner(Engine(), Agent(name="pub", model=model(policy), tools=tools))
    await runner.run("publish u1's profile")
    world.update(bio="SSN 123-45-6789", published=[])
    result = await runner.run("publish u1's profile")
    assert result.final_output == "blocked" and world["published"] == []
    assert runner.last_result is None or runner.last_result.steps_replayed == 0


async def test_another_output_type_or_tool_choice_is_another_task() -> None:
    """The schema the model must answer in, and whether it may call tools, are part of what it reads."""

    class Verdict(BaseModel):
        bought: bool

    log: list[str] = []

    def buy(sku: str) -> str:
        log.append(sku)
        return "bought"

    def policy(instructions: str, tools: dict[str, str], done: Done) -> Any:
        return '{"bought": true}' if done else ("buy", {"sku": "sku-1"})

    engine = Engine()

    async def run(**options: Any) -> CachedRunner:
        agent = Agent(name="shop", model=model(policy), tools=[function_tool(buy)], **options)
        runner = CachedRunner(engine, agent)
        await runner.run("buy sku-1")
        return runner

    await run()
    assert (await run()).last_result.hit  # type: ignore[union-attr]
    typed = await run(output_type=Verdict)
    assert typed.last_result is not None and typed.last_result.miss_reason is MissReason.NO_TRAJECTORY
    no_tools = await run(model_settings=ModelSettings(tool_choice="none"))
    assert no_tools.last_result is not None and no_tools.last_result.miss_reason is MissReason.NO_TRAJECTORY
