"""A pydantic-ai agent with muscle memory: the MuscleMem capability, offline with a FunctionModel.

The agent looks a user up, opens a ticket and resets the password under it. The first task is
solved by the model and recorded; the second, for another user, replays the three calls without
the model: the email is a param, and the user id and the new ticket id flow from one call to the
next. When the mailer changes, the check on ``reset_password`` fails: the model takes over after
the replayed steps, which it sees as its own history. Each call says the LLM tokens it spent or
saved, as the engine read them from the run's ``RunUsage`` (FunctionModel estimates them).

Run: python examples/pydantic_ai_agent.py  (needs pip install 'muscle-mem[pydantic-ai]')
"""

from __future__ import annotations

import itertools

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from muscle_mem import Check, Engine, Result
from muscle_mem.integrations.pydantic_ai import MuscleMem

USERS = {"ada@example.com": "usr_41", "bob@example.com": "usr_42", "eve@example.com": "usr_43"}
tickets = itertools.count(1001)
mailer = {"kind": "smtp"}
asked = {"model": 0}


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """What an LLM would answer, scripted from the conversation so far (no network, no API key)."""
    asked["model"] += 1
    prompt = str(messages[0].parts[-1].content)
    done = {p.tool_name: p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    if "find_user" not in done:
        return ModelResponse(parts=[ToolCallPart("find_user", {"email": prompt.split()[-1]})])
    if "open_ticket" not in done:
        return ModelResponse(parts=[ToolCallPart("open_ticket", {"user_id": done["find_user"]})])
    if "reset_password" not in done:
        args = {"user_id": done["find_user"], "ticket": done["open_ticket"]}
        return ModelResponse(parts=[ToolCallPart("reset_password", args)])
    return ModelResponse(parts=[TextPart(f"Done: {done['reset_password']}.")])


def said(result: Result, model_calls: int) -> str:
    """What an engine call did, and the tokens it spent or saved."""
    if result.hit:
        return f"hit: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_saved:,} tokens saved"
    kind = "partial replay" if result.steps_replayed else "miss"
    return f"{kind}: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_spent:,} tokens spent"


engine = Engine()
memory = MuscleMem(
    engine,
    params=lambda ctx: ctx.metadata,  # agent.run(..., metadata={"email": ...})
    checks={"reset_password": Check.equal(lambda **_: mailer["kind"])},
)
agent = Agent(FunctionModel(model), capabilities=[memory])


@agent.tool_plain
def find_user(email: str) -> str:
    """Look a user up by email."""
    return USERS[email]


@agent.tool_plain
async def open_ticket(user_id: str) -> str:
    """Open a support ticket for a user."""
    return f"T-{next(tickets)}"


@agent.tool_plain
def reset_password(user_id: str, ticket: str) -> str:
    """Reset a user's password under a ticket."""
    return f"password of {user_id} reset under {ticket} (via {mailer['kind']})"


if __name__ == "__main__":
    for email in ["ada@example.com", "bob@example.com", "eve@example.com"]:
        if email == "eve@example.com":
            mailer["kind"] = "api"
        before = asked["model"]
        result = agent.run_sync(f"reset the password of {email}", metadata={"email": email})
        last = memory.last_result
        assert last is not None
        print(f"{email}: {said(last, asked['model'] - before)}")
        print(f"  {result.output} (the run's RunUsage: {result.usage.total_tokens:,} tokens)")
        if not last.hit:
            print(f"  why: {last.reason}")
    total = engine.ledger().total
    print(f"ledger: {total.spent.tokens:,} tokens spent, {total.saved.tokens:,} saved")
