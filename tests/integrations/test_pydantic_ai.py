"""pydantic-ai: an agent with the MuscleMem capability records its runs and replays them without the model."""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel, TypeAdapter
from pydantic_ai import Agent, ModelRetry, RunContext, ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import DeferredToolRequests, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from muscle_mem import Check, Engine, MissReason, Secret
from muscle_mem.integrations._pydantic_ai_run import answer_parts
from muscle_mem.integrations.pydantic_ai import MuscleMem


@dataclass
class Desk:
    """A support desk: users to look up, tickets to open (fresh ids), resets and notices done."""

    users: dict[str, str] = field(
        default_factory=lambda: {"ada@x.io": "usr_41", "bob@x.io": "usr_42", "eve@x.io": "usr_43"}
    )
    tickets: itertools.count[int] = field(default_factory=lambda: itertools.count(1001))
    resets: list[tuple[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    mailer: str = "smtp"
    busy: int = 0
    """How many next lookups fail with ModelRetry."""


def prompt_of(messages: list[ModelMessage]) -> str:
    """The run's latest user prompt."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                text = part.content if isinstance(part, UserPromptPart) else None
                if isinstance(text, str) and "<pyai:" not in text:  # not the framework's retry feedback
                    return text
    raise AssertionError("no prompt")


def returns_of(messages: list[ModelMessage]) -> dict[str, Any]:
    """The latest output of each tool in the run so far (since the latest prompt)."""
    returns: dict[str, Any] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and "<pyai:" not in str(part.content):
                returns = {}
            elif isinstance(part, ToolReturnPart) and part.outcome == "success":
                returns[part.tool_name] = part.content
    return returns


class Support:
    """A scripted model for the support desk (counts its calls): look up, ticket + notice, reset, say so."""

    def __init__(self, answer: str = "text") -> None:
        self.calls = 0
        self.seen: list[list[ModelMessage]] = []
        self.answer = answer
        self.model = FunctionModel(self.respond, stream_function=self.stream)

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls += 1
        self.seen.append(list(messages))
        email = prompt_of(messages).rsplit(" ", 1)[-1]
        done = returns_of(messages)
        if "find_user" not in done:
            return ModelResponse(parts=[ToolCallPart("find_user", {"email": email})])
        user = done["find_user"]["id"]
        if "open_ticket" not in done:  # two calls in one turn: run in parallel
            return ModelResponse(
                parts=[
                    ToolCallPart("open_ticket", {"user_id": user}),
                    ToolCallPart("notify", {"email": email}),
                ]
            )
        ticket = done["open_ticket"]["ticket"]
        if "reset_password" not in done:
            return ModelResponse(parts=[ToolCallPart("reset_password", {"user_id": user, "ticket": ticket})])
        parts: list[ModelResponsePart]
        if self.answer == "receipt" and info.output_tools:
            parts = [ToolCallPart(info.output_tools[0].name, {"user_id": user, "ticket": ticket})]
        else:
            parts = [TextPart(f"Reset {user} under {ticket}.")]
        return ModelResponse(parts=parts)

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        for index, part in enumerate(self.respond(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                yield {
                    index: DeltaToolCall(
                        part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id
                    )
                }


def support_agent(
    desk: Desk,
    model: Support,
    capability: MuscleMem | None = None,
    *,
    closes_sessions: bool = False,
    **agent_kwargs: Any,
) -> Agent[None, Any]:
    """The support agent, built with pydantic-ai's own API: sync and async tools."""
    agent: Agent[None, Any] = Agent(
        model.model, capabilities=[capability] if capability else [], **agent_kwargs
    )

    @agent.tool_plain
    def find_user(email: str) -> dict[str, str]:
        """Look a user up by email."""
        if desk.busy:
            desk.busy -= 1
            raise ModelRetry("the directory is busy, try again")
        return {"id": desk.users[email], "email": email}

    @agent.tool_plain
    async def open_ticket(user_id: str) -> dict[str, str]:
        """Open a ticket for a user."""
        await asyncio.sleep(0)
        return {"ticket": f"T-{next(desk.tickets)}", "user": user_id}

    @agent.tool_plain
    def notify(email: str) -> str:
        """Tell the user a reset is under way."""
        desk.notices.append(email)
        return "notified"

    def reset_password(user_id: str, ticket: str) -> str:
        """Reset a user's password under a ticket."""
        desk.resets.append((user_id, ticket))
        return f"password of {user_id} reset"

    def reset_and_close(user_id: str, ticket: str) -> str:
        """Reset a user's password under a ticket."""  # the model reads the same tool: only the code changed
        desk.resets.append((user_id, ticket))
        return f"password of {user_id} reset, sessions closed"

    agent.tool_plain(name="reset_password")(reset_and_close if closes_sessions else reset_password)
    return agent


def task(email: str) -> str:
    return f"reset the password of {email}"


def meta(email: str) -> dict[str, str]:
    return {"email": email}


@pytest.fixture
def setup() -> tuple[Engine, Desk, Support, MuscleMem, Agent[None, Any]]:
    engine = Engine()
    desk, model = Desk(), Support()
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    return engine, desk, model, capability, support_agent(desk, model, capability)


Setup = tuple[Engine, Desk, Support, MuscleMem, Agent[None, Any]]


def call_ids(result: AgentRunResult[Any]) -> list[str]:
    return [
        part.tool_call_id
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, ToolCallPart | ToolReturnPart)
    ]


# 1. The agent runs unchanged; a first task misses and records sync, async and parallel calls.


async def test_a_first_run_misses_and_records_sync_async_and_parallel_tool_calls(setup: Setup) -> None:
    """A first task misses: the agent runs unchanged and its sync, async and parallel tool calls are recorded."""
    _engine, desk, model, capability, agent = setup
    result = await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    assert result.output == "Reset usr_41 under T-1001."
    assert model.calls == 4 and desk.resets == [("usr_41", "T-1001")]
    recorded = capability.last_result
    assert recorded is not None and not recorded.hit and recorded.stored, recorded
    assert recorded.calls[0].tool == "find_user"
    assert sorted(c.tool for c in recorded.calls[1:3]) == ["notify", "open_ticket"]  # one turn, in parallel
    assert recorded.calls[3].tool == "reset_password" and not any(c.replayed for c in recorded.calls)


# 2. A second task with other params is a full hit: no model call, fresh outputs flow.


async def test_a_second_run_with_other_params_replays_without_the_model_and_fresh_ids_flow(
    setup: Setup,
) -> None:
    """Another email is a full hit: the model is not asked, and ids looked up or created in this run flow on."""
    _engine, desk, model, capability, agent = setup
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    calls = model.calls
    result = await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"))
    assert model.calls == calls  # the model was not asked
    hit = capability.last_result
    assert hit is not None and hit.hit and hit.steps_replayed == 4
    assert desk.resets[-1] == ("usr_42", "T-1002")  # bob's id looked up, the ticket opened in this run
    assert desk.notices == ["ada@x.io", "bob@x.io"]
    assert result.output == "Reset usr_42 under T-1002."


# 3. A hit returns the framework's own result type, with fresh unique tool-call ids.


def test_a_hit_returns_an_agent_run_result_whose_history_has_fresh_unique_call_ids(setup: Setup) -> None:
    """A hit returns an AgentRunResult whose history holds the replayed calls under fresh, unique ids."""
    _engine, _desk, model, capability, agent = setup
    first = agent.run_sync(task("ada@x.io"), metadata=meta("ada@x.io"))
    again = agent.run_sync(task("bob@x.io"), metadata=meta("bob@x.io"))
    third = agent.run_sync(task("eve@x.io"), metadata=meta("eve@x.io"))
    assert capability.last_result is not None and capability.last_result.hit
    assert isinstance(again, AgentRunResult) and again.output == "Reset usr_42 under T-1002."
    messages = again.all_messages()
    assert again.new_messages() == messages and isinstance(messages[0], ModelRequest)
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    assert [type(m) for m in messages[1::2]] == [ModelResponse] * 4  # the model's own turns, the answer
    assert [len(r.parts) for r in responses] == [1, 2, 1, 1]  # two calls in one turn, as recorded
    assert again.response.model_name == "muscle-mem" and again.usage.input_tokens == 0
    returned = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert {"id": "usr_42", "email": "bob@x.io"} in returned and "password of usr_42 reset" in returned
    ids = call_ids(again)
    calls = {i for m in messages for p in m.parts if isinstance(p, ToolCallPart) for i in [p.tool_call_id]}
    assert all(i.startswith("mm_") for i in ids) and len(calls) == 4
    assert not calls & set(call_ids(third)) and not calls & set(call_ids(first))
    assert model.calls == 4 and third.output == "Reset usr_43 under T-1003."


# 4. A failed check hands over to the same agent, which sees the replayed steps as history.


async def test_a_failed_check_hands_over_with_the_replayed_steps_as_history_and_records_the_rest() -> None:
    """A failed check hands the run to the model with the replayed steps as history; the resumed run replays later."""
    engine, desk, model = Engine(), Desk(), Support()
    mailer = Check.equal(lambda **_: desk.mailer)  # resetting depends on how mail goes out
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata, checks={"reset_password": mailer})
    agent = support_agent(desk, model, capability)
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))

    desk.mailer = "api"
    before = model.calls
    result = await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"))
    resumed = capability.last_result
    assert resumed is not None and not resumed.hit and resumed.miss_reason is MissReason.PRE_CHECK_FAILED
    assert resumed.steps_replayed == 3 and resumed.stored
    assert model.calls == before + 2  # the reset, then the answer: not the replayed steps
    history = model.seen[before]
    replayed = [p for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    assert replayed[0].tool_name == "find_user" and len(replayed) == 3
    assert all(p.tool_call_id.startswith("mm_") for p in replayed)
    assert {"id": "usr_42", "email": "bob@x.io"} in [
        p.content for m in history for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    assert result.output == "Reset usr_42 under T-1002." and desk.resets[-1] == ("usr_42", "T-1002")

    calls = model.calls
    later = await agent.run(task("eve@x.io"), metadata=meta("eve@x.io"))  # the resumed run replays
    assert model.calls == calls and capability.last_result is not None and capability.last_result.hit
    assert later.output == "Reset usr_43 under T-1003."


# 5. Prior history is a different task: solved uncached unless cache_followups=True.


async def test_a_run_with_message_history_is_solved_uncached_unless_cache_followups(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    """A run with a message history is a follow-up: solved uncached (logged) unless cache_followups=True."""
    engine, desk, model, capability, agent = setup
    first = await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    calls = model.calls
    with caplog.at_level(logging.INFO, logger="muscle_mem"):
        followup = await agent.run(
            task("bob@x.io"), metadata=meta("bob@x.io"), message_history=first.all_messages()
        )
    assert model.calls == calls + 4 and capability.last_result is None
    assert "carries earlier conversation" in caplog.text
    assert followup.output == "Reset usr_42 under T-1002."

    opted = MuscleMem(engine, params=lambda ctx: ctx.metadata, cache_followups=True)
    calls = model.calls
    cached = await support_agent(desk, model, opted).run(
        task("eve@x.io"), metadata=meta("eve@x.io"), message_history=first.all_messages()
    )
    assert model.calls == calls and opted.last_result is not None and opted.last_result.hit
    assert cached.output == "Reset usr_43 under T-1003."
    assert cached.all_messages()[: len(first.all_messages())] == first.all_messages()
    assert isinstance(cached.new_messages()[0], ModelRequest) and len(cached.new_messages()) == 8


# 6. Tool errors stay errors.


async def test_a_tool_call_that_raises_model_retry_is_not_recorded_as_a_step(setup: Setup) -> None:
    """A tool call that raises ModelRetry is not a step: the trajectory holds the call that succeeded.

    The model saw the retry, so a replay whose call succeeds at once stops right after it; the run the
    model finishes then covers the next one.
    """
    _engine, desk, model, capability, agent = setup
    desk.busy = 1
    result = await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    parts = [p for m in result.all_messages() for p in m.parts]
    retried = [p for p in parts if isinstance(p, ToolReturnPart) and p.outcome == "retried"]
    assert len(retried) == 1 and model.calls == 5
    recorded = capability.last_result
    assert recorded is not None and recorded.stored
    assert [c.tool for c in recorded.calls].count("find_user") == 1
    await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"))
    stopped = capability.last_result
    assert stopped is not None and stopped.steps_replayed == 1 and not stopped.hit
    assert stopped.reason is not None and "raise first" in stopped.reason
    calls = model.calls
    await agent.run(task("eve@x.io"), metadata=meta("eve@x.io"))
    assert model.calls == calls and capability.last_result is not None
    assert capability.last_result.steps_replayed == 4  # one lookup: the failed one is not replayed


async def test_a_tool_that_fails_for_the_model_is_not_recorded_and_a_crash_stores_nothing() -> None:
    """A ToolFailed the model reads is not a step, and a tool that crashes the run leaves nothing stored."""
    engine, desk = Engine(), Desk()
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    failed = iter([True])

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if not done:
            return ModelResponse(parts=[ToolCallPart("lookup", {"email": prompt_of(messages).split()[-1]})])
        return ModelResponse(parts=[TextPart(f"found {done[-1]}")])

    agent: Agent[None, str] = Agent(FunctionModel(respond), capabilities=[capability])

    @agent.tool_plain
    def lookup(email: str) -> str:
        if next(failed, False):
            raise ToolFailed("no such directory")  # the model sees a failed tool return
        if email == "crash@x.io":
            raise RuntimeError("the directory is down")
        return desk.users[email]

    first = await agent.run("look up ada@x.io", metadata=meta("ada@x.io"))
    assert first.output == "found no such directory"  # the model read the failure and answered
    assert capability.last_result is not None and not capability.last_result.stored
    assert capability.last_result.calls == ()  # the failed call is not a step

    with pytest.raises(RuntimeError, match="directory is down"):
        await agent.run("look up crash@x.io", metadata=meta("crash@x.io"))
    assert capability.last_result is None
    assert engine.metrics.not_stored_by_reason


# 7. Tool versions come from the user's function (or the tool's definition), not the shim.


async def test_tool_versions_come_from_each_tool_function_so_changed_code_misses() -> None:
    """A tool's version is its function's: the same code replays, changed code misses at that tool."""
    engine, desk, model = Engine(), Desk(), Support()
    agent = support_agent(desk, model, MuscleMem(engine, params=lambda ctx: ctx.metadata))
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))

    same = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    calls = model.calls
    await support_agent(desk, model, same).run(task("bob@x.io"), metadata=meta("bob@x.io"))
    assert (
        same.last_result is not None and same.last_result.hit and model.calls == calls
    )  # rebuilt, same code

    changed = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    result = await support_agent(desk, model, changed, closes_sessions=True).run(
        task("eve@x.io"), metadata=meta("eve@x.io")
    )
    assert changed.last_result is not None and changed.last_result.miss_reason is MissReason.VERSION_CHANGED
    assert changed.last_result.miss_tool == "reset_password" and changed.last_result.steps_replayed == 3
    assert result.output == "Reset usr_43 under T-1003."


class Directory(AbstractToolset[Any]):
    """A toolset whose tool has no Python function: a definition and a call."""

    def __init__(self, desk: Desk, description: str) -> None:
        self.desk = desk
        self.description = description

    @property
    def id(self) -> str:
        return "directory"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        schema = {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}
        tool_def = ToolDefinition(name="lookup", description=self.description, parameters_json_schema=schema)
        validator = TypeAdapter(dict[str, str]).validator
        return {
            "lookup": ToolsetTool(toolset=self, tool_def=tool_def, max_retries=1, args_validator=validator)
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return self.desk.users[tool_args["email"]]


async def test_a_tool_without_a_python_function_is_versioned_by_its_definition() -> None:
    """A tool with no Python function is versioned by its name, description and JSON schema."""
    engine, desk = Engine(), Desk()
    calls = itertools.count()

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        next(calls)
        done = returns_of(messages)
        if "lookup" not in done:
            return ModelResponse(parts=[ToolCallPart("lookup", {"email": prompt_of(messages).split()[-1]})])
        return ModelResponse(parts=[TextPart(f"found {done['lookup']}")])

    def agent(description: str) -> tuple[Agent[None, str], MuscleMem]:
        capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
        toolset = Directory(desk, description)
        return Agent(FunctionModel(respond), toolsets=[toolset], capabilities=[capability]), capability

    first, _ = agent("Find a user.")
    await first.run("look up ada@x.io", metadata=meta("ada@x.io"))
    same, same_cap = agent("Find a user.")
    hit = await same.run("look up bob@x.io", metadata=meta("bob@x.io"))
    assert same_cap.last_result is not None and same_cap.last_result.hit and hit.output == "found usr_42"
    changed, changed_cap = agent("Find a user by email; returns their id.")
    await changed.run("look up eve@x.io", metadata=meta("eve@x.io"))
    assert changed_cap.last_result is not None  # the model reads the description: another task
    assert changed_cap.last_result.miss_reason is MissReason.NO_TRAJECTORY


# 8. Injected arguments (RunContext) are not recorded; a replay passes this run's context.


async def test_an_injected_run_context_is_not_recorded_and_a_replay_gets_this_runs_deps() -> None:
    """An injected RunContext is not a recorded argument; a replayed call gets this run's context and deps."""
    engine = Engine()
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = returns_of(messages)
        if "lookup" not in done:
            return ModelResponse(parts=[ToolCallPart("lookup", {"email": prompt_of(messages).split()[-1]})])
        return ModelResponse(parts=[TextPart(f"found {done['lookup']}")])

    agent: Agent[Desk, str] = Agent(FunctionModel(respond), deps_type=Desk, capabilities=[capability])
    seen: list[str | None] = []

    @agent.tool
    def lookup(ctx: RunContext[Desk], email: str) -> str:
        seen.append(ctx.tool_call_id)
        return ctx.deps.users[email]

    await agent.run("look up ada@x.io", deps=Desk(), metadata=meta("ada@x.io"))
    recorded = capability.last_result
    assert (
        recorded is not None and recorded.stored and dict(recorded.calls[0].kwargs) == {"email": "ada@x.io"}
    )
    other = Desk(users={"bob@x.io": "usr_900"})
    result = await agent.run("look up bob@x.io", deps=other, metadata=meta("bob@x.io"))
    assert capability.last_result is not None and capability.last_result.hit
    assert result.output == "found usr_900"  # the replay ran with this run's deps
    assert seen[-1] is not None and seen[-1].startswith("mm_")


# 9. What the agent reads besides the prompt (instructions, system prompts) is part of the task.


def dated(engine: Engine, model: Support, day: str) -> tuple[MuscleMem, Agent[None, Any]]:
    """The support agent with today's date in its static instructions."""
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    return capability, support_agent(Desk(), model, capability, instructions=f"Today is {day}.")


async def test_changed_static_instructions_are_another_task_and_the_same_ones_hit() -> None:
    """An agent whose instructions hold yesterday's date never serves today's; today's serves today's."""
    engine, model = Engine(), Support()
    for day, email in (("2026-12-04", "ada@x.io"), ("2026-12-11", "bob@x.io"), ("2026-12-11", "eve@x.io")):
        capability, agent = dated(engine, model, day)
        await agent.run(task(email), metadata=meta(email))
    assert capability.last_result is not None and capability.last_result.hit
    assert model.calls == 8  # two runs by the model: one per date


async def test_a_toolsets_changed_instructions_are_another_task() -> None:
    """A toolset's instructions reach the model too: changed ones make another task."""
    from pydantic_ai.toolsets import FunctionToolset

    engine, model = Engine(), Support()
    hits = []
    for day, email in (("2026-12-04", "ada@x.io"), ("2026-12-11", "bob@x.io"), ("2026-12-11", "eve@x.io")):
        capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
        calendar = FunctionToolset[None]([], instructions=f"Today is {day}.")
        agent = support_agent(Desk(), model, capability, toolsets=[calendar])
        await agent.run(task(email), metadata=meta(email))
        assert capability.last_result is not None
        hits.append(capability.last_result.hit)
    assert hits == [False, False, True] and model.calls == 8


async def test_an_instruction_function_and_a_system_prompt_function_are_resolved_for_each_run(
    setup: Setup,
) -> None:
    """Dynamic instructions and system prompts count as the run's model would read them."""
    _, desk, model, capability, _ = setup
    today, tier = ["2026-12-04"], ["gold"]
    agent = support_agent(desk, model, capability, instructions=lambda: f"Today is {today[0]}.")

    @agent.system_prompt
    def customer_tier() -> str:
        return f"Customers here are {tier[0]}."

    async def hit(email: str) -> bool:
        await agent.run(task(email), metadata=meta(email))
        return capability.last_result is not None and capability.last_result.hit

    assert [await hit("ada@x.io"), await hit("bob@x.io")] == [False, True]
    today[0] = "2026-12-11"
    assert [await hit("eve@x.io"), await hit("ada@x.io")] == [False, True]
    tier[0] = "silver"
    assert [await hit("bob@x.io"), await hit("eve@x.io")] == [False, True]
    assert model.calls == 12


async def test_instructions_given_to_one_run_are_part_of_its_task(setup: Setup) -> None:
    """``run(instructions=...)`` is keyed before the replay: the same replays, another value is another task."""
    _, _, model, capability, agent = setup
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"), instructions="Today is 2026-12-04.")
    assert capability.last_result is not None and capability.last_result.stored
    await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"), instructions="Today is 2026-12-04.")
    assert capability.last_result is not None and capability.last_result.hit and model.calls == 4
    for instructions in ("Today is 2026-12-11.", None):
        await agent.run(task("eve@x.io"), metadata=meta("eve@x.io"), instructions=instructions)
        result = capability.last_result
        assert result is not None and result.miss_reason is MissReason.NO_TRAJECTORY and result.stored


async def test_instructions_never_reach_the_store_in_clear(tmp_path: Path) -> None:
    """The instructions are keyed by their fingerprint: a secret in them is not stored, and the run is."""
    engine = Engine(f"sqlite:///{tmp_path / 'store.db'}")
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    secret = "Bill with the key sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0, desk bot."
    agent = support_agent(Desk(), Support(), capability, instructions=secret)
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    assert capability.last_result is not None and capability.last_result.stored
    engine.close()
    stored = (tmp_path / "store.db").read_bytes()
    assert b"sk-live-9f8e7d6c5b4a" not in stored and b"desk bot" not in stored


# Beyond the list: streaming, structured output, concurrency, persistence, bad input.


async def test_streamed_and_iterated_runs_record_and_replay(setup: Setup) -> None:
    """run_stream records; run_stream and iter replay without the model."""
    _engine, _desk, model, capability, agent = setup
    async with agent.run_stream(task("ada@x.io"), metadata=meta("ada@x.io")) as stream:
        assert await stream.get_output() == "Reset usr_41 under T-1001."
    assert capability.last_result is not None and capability.last_result.stored
    calls = model.calls
    async with agent.run_stream(task("bob@x.io"), metadata=meta("bob@x.io")) as stream:
        assert await stream.get_output() == "Reset usr_42 under T-1002."
    assert capability.last_result is not None and capability.last_result.hit
    async with agent.iter(task("eve@x.io"), metadata=meta("eve@x.io")) as run:
        nodes = [node async for node in run]
    assert run.result is not None and run.result.output == "Reset usr_43 under T-1003." and nodes
    assert model.calls == calls and capability.last_result is not None and capability.last_result.hit


class Receipt(BaseModel):
    user_id: str
    ticket: str


async def test_a_structured_output_is_rebuilt_by_the_runs_own_output_type() -> None:
    """A recorded output tool call is validated by the run's output type on a hit."""
    engine, desk, model = Engine(), Desk(), Support(answer="receipt")
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    agent = support_agent(desk, model, capability, output_type=Receipt)
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    calls = model.calls
    result = await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"))
    assert model.calls == calls and capability.last_result is not None and capability.last_result.hit
    assert result.output == Receipt(user_id="usr_42", ticket="T-1002")


async def test_a_run_with_another_output_type_is_another_task(setup: Setup) -> None:
    """The output schema is what the model is asked to answer in, so it may decide otherwise: no step replays."""
    _engine, _desk, model, capability, agent = setup
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))  # recorded with a text answer
    model.answer = "receipt"
    result = await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"), output_type=Receipt)
    assert result.output == Receipt(user_id="usr_42", ticket="T-1002")  # never the recorded text
    assert capability.last_result is not None and capability.last_result.steps_replayed == 0


