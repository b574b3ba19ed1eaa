"""OpenAI Agents SDK fronts: parallel calls in one model turn, turn limits, handoffs, tool errors."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

pytest.importorskip("agents")

import contextlib

from agents import Agent, MaxTurnsExceeded, Runner, function_tool, handoff, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from muscle_mem import Engine
from muscle_mem.integrations.openai_agents import CachedRunner
from turn_policies import parallel_policy

set_tracing_disabled(True)


def history(call: ModelCall) -> list[tuple[str, dict[str, Any], Any]]:
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    done: list[tuple[str, dict[str, Any], Any]] = []
    for item in call.input if isinstance(call.input, list) else []:
        if item.get("type") == "function_call":
            asked[item["call_id"]] = (item["name"], json.loads(item["arguments"] or "{}"))
        elif item.get("type") == "function_call_output":
            name, args = asked[item["call_id"]]
            out = item["output"]
            with contextlib.suppress(TypeError, ValueError, SyntaxError):
                out = ast.literal_eval(out)
            done.append((name, args, out))
    return done


def model(policy: Any) -> ScriptedModel:
    def respond(call: ModelCall) -> list[Any]:
        done = history(call)
        move = policy(done)
        if isinstance(move, list):
            return [function_call(n, a, call_id=f"c{len(done)}_{i}") for i, (n, a) in enumerate(move)]
        return [assistant_message(move)]

    return ScriptedModel([ModelStep.respond(respond) for _ in range(50)])


def make_tools(world: dict[str, Any]) -> list[Any]:
    @function_tool
    def stock(sku: str) -> dict[str, int]:
        """Stock of a sku."""
        return {"qty": world["stock"][sku]}

    @function_tool
    def order(sku: str) -> str:
        """Order a sku."""
        world["ordered"].append(sku)
        return "ordered"

    return [stock, order]


async def test_parallel_calls_of_one_turn_under_max_turns_end_as_the_agent_alone() -> None:
    """Two calls made in one model turn are one turn: a replay under max_turns must not count them as two."""
    world = {"stock": {"a": 1, "b": 1}, "ordered": []}
    runner = CachedRunner(Engine(), Agent(name="shop", model=model(parallel_policy), tools=make_tools(world)))
    await runner.run("restock", max_turns=2)
    assert runner.last_result is not None and runner.last_result.stored

    alone_world = {"stock": {"a": 1, "b": 1}, "ordered": []}
    alone = await Runner.run(
        Agent(name="shop", model=model(parallel_policy), tools=make_tools(alone_world)),
        "restock",
        max_turns=2,
    )
    try:
        cached = await runner.run("restock", max_turns=2)
        out: Any = cached.final_output
    except MaxTurnsExceeded as exc:
        out = f"raised {exc!r}"
    assert out == alone.final_output


async def test_parallel_calls_then_a_branch_under_max_turns() -> None:
    """A partial replay of two parallel calls leaves the resumed run the turns the agent alone had left."""
    world = {"stock": {"a": 1, "b": 1}, "ordered": []}
    runner = CachedRunner(Engine(), Agent(name="shop", model=model(parallel_policy), tools=make_tools(world)))
    await runner.run("restock", max_turns=3)
    assert runner.last_result is not None and runner.last_result.stored
    start = {"stock": {"a": 0, "b": 1}, "ordered": []}
    alone_world = json.loads(json.dumps(start))
    alone = await Runner.run(
        Agent(name="shop", model=model(parallel_policy), tools=make_tools(alone_world)),
        "restock",
        max_turns=3,
    )
    world.clear()
    world.update(json.loads(json.dumps(start)))
    try:
        out: Any = (await runner.run("restock", max_turns=3)).final_output
    except MaxTurnsExceeded as exc:
        out = f"raised {exc!r}"
    assert (out, world) == (alone.final_output, alone_world)


async def test_handoff_decided_by_a_tool_output() -> None:
    """The triage agent hands off to refunds or to sales by a tool's answer; a replay follows the live answer."""
    world: dict[str, Any] = {"kind": "refund", "done": []}

    @function_tool
    def classify(ticket: str) -> dict[str, str]:
        """Classify a ticket."""
        return {"kind": world["kind"]}

    @function_tool
    def refund(ticket: str) -> str:
        """Refund."""
        world["done"].append(("refund", ticket))
        return "refunded"

    @function_tool
    def sell(ticket: str) -> str:
        """Sell."""
        world["done"].append(("sell", ticket))
        return "sold"

    def worker_policy(tool: str) -> Any:
        def policy(done: list[Any]) -> Any:
            if not any(n == tool for n, _, _ in done):
                return [(tool, {"ticket": "t1"})]
            return f"{tool} done"

        return policy

    def build() -> Agent[Any]:
        refunds = Agent(name="refunds", model=model(worker_policy("refund")), tools=[refund])
        sales = Agent(name="sales", model=model(worker_policy("sell")), tools=[sell])

        def triage_policy(done: list[Any]) -> Any:
            if not done:
                return [("classify", {"ticket": "t1"})]
            kind = done[-1][2]["kind"]
            return [("transfer_to_refunds" if kind == "refund" else "transfer_to_sales", {})]

        return Agent(
            name="triage",
            model=model(triage_policy),
            tools=[classify],
            handoffs=[handoff(refunds), handoff(sales)],
        )

    runner = CachedRunner(Engine(), build())
    r1 = await runner.run("handle t1")
    assert r1.final_output == "refund done"
    assert runner.last_result is not None and runner.last_result.stored
    world.update(kind="sale", done=[])
    r2 = await runner.run("handle t1")
    assert (r2.final_output, world["done"]) == ("sell done", [("sell", "t1")])


