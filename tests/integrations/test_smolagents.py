"""smolagents agents with muscle memory: a scripted smolagents ``Model``, the framework's own agents and tools."""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import CodeAgent, ToolCallingAgent, tool
from smolagents.agents import RunResult
from smolagents.memory import ActionStep
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

from muscle_mem import Check, Engine, MissReason, source_version
from muscle_mem.integrations.smolagents import CachedAgent, wrap_agent


class ScriptedModel(Model):
    """Answers with the next scripted message; raises once the script is exhausted."""

    def __init__(self, replies: list[ChatMessage]) -> None:
        super().__init__(model_id="scripted")
        self.replies = iter(replies)
        self.calls = 0
        self.seen: list[str] = []

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        self.calls += 1
        self.seen.append(str(messages))
        try:
            return next(self.replies)
        except StopIteration:
            raise AssertionError("the model was called after its script ended") from None


def calls(*pairs: tuple[str, dict[str, Any]]) -> ChatMessage:
    """One model turn calling the given tools (several: parallel calls)."""
    ids = (f"call_{n}" for n in itertools.count(1))
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        tool_calls=[
            ChatMessageToolCall(
                function=ChatMessageToolCallFunction(name=n, arguments=a), id=next(ids), type="function"
            )
            for n, a in pairs
        ],
    )


def code(source: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=f"Thought: go\n<code>\n{source}\n</code>")


class Desk:
    """A support desk: users are looked up, tickets created with fresh ids."""

    def __init__(self) -> None:
        self.ids: Iterator[int] = itertools.count(100)
        self.log: list[tuple[str, Any]] = []
        self.page = "Send"

    def tools(self) -> list[Any]:
        desk = self

        @tool
        def lookup_user(email: str) -> dict:  # type: ignore[type-arg]
            """Look up a user by e-mail.

            Args:
                email: the user's e-mail address
            """
            desk.log.append(("lookup_user", email))
            return {"id": "usr_" + email.split("@")[0], "email": email}

        @tool
        def open_ticket(user_id: str) -> str:
            """Open a ticket for a user and return its id.

            Args:
                user_id: the user's id
            """
            ticket = f"T-{next(desk.ids)}"
            desk.log.append(("open_ticket", user_id))
            return ticket

        @tool
        def send_reset(user_id: str, ticket: str) -> str:
            """Send a password reset.

            Args:
                user_id: the user's id
                ticket: the ticket to note it on
            """
            desk.log.append(("send_reset", (user_id, ticket)))
            return f"reset sent to {user_id} on {ticket} via {desk.page}"

        return [lookup_user, open_ticket, send_reset]


def tool_calling_script(email: str) -> list[ChatMessage]:
    user = "usr_" + email.split("@")[0]
    return [
        calls(("lookup_user", {"email": email})),
        calls(("open_ticket", {"user_id": user})),
        calls(("send_reset", {"user_id": user, "ticket": "T-100"})),
        calls(("final_answer", {"answer": f"done for {user}"})),
    ]


def test_a_tool_calling_agent_records_then_replays_without_the_model_with_fresh_ids_flowing() -> None:
    desk, engine = Desk(), Engine()
    model = ScriptedModel(tool_calling_script("ada@x.io"))
    agent = CachedAgent(engine, ToolCallingAgent(tools=desk.tools(), model=model))

    first = agent.run("reset the password of ada@x.io", params={"email": "ada@x.io"})
    assert first == "done for usr_ada" and agent.last_result is not None and agent.last_result.stored
    assert model.calls == 4

    desk.log.clear()
    second = agent.run("reset the password of bob@x.io", params={"email": "bob@x.io"})
    assert agent.last_result.hit and model.calls == 4  # the model was not called
    assert second == "done for usr_bob"
    assert desk.log == [
        ("lookup_user", "bob@x.io"),
        ("open_ticket", "usr_bob"),
        ("send_reset", ("usr_bob", "T-101")),  # the ticket opened in this run, not the recorded T-100
    ]