async def test_two_runs_at_once_keep_their_own_state(setup: Setup) -> None:
    """Two runs at once, a hit and a miss, keep their own replay, script and history."""
    _engine, desk, model, _capability, agent = setup
    await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    calls = model.calls
    bob, eve = await asyncio.gather(
        agent.run(task("bob@x.io"), metadata=meta("bob@x.io")),  # a hit
        agent.run(f"please {task('eve@x.io')}", metadata=meta("eve@x.io")),  # another task: a miss
    )
    assert bob.output.startswith("Reset usr_42 under T-") and eve.output.startswith("Reset usr_43 under T-")
    assert model.calls == calls + 4  # eve's run only
    assert {part.model_name for part in bob.all_messages() if isinstance(part, ModelResponse)} == {
        "muscle-mem"
    }
    assert "muscle-mem" not in {m.model_name for m in eve.all_messages() if isinstance(m, ModelResponse)}
    assert sorted(desk.resets[1:]) == [
        ("usr_42", bob.output.split()[-1][:-1]),
        ("usr_43", eve.output.split()[-1][:-1]),
    ]


async def test_an_agent_on_pydantic_ais_test_model_replays_its_run() -> None:
    """An agent on pydantic-ai's TestModel records, then replays with the fresh tool output."""
    engine = Engine()
    capability = MuscleMem(engine)
    model = TestModel()  # pydantic-ai's own fake: it calls every tool, then answers with what they said
    agent: Agent[None, str] = Agent(model, capabilities=[capability])
    tickets = itertools.count(1001)

    @agent.tool_plain
    def open_ticket(subject: str) -> str:
        return f"T-{next(tickets)}"

    first = await agent.run("open a ticket")
    assert capability.last_result is not None and capability.last_result.stored
    asked = model.last_model_request_parameters
    again = await agent.run("open a ticket")
    assert capability.last_result is not None and capability.last_result.hit
    assert model.last_model_request_parameters is asked  # no request since
    assert "T-1001" in first.output and again.output == first.output.replace("T-1001", "T-1002")