async def test_tool_error_message_branches_the_model() -> None:
    """A tool that fails for the model (failure_error_function) sends it on another branch."""
    world: dict[str, Any] = {"fail": False, "done": []}

    @function_tool
    def charge(amount: int) -> str:
        """Charge."""
        if world["fail"]:
            raise RuntimeError("card declined")
        world["done"].append(("charge", amount))
        return "charged"

    @function_tool
    def invoice(amount: int) -> str:
        """Invoice."""
        world["done"].append(("invoice", amount))
        return "invoiced"

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("charge", {"amount": 5})]
        last = done[-1]
        if last[0] == "charge" and "error" in str(last[2]).lower():
            return [("invoice", {"amount": 5})]
        return f"done {last[2]}"

    runner = CachedRunner(Engine(), Agent(name="pay", model=model(policy), tools=[charge, invoice]))
    await runner.run("pay 5")
    await runner.run("pay 5")
    assert runner.last_result is not None and runner.last_result.hit
    world.update(fail=True, done=[])
    out = (await runner.run("pay 5")).final_output
    assert world["done"] == [("invoice", 5)] and out == "done invoiced"


async def test_same_tool_twice_in_one_turn_with_swapped_order() -> None:
    """Two parallel calls of one tool whose order the model picks from a tool output; the answer names the first."""
    world: dict[str, Any] = {"first": "x", "sent": []}

    @function_tool
    def pick() -> dict[str, str]:
        """Which goes first."""
        return {"first": world["first"]}

    @function_tool
    def send(to: str) -> str:
        """Send."""
        world["sent"].append(to)
        return f"sent {to}"

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("pick", {})]
        if len(done) == 1:
            first = done[0][2]["first"]
            order = [first, "y" if first == "x" else "x"]
            return [("send", {"to": t}) for t in order]
        return "first " + done[1][2]

    runner = CachedRunner(Engine(), Agent(name="mail", model=model(policy), tools=[pick, send]))
    await runner.run("send both")
    world.update(first="y", sent=[])
    out = (await runner.run("send both")).final_output
    assert (world["sent"], out) == (["y", "x"], "first sent y")


async def test_partial_replay_mid_turn_of_parallel_calls() -> None:
    """The agent alone asks about both rooms in one turn; a replay that stops after the first must not
    leave the model a history in which it asked about one room only."""
    world: dict[str, Any] = {"free": {"r1": True, "r2": False}, "held": []}

    def tools(w: dict[str, Any]) -> list[Any]:
        @function_tool
        def free(room: str) -> dict[str, bool]:
            """Is a room free."""
            return {"free": w["free"][room]}

        @function_tool
        def hold(room: str) -> str:
            """Hold a room."""
            w["held"].append(room)
            return "held"

        return [free, hold]

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("free", {"room": "r1"}), ("free", {"room": "r2"})]
        frees = [a["room"] for n, a, o in done if n == "free" and o["free"]]
        if not any(n == "hold" for n, _, _ in done):
            return [("hold", {"room": frees[0]})] if frees else "none free"
        return f"held {[a['room'] for n, a, _ in done if n == 'hold']}"

    runner = CachedRunner(Engine(), Agent(name="rooms", model=model(policy), tools=tools(world)))
    await runner.run("hold a room")
    world["held"] = []
    await runner.run("hold a room")
    assert runner.last_result is not None and runner.last_result.hit
    start = {"free": {"r1": False, "r2": True}, "held": []}
    alone_world = json.loads(json.dumps(start))
    alone = await Runner.run(
        Agent(name="rooms", model=model(policy), tools=tools(alone_world)), "hold a room"
    )
    world.clear()
    world.update(json.loads(json.dumps(start)))
    out = (await runner.run("hold a room")).final_output
    assert (out, world) == (alone.final_output, alone_world)