def test_a_hit_returns_a_run_result_and_leaves_the_replayed_steps_in_memory() -> None:
    desk, engine = Desk(), Engine()
    model = ScriptedModel(tool_calling_script("ada@x.io"))
    agent = CachedAgent(engine, ToolCallingAgent(tools=desk.tools(), model=model, return_full_result=True))
    agent.run("reset the password of ada@x.io", params={"email": "ada@x.io"})

    result = agent.run("reset the password of bob@x.io", params={"email": "bob@x.io"})
    assert isinstance(result, RunResult) and result.output == "done for usr_bob" and result.state == "success"
    assert result.token_usage is not None and result.token_usage.total_tokens == 0
    actions = [s for s in agent.agent.memory.steps if isinstance(s, ActionStep)]
    ids = [c.id for s in actions for c in s.tool_calls or []]
    assert [c.name for s in actions for c in s.tool_calls or []] == [
        "lookup_user",
        "open_ticket",
        "send_reset",
        "final_answer",
    ]
    assert len(set(ids)) == 4 and all(i.startswith("mm_") for i in ids)
    final = agent.agent.memory.steps[-1]
    assert (
        isinstance(final, ActionStep) and final.is_final_answer and final.observations == "done for usr_bob"
    )
    assert agent.run(
        "reset the password of cy@x.io", params={"email": "cy@x.io"}, return_full_result=False
    ) == ("done for usr_cy")