async def test_a_new_process_replays_from_a_sqlite_file_and_tags_tell_tasks_apart(tmp_path: Path) -> None:
    """Another engine on the same SQLite file replays at its first run; tags tell tasks apart."""
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    desk, model = Desk(), Support()
    with Engine(url) as engine:
        capability = MuscleMem(engine, params=lambda ctx: ctx.metadata, tags=["eu"])
        await support_agent(desk, model, capability).run(task("ada@x.io"), metadata=meta("ada@x.io"))
        assert capability.last_result is not None and capability.last_result.stored
    with Engine(url) as engine:  # tools registered before the lookup: a first run can replay
        calls = model.calls
        agent = support_agent(desk, model)
        eu = MuscleMem(engine, params={"email": "bob@x.io"}, tags=["eu"])  # a per-run capability
        result = await agent.run(task("bob@x.io"), capabilities=[eu])
        assert eu.last_result is not None and eu.last_result.hit and model.calls == calls
        assert result.output == "Reset usr_42 under T-1002."
        us = MuscleMem(engine, params={"email": "bob@x.io"}, tags=["us"])
        await agent.run(task("bob@x.io"), capabilities=[us])
        assert us.last_result is not None and us.last_result.miss_reason is MissReason.NO_TRAJECTORY


async def test_a_run_that_ends_on_deferred_tool_calls_is_not_stored() -> None:
    """A run that ends waiting on deferred (approval) tool calls is not a solved task: nothing is stored."""
    engine, desk = Engine(), Desk()
    capability = MuscleMem(engine, params=lambda ctx: ctx.metadata)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = returns_of(messages)
        if "lookup" not in done:
            return ModelResponse(parts=[ToolCallPart("lookup", {"email": prompt_of(messages).split()[-1]})])
        return ModelResponse(parts=[ToolCallPart("delete_user", {"user_id": done["lookup"]})])

    agent: Agent[None, Any] = Agent(
        FunctionModel(respond), output_type=[str, DeferredToolRequests], capabilities=[capability]
    )
    agent.tool_plain(lambda email: desk.users[email], name="lookup")
    agent.tool_plain(lambda user_id: f"deleted {user_id}", name="delete_user", requires_approval=True)
    result = await agent.run("delete ada@x.io", metadata=meta("ada@x.io"))
    assert isinstance(result.output, DeferredToolRequests) and capability.last_result is None
    again = await agent.run("delete bob@x.io", metadata=meta("bob@x.io"))
    assert isinstance(again.output, DeferredToolRequests) and capability.last_result is None


