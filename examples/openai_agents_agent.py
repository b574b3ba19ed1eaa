"""An OpenAI Agents SDK agent with muscle memory, offline: the SDK's ScriptedModel plays the LLM.

The first password reset runs the agent (the model picks the tools); the second, for another user,
is replayed without the model, with the fresh ticket id flowing from one tool into the next. Each
call says the LLM tokens it spent or saved, as the engine read them from the run's ``Usage``.

Run: python examples/openai_agents_agent.py   (needs: pip install 'muscle-mem[openai-agents]')
"""

import asyncio
import json
from typing import Any

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from muscle_mem import Engine, Result
from muscle_mem.integrations.openai_agents import CachedRunner

set_tracing_disabled(True)  # no trace export without an API key
tickets: list[str] = []


@function_tool
def lookup_user(email: str) -> dict[str, str]:
    """Find a user by email."""
    return {"id": "usr_" + email.split("@")[0], "email": email}


@function_tool
async def open_ticket(user_id: str, title: str) -> str:
    """Open a support ticket; returns it as JSON."""
    tickets.append(f"T-{len(tickets) + 1}")
    return json.dumps({"ticket": tickets[-1], "user": user_id})


@function_tool
def send_reset_link(ticket: str, email: str) -> str:
    """Email a password-reset link that quotes the ticket."""
    return f"link sent to {email} for {ticket}"


def step(output: Any, input_tokens: int, output_tokens: int) -> ModelStep:
    """One model turn, with the usage a provider reports for it."""
    used = Usage(
        requests=1,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )
    return ModelStep(output=[output], usage=used)


def said(result: Result, model_calls: int) -> str:
    """What an engine call did, and the tokens it spent or saved."""
    if result.hit:
        return f"hit: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_saved:,} tokens saved"
    kind = "partial replay" if result.steps_replayed else "miss"
    return f"{kind}: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_spent:,} tokens spent"


model = ScriptedModel(  # what the LLM would do for ada; the hit for bob never calls it
    [
        step(function_call("lookup_user", {"email": "ada@example.com"}, call_id="call_1"), 388, 21),
        step(
            function_call("open_ticket", {"user_id": "usr_ada", "title": "Password reset"}, call_id="call_2"),
            431,
            26,
        ),
        step(
            function_call("send_reset_link", {"ticket": "T-1", "email": "ada@example.com"}, call_id="call_3"),
            479,
            30,
        ),
        step(assistant_message("Reset link sent to ada@example.com (ticket T-1)."), 528, 14),
    ]
)
agent = Agent(
    name="support",
    instructions="Reset passwords.",
    model=model,
    tools=[lookup_user, open_ticket, send_reset_link],
)


async def main() -> None:
    engine = Engine()
    runner = CachedRunner(engine, agent)
    for email in ("ada@example.com", "bob@example.com"):
        before = len(model.calls)
        result = await runner.run(f"reset the password of {email}", params={"email": email})
        mm = runner.last_result
        assert mm is not None
        print(f"{email}: {said(mm, len(model.calls) - before)}")
        print(
            f"  {result.final_output} (the run's Usage: {result.context_wrapper.usage.total_tokens:,} tokens)"
        )
        for item in result.new_items:
            if item.type == "tool_call_item":
                print(f"  {item.call_id} {item.tool_name}")
    total = engine.ledger().total
    print(f"ledger: {total.spent.tokens:,} tokens spent, {total.saved.tokens:,} saved")


asyncio.run(main())
