"""An OpenAI Agents SDK agent with muscle memory, offline: the SDK's ScriptedModel plays the LLM.

The first password reset runs the agent (the model picks the tools); the second, for another user,
is replayed without the model, with the fresh ticket id flowing from one tool into the next.

Run: python examples/openai_agents_agent.py   (needs: pip install 'muscle-mem[openai-agents]')
"""

import asyncio
import json

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from muscle_mem import Engine
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


model = ScriptedModel(  # what the LLM would do for ada; the hit for bob never calls it
    [
        [function_call("lookup_user", {"email": "ada@example.com"}, call_id="call_1")],
        [function_call("open_ticket", {"user_id": "usr_ada", "title": "Password reset"}, call_id="call_2")],
        [function_call("send_reset_link", {"ticket": "T-1", "email": "ada@example.com"}, call_id="call_3")],
        [assistant_message("Reset link sent to ada@example.com (ticket T-1).")],
    ]
)
agent = Agent(
    name="support",
    instructions="Reset passwords.",
    model=model,
    tools=[lookup_user, open_ticket, send_reset_link],
)


async def main() -> None:
    runner = CachedRunner(Engine(), agent)
    for email in ("ada@example.com", "bob@example.com"):
        result = await runner.run(f"reset the password of {email}", params={"email": email})
        mm = runner.last_result
        assert mm is not None
        print(f"{email}: hit={mm.hit} replayed={mm.steps_replayed} model_calls={len(model.calls)}")
        print(f"  {result.final_output}")
        for item in result.new_items:
            if item.type == "tool_call_item":
                print(f"  {item.call_id} {item.tool_name}")


asyncio.run(main())