async def test_checks_naming_a_tool_the_agent_lacks_are_refused(setup: Setup) -> None:
    """A checks map naming a tool the agent lacks is refused, and so is an engine that is not one."""
    engine, desk, model, _capability, _agent = setup
    typo = MuscleMem(engine, checks={"reset_pasword": Check.equal(lambda **_: 1)})
    with pytest.raises(ValueError, match="reset_pasword"):
        await support_agent(desk, model, typo).run(task("ada@x.io"))
    with pytest.raises(TypeError, match=r"muscle_mem\.Engine"):
        MuscleMem("sqlite:///x.db")  # type: ignore[arg-type]


async def test_the_engine_is_the_agents_and_a_missing_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine's agent is the pydantic-ai run (called alone, it says so); without pydantic-ai, the import says what to install."""
    engine = Engine()
    MuscleMem(engine)
    with pytest.raises(RuntimeError, match=r"call agent\.run"):
        await engine.arun("reset the password of ada@x.io")

    monkeypatch.setitem(sys.modules, "pydantic_ai", None)  # as if not installed
    for name in ("muscle_mem.integrations.pydantic_ai", "muscle_mem.integrations._pydantic_ai_run"):
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"pip install 'muscle-mem\[pydantic-ai\]'"):
        importlib.import_module("muscle_mem.integrations.pydantic_ai")


