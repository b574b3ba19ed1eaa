"""pydantic-ai fronts: parallel calls in one model turn, request limits, ModelRetry branches, structured outputs."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from muscle_mem import Engine
from muscle_mem.integrations.pydantic_ai import MuscleMem
from turn_policies import parallel_policy


def seen(messages: list[Any]) -> list[tuple[str, dict[str, Any], Any]]:
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    done: list[tuple[str, dict[str, Any], Any]] = []
    for m in messages:
        for part in m.parts:
            if isinstance(m, ModelResponse) and isinstance(part, ToolCallPart):
                asked[part.tool_call_id] = (part.tool_name, part.args_as_dict())
            elif isinstance(part, RetryPromptPart) and part.tool_call_id in asked:
                name, args = asked[part.tool_call_id]
                done.append((name, args, {"retry": str(part.content)}))
            elif isinstance(part, ToolReturnPart) and part.tool_call_id in asked:
                name, args = asked[part.tool_call_id]
                failed = getattr(part, "outcome", "success") != "success"
                done.append((name, args, {"retry": str(part.content)} if failed else part.content))
    return done


def model(policy: Any) -> FunctionModel:
    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        done = seen(messages)
        move = policy(done)
        if isinstance(move, list):
            return ModelResponse(
                parts=[ToolCallPart(n, a, tool_call_id=f"c{len(done)}_{i}") for i, (n, a) in enumerate(move)]
            )
        if isinstance(move, dict) and info.output_tools:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, move)])
        return ModelResponse(parts=[TextPart(str(move))])

    return FunctionModel(respond)


def stock_tools(world: dict[str, Any]) -> list[Any]:
    def stock(sku: str) -> dict[str, int]:
        """Stock of a sku."""
        return {"qty": world["stock"][sku]}

    def order(sku: str) -> str:
        """Order a sku."""
        world["ordered"].append(sku)
        return "ordered"

    return [stock, order]


def _run(agent: Agent[Any, Any], limit: int) -> Any:
    try:
        return agent.run_sync("restock", usage_limits=UsageLimits(request_limit=limit)).output
    except UsageLimitExceeded as exc:
        return f"raised {exc!r}"


@pytest.mark.parametrize("probe", [{"a": 1, "b": 1}, {"a": 0, "b": 1}], ids=["hit", "partial"])
def test_parallel_calls_of_one_turn_under_request_limit(probe: dict[str, int]) -> None:
    """Two calls made in one model request are one request: the scripted replay must not spend two."""
    engine = Engine()
    world: dict[str, Any] = {"stock": {"a": 1, "b": 1}, "ordered": []}
    cached = Agent(model(parallel_policy), tools=stock_tools(world), capabilities=[MuscleMem(engine)])
    limit = 3 if probe["a"] == 0 else 2
    assert _run(cached, limit) == "ordered []"
    start = {"stock": probe, "ordered": []}
    alone_world = copy.deepcopy(start)
    alone = _run(Agent(model(parallel_policy), tools=stock_tools(alone_world)), limit)
    world.clear()
    world.update(copy.deepcopy(start))
    assert (_run(cached, limit), world) == (alone, alone_world)


def test_model_retry_branches_to_another_tool() -> None:
    """A tool raising ModelRetry: the model reads the retry prompt and goes another way."""
    world: dict[str, Any] = {"busy": False, "done": []}

    def book(slot: str) -> str:
        """Book a slot."""
        if world["busy"]:
            raise ModelRetry("slot taken")
        world["done"].append(("book", slot))
        return "booked"

    def waitlist(slot: str) -> str:
        """Waitlist a slot."""
        world["done"].append(("wait", slot))
        return "waitlisted"

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("book", {"slot": "9am"})]
        last = done[-1]
        if last[0] == "book" and isinstance(last[2], dict) and "retry" in last[2]:
            return [("waitlist", {"slot": "9am"})]
        return f"result {last[2]}"

    engine = Engine()
    mm = MuscleMem(engine)
    agent = Agent(model(policy), tools=[book, waitlist], capabilities=[mm])
    agent.run_sync("book 9am")
    agent.run_sync("book 9am")
    assert mm.last_result is not None and mm.last_result.hit
    world.update(busy=True, done=[])
    out = agent.run_sync("book 9am").output
    assert (out, world["done"]) == ("result waitlisted", [("wait", "9am")])


class Verdict(BaseModel):
    approve: bool
    reason: str


@dataclass
class Account:
    balance: int
    frozen: bool


def test_structured_output_from_a_dataclass_field() -> None:
    """A tool returns a dataclass; its field decides the structured output's approve flag and reason."""
    world: dict[str, Any] = {"acct": Account(100, False), "paid": []}

    def account(user: str) -> Account:
        """An account."""
        return world["acct"]

    def pay(user: str, amount: int) -> str:
        """Pay."""
        world["paid"].append(amount)
        return "paid"

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("account", {"user": "u1"})]
        acct = done[0][2]
        if isinstance(acct, Account):
            frozen, bal = acct.frozen, acct.balance
        else:
            frozen, bal = acct["frozen"], acct["balance"]
        if len(done) == 1 and not frozen and bal >= 50:
            return [("pay", {"user": "u1", "amount": 50})]
        return {"approve": len(done) == 2, "reason": f"frozen={frozen} balance={bal}"}

    engine = Engine()
    agent = Agent(model(policy), tools=[account, pay], capabilities=[MuscleMem(engine)], output_type=Verdict)
    agent.run_sync("pay 50 for u1")
    world.update(acct=Account(80, False), paid=[])
    agent.run_sync("pay 50 for u1")
    world.update(acct=Account(70, False), paid=[])
    out = agent.run_sync("pay 50 for u1").output
    assert out == Verdict(approve=True, reason="frozen=False balance=70")
    world.update(acct=Account(90, True), paid=[])
    out = agent.run_sync("pay 50 for u1").output
    assert (out, world["paid"]) == (Verdict(approve=False, reason="frozen=True balance=90"), [])


def test_parallel_same_tool_twice_different_args() -> None:
    """One turn calls one tool twice with different args; the answer is built from which one says yes."""
    world: dict[str, Any] = {"free": {"r1": True, "r2": False}, "held": []}

    def free(room: str) -> dict[str, bool]:
        """Is a room free."""
        return {"free": world["free"][room]}

    def hold(room: str) -> str:
        """Hold a room."""
        world["held"].append(room)
        return "held"

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("free", {"room": "r1"}), ("free", {"room": "r2"})]
        frees = [a["room"] for n, a, o in done if n == "free" and o["free"]]
        if not any(n == "hold" for n, _, _ in done):
            return [("hold", {"room": frees[0]})] if frees else "none free"
        return f"held {[a['room'] for n, a, _ in done if n == 'hold']}"

    engine = Engine()
    mm = MuscleMem(engine)
    agent = Agent(model(policy), tools=[free, hold], capabilities=[mm])
    agent.run_sync("hold a room")
    world.update(held=[])
    agent.run_sync("hold a room")
    assert mm.last_result is not None and mm.last_result.hit
    world.update(free={"r1": False, "r2": True}, held=[])
    out = agent.run_sync("hold a room").output
    assert (out, world["held"]) == ("held ['r2']", ["r2"])