def test_parallel_tool_calls_of_one_model_turn_are_recorded_and_replayed() -> None:
    desk, engine = Desk(), Engine()
    script = [
        calls(("lookup_user", {"email": "ada@x.io"}), ("lookup_user", {"email": "ops@x.io"})),
        calls(("final_answer", {"answer": "both found"})),
    ]
    model = ScriptedModel(script)
    agent = CachedAgent(engine, ToolCallingAgent(tools=desk.tools(), model=model))
    agent.run("find ada@x.io and ops@x.io", params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.stored, agent.last_result
    assert sorted(c.kwargs["email"] for c in agent.last_result.calls) == ["ada@x.io", "ops@x.io"]

    desk.log.clear()
    agent.run("find bob@x.io and ops@x.io", params={"email": "bob@x.io"})
    assert agent.last_result.hit and sorted(desk.log) == [
        ("lookup_user", "bob@x.io"),
        ("lookup_user", "ops@x.io"),
    ]


def test_a_code_agent_with_its_default_timeout_records_through_its_worker_thread() -> None:
    desk, engine = Desk(), Engine()
    script = [
        code("user = lookup_user(email='ada@x.io')\nticket = open_ticket(user_id=user['id'])"),
        code("final_answer(send_reset(user_id=user['id'], ticket=ticket))"),
    ]
    model = ScriptedModel(script)
    code_agent = CodeAgent(tools=desk.tools(), model=model)
    assert code_agent.python_executor.timeout_seconds is not None  # smolagents' default: a worker thread
    agent = CachedAgent(engine, code_agent)

    first = agent.run("reset the password of ada@x.io", params={"email": "ada@x.io"})
    assert first == "reset sent to usr_ada on T-100 via Send"
    assert agent.last_result is not None and agent.last_result.stored, agent.last_result.not_stored

    second = agent.run("reset the password of bob@x.io", params={"email": "bob@x.io"})
    assert agent.last_result.hit and model.calls == 2
    assert second == "reset sent to usr_bob on T-101 via Send"
    assert code_agent.python_executor.timeout_seconds is not None  # the agent keeps its timeout


def test_a_failed_check_hands_over_to_the_same_agent_which_sees_the_replayed_steps() -> None:
    desk, engine = Desk(), Engine()
    script = tool_calling_script("ada@x.io")
    resume = [
        calls(("send_reset", {"user_id": "usr_bob", "ticket": "T-101"})),
        calls(("final_answer", {"answer": "done for usr_bob"})),
    ]
    model = ScriptedModel(script + resume)
    page = Check.equal(lambda user_id, ticket: desk.page)
    agent = CachedAgent(
        engine, ToolCallingAgent(tools=desk.tools(), model=model), checks={"send_reset": page}
    )
    agent.run("reset the password of ada@x.io", params={"email": "ada@x.io"})

    desk.page = "Delete account"
    answer = agent.run("reset the password of bob@x.io", params={"email": "bob@x.io"})
    result = agent.last_result
    assert result is not None and not result.hit and result.steps_replayed == 2
    assert result.miss_reason is MissReason.PRE_CHECK_FAILED and answer == "done for usr_bob"
    assert "open_ticket" in model.seen[-2] and "T-101" in model.seen[-2]  # replayed steps are history
    assert result.stored  # the resumed run is recorded

    desk.log.clear()
    agent.run("reset the password of cy@x.io", params={"email": "cy@x.io"})
    assert agent.last_result.hit and model.calls == 6
    assert desk.log[-1] == ("send_reset", ("usr_cy", "T-102"))


def test_a_follow_up_without_reset_runs_uncached_unless_opted_in(caplog: pytest.LogCaptureFixture) -> None:
    desk, engine = Desk(), Engine()
    script = [*tool_calling_script("ada@x.io"), calls(("final_answer", {"answer": "again"}))]
    model = ScriptedModel(script)
    agent = CachedAgent(engine, ToolCallingAgent(tools=desk.tools(), model=model))
    agent.run("reset the password of ada@x.io", params={"email": "ada@x.io"})
    caplog.set_level(logging.INFO, logger="muscle_mem")
    assert agent.run("reset the password of ada@x.io", reset=False) == "again"
    assert agent.last_result is None and "carries earlier conversation" in caplog.text

    opted_in = CachedAgent(engine, agent.agent, cache_followups=True)
    assert opted_in.run("reset the password of bob@x.io", params={"email": "bob@x.io"}, reset=False) == (
        "done for usr_bob"
    )
    assert opted_in.last_result is not None and opted_in.last_result.hit


def test_a_tool_that_raises_is_not_recorded_as_a_step() -> None:
    desk, engine = Desk(), Engine()
    failures = iter([True])

    @tool
    def flaky_lookup(email: str) -> dict:  # type: ignore[type-arg]
        """Look up a user, failing the first time.

        Args:
            email: the user's e-mail address
        """
        if next(failures, False):
            raise ConnectionError("directory down")
        return {"id": "usr_" + email.split("@")[0]}

    script = [
        calls(("flaky_lookup", {"email": "ada@x.io"})),
        calls(("flaky_lookup", {"email": "ada@x.io"})),
        calls(("final_answer", {"answer": "found usr_ada"})),
    ]
    model = ScriptedModel(script)
    agent = CachedAgent(engine, ToolCallingAgent(tools=[flaky_lookup, *desk.tools()], model=model))
    agent.run("find ada@x.io", params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.stored
    assert [c.tool for c in agent.last_result.calls] == ["flaky_lookup"]  # the failed call is not a step
    assert "directory down" in model.seen[1]  # the model saw the framework's error text


def test_tool_versions_come_from_each_tools_own_forward_and_checks_must_name_real_tools() -> None:
    desk, engine = Desk(), Engine()
    agent = ToolCallingAgent(tools=desk.tools(), model=ScriptedModel([]))
    forwards = {name: t.forward for name, t in agent.tools.items()}
    wrap_agent(engine, agent)
    versions = {name: engine._registry.get(name).version for name in forwards if name != "final_answer"}  # type: ignore[union-attr]
    assert versions == {name: source_version(forwards[name]) for name in versions}
    assert len(set(versions.values())) == 3
    with pytest.raises(ValueError, match="'lookup_usr'"):
        wrap_agent(
            Engine(),
            ToolCallingAgent(tools=desk.tools(), model=ScriptedModel([])),
            checks={"lookup_usr": Check.equal(lambda email: 1)},
        )


def memory_shape(agent: Any) -> list[tuple[Any, ...]]:
    """The agent's memory step by step: kinds, tool calls, observations (ids, times, tickets left out)."""
    return [
        (
            type(step).__name__,
            [(c.name, c.arguments) for c in getattr(step, "tool_calls", None) or []],
            re.sub(r"T-1\d\d", "T-?", str(getattr(step, "observations", None))),
            getattr(step, "is_final_answer", None),
            getattr(step, "action_output", None),
        )
        for step in agent.memory.steps
    ]


def test_a_plain_run_a_miss_and_a_hit_leave_memories_of_the_same_shape() -> None:
    """The steps, their calls and observations; the answer is a final_answer step, as in a run."""
    plain = ToolCallingAgent(tools=Desk().tools(), model=ScriptedModel(tool_calling_script("bob@x.io")))
    plain.run("reset the password of bob@x.io")
    cached = CachedAgent(
        Engine(), ToolCallingAgent(tools=Desk().tools(), model=ScriptedModel(tool_calling_script("ada@x.io")))
    )
    cached.run("reset the password of ada@x.io", params={"email": "ada@x.io"})
    miss = memory_shape(cached.agent)
    cached.run("reset the password of bob@x.io", params={"email": "bob@x.io"})
    assert cached.last_result is not None and cached.last_result.hit
    hit = memory_shape(cached.agent)
    assert [row[0] for row in miss] == [row[0] for row in hit]
    assert [row[2:] for row in hit] == [row[2:] for row in memory_shape(plain)]
    assert [[name for name, _ in row[1]] for row in hit] == [[name for name, _ in row[1]] for row in miss]


# what the agent reads besides the task is part of the task


def test_changed_instructions_are_another_task_and_the_same_ones_hit() -> None:
    """The run's system prompt holds the agent's instructions: yesterday's date never serves today."""
    desk = Desk()
    model = ScriptedModel([*tool_calling_script("ada@x.io"), *tool_calling_script("cy@x.io")])
    agent = CachedAgent(Engine(), ToolCallingAgent(tools=desk.tools(), model=model))
    hits = []
    for day, email in (("04", "ada"), ("04", "bob"), ("11", "cy"), ("11", "ada")):
        agent.agent.instructions = f"Today is 2026-12-{day}."
        desk.ids = itertools.count(100)  # each run's ticket is the one its script sends the reset on
        agent.run(f"reset the password of {email}@x.io", params={"email": f"{email}@x.io"})
        assert agent.last_result is not None
        hits.append(agent.last_result.hit)
    assert hits == [False, True, False, True] and model.calls == 8


def test_changed_additional_args_are_another_task() -> None:
    """``additional_args`` are read by the agent (in its task text, as variables): other ones, another task."""
    desk = Desk()
    model = ScriptedModel([*tool_calling_script("ada@x.io"), *tool_calling_script("bob@x.io")])
    agent = CachedAgent(Engine(), ToolCallingAgent(tools=desk.tools(), model=model))
    hits = []
    for email, region in (("ada", "eu"), ("cy", "eu"), ("bob", "us")):
        desk.ids = itertools.count(100)
        agent.run(
            f"reset the password of {email}@x.io",
            params={"email": f"{email}@x.io"},
            additional_args={"region": region},
        )
        assert agent.last_result is not None
        hits.append(agent.last_result.hit)
    assert hits == [False, True, False] and model.calls == 8


def test_instructions_never_reach_the_store_in_clear(tmp_path: Path) -> None:
    """The system prompt is keyed by its fingerprint: a secret in it is not stored, and the run is."""
    engine = Engine(f"sqlite:///{tmp_path / 'store.db'}")
    secret = "Bill with the key sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0, desk bot."
    model = ScriptedModel(tool_calling_script("ada@x.io"))
    agent = CachedAgent(engine, ToolCallingAgent(tools=Desk().tools(), model=model, instructions=secret))
    agent.run("reset the password of ada@x.io", params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.stored
    engine.close()
    stored = (tmp_path / "store.db").read_bytes()
    assert b"sk-live-9f8e7d6c5b4a" not in stored and b"desk bot" not in stored