async def test_a_secret_param_replays_and_stays_out_of_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """A Secret param replays like any param, and a bypassed follow-up logs its prompt with the secret redacted."""
    engine, desk, model = Engine(), Desk(), Support()
    capability = MuscleMem(engine, params=lambda ctx: {"email": Secret(ctx.metadata["email"])})
    agent = support_agent(desk, model, capability)
    first = await agent.run(task("ada@x.io"), metadata=meta("ada@x.io"))
    assert capability.last_result is not None and capability.last_result.stored
    with caplog.at_level(logging.DEBUG, logger="muscle_mem"):
        hit = await agent.run(task("bob@x.io"), metadata=meta("bob@x.io"))
        assert capability.last_result is not None and capability.last_result.hit
        await agent.run(task("eve@x.io"), metadata=meta("eve@x.io"), message_history=first.all_messages())
    assert hit.output == "Reset usr_42 under T-1002."
    assert "reset the password of {email}" in caplog.text
    assert "bob@x.io" not in caplog.text and "eve@x.io" not in caplog.text


def test_a_stored_answer_that_calls_a_function_tool_is_not_scripted() -> None:
    """A stored answer naming a function tool is not a model turn: only the checked replay runs tools."""
    tools = {"reset_password"}
    assert answer_parts([{"tool": "final_result", "args": {"ticket": "T-1"}}], tools) is not None
    assert answer_parts([{"tool": "reset_password", "args": {"user_id": "usr_41"}}], tools) is None
    assert answer_parts([{"text": "done", "extra": 1}], tools) is None and answer_parts("done", tools) is None


