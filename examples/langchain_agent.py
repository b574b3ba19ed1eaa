"""A LangChain agent (``create_agent``) with muscle memory, run offline with LangChain's fake chat model.

The agent looks a user up, opens a ticket and assigns it. The first request (for ada) runs the
model and is recorded; the second (for bob) is replayed without the model: the email is a param, and
the ticket opened in this run is the one assigned. When the queue closes, the check on ``assign``
fails: the replay stops after two calls and the agent, seeing them as history, escalates instead.

Needs: pip install 'muscle-mem[langchain]' langchain
Run: python examples/langchain_agent.py
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from muscle_mem import Check, Engine
from muscle_mem.integrations.langchain import CachedAgent

USERS = {"ada@example.com": "usr_ada", "bob@example.com": "usr_bob", "cy@example.com": "usr_cy"}
tickets = itertools.count(1)
queue = {"open": True}


@tool
def lookup_user(email: str) -> dict[str, str]:
    """Find a user by email."""
    return {"id": USERS[email]}


@tool
def open_ticket(user_id: str) -> dict[str, str]:
    """Open a ticket for a user."""
    return {"ticket": f"T{next(tickets)}", "user": user_id}


@tool
def assign(ticket_id: str) -> str:
    """Assign a ticket to the support queue."""
    return f"{ticket_id} assigned"


@tool
def escalate(ticket_id: str) -> str:
    """Escalate a ticket to the on-call engineer."""
    return f"{ticket_id} escalated"


class FakeModel(GenericFakeChatModel):
    """LangChain's scripted chat model; ``create_agent`` binds tools to it, which it ignores."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:  # type: ignore[override]
        return self


def calls(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{name}", "type": "tool_call"}])


model = FakeModel(
    messages=iter(
        [  # what an LLM answers: for ada's request, then after the replay stopped on cy's
            calls("lookup_user", email="ada@example.com"),
            calls("open_ticket", user_id="usr_ada"),
            calls("assign", ticket_id="T1"),
            AIMessage("Ticket T1 for usr_ada is assigned."),
            calls("escalate", ticket_id="T3"),
            AIMessage("The queue is closed: ticket T3 for usr_cy is escalated."),
        ]
    )
)
engine = Engine()
agent = CachedAgent(
    engine,
    create_agent(model, [lookup_user, open_ticket, assign, escalate]),
    checks={"assign": Check.equal(lambda ticket_id: queue["open"])},
)

for email in ("ada@example.com", "bob@example.com", "cy@example.com"):
    if email.startswith("cy"):
        queue["open"] = False
    state = agent.invoke({"messages": [("user", f"open a ticket for {email}")]}, params={"email": email})
    result = agent.last_result
    assert result is not None
    print(f"{email}: hit={result.hit} replayed={result.steps_replayed} answer={state['messages'][-1].text!r}")