def run_shape(result: AgentRunResult[Any]) -> list[Any]:
    """A run's messages part by part, field by field; ids, times and the model's name left out."""
    rows: list[Any] = []
    for message in result.all_messages():
        parts = []
        for part in message.parts:
            fields = {k: v for k, v in vars(part).items() if k not in ("tool_call_id", "timestamp", "id")}
            if isinstance(part, ToolReturnPart):
                fields["content"] = type(part.content).__name__
            elif isinstance(part, ToolCallPart):
                fields["args"] = sorted(part.args_as_dict())
            elif isinstance(part, TextPart | UserPromptPart):
                fields["content"] = type(part.content).__name__
            parts.append((type(part).__name__, fields))
        rows.append((type(message).__name__, message.kind, parts))
    return rows


def test_a_plain_run_a_miss_and_a_hit_have_the_same_messages_and_parts() -> None:
    """Parallel calls of one turn come back one turn each on a hit (the page says so): the same parts."""
    plain = support_agent(Desk(), Support()).run_sync(task("ada@x.io"))
    engine = Engine()
    agent = support_agent(Desk(), Support(), MuscleMem(engine, params=lambda ctx: ctx.metadata))
    miss = agent.run_sync(task("ada@x.io"), metadata=meta("ada@x.io"))
    hit = agent.run_sync(task("bob@x.io"), metadata=meta("bob@x.io"))
    assert run_shape(plain) == run_shape(miss)

    def flat(shape: list[Any]) -> list[Any]:
        return [(kind, part) for _, kind, parts in shape for part in parts]

    assert sorted(map(repr, flat(run_shape(hit)))) == sorted(map(repr, flat(run_shape(plain))))
    assert hit.output == "Reset usr_42 under T-1002."
