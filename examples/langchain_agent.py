"""A LangChain agent (``create_agent``) with muscle memory, run offline with LangChain's fake chat model.

The agent looks a user up, opens a ticket and assigns it. The first request (for ada) runs the
model and is recorded; the second (for bob) is replayed without the model: the email is a param, and
the ticket opened in this run is the one assigned. When the queue closes, the check on ``assign``
fails: the replay stops after two calls and the agent, seeing them as history, escalates instead.
Each line says what the call did and the LLM tokens it spent or saved: the engine reads them from each
model response's ``usage_metadata`` (printed beside it), and its ledger adds them up.

Needs: pip install 'muscle-mem[langchain]' langchain
Run: python examples/langchain_agent.py
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool

from muscle_mem import Check, Engine, Result
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


def used(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """What a provider reports with each model response: its token usage and the model's name."""
    return {
        "usage_metadata": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
        "response_metadata": {"model_name": "gpt-4.1-mini"},
    }


def calls(name: str, input_tokens: int, output_tokens: int, **args: Any) -> AIMessage:
    call = {"name": name, "args": args, "id": f"call_{name}", "type": "tool_call"}
    return AIMessage("", tool_calls=[call], **used(input_tokens, output_tokens))


def usage(messages: list[BaseMessage]) -> tuple[int, int]:
    """LangChain's own figures of a run: its model responses, and the tokens their usage_metadata adds up to."""
    found = [m.usage_metadata for m in messages if isinstance(m, AIMessage) and m.usage_metadata]
    return len(found), sum(u["total_tokens"] for u in found)


def said(result: Result, model_calls: int) -> str:
    """What an engine call did, and the tokens it spent or saved."""
    if result.hit:
        return f"hit: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_saved:,} tokens saved"
    kind = "partial replay" if result.steps_replayed else "miss"
    return f"{kind}: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_spent:,} tokens spent"


model = FakeModel(
    messages=iter(
        [  # what an LLM answers: for ada's request, then after the replay stopped on cy's
            calls("lookup_user", 412, 22, email="ada@example.com"),
            calls("open_ticket", 468, 19, user_id="usr_ada"),
            calls("assign", 519, 17, ticket_id="T1"),
            AIMessage("Ticket T1 for usr_ada is assigned.", **used(566, 12)),
            calls("escalate", 642, 18, ticket_id="T3"),
            AIMessage("The queue is closed: ticket T3 for usr_cy is escalated.", **used(701, 16)),
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
    model_calls, tokens = usage(state["messages"])
    print(f"{email}: {said(result, model_calls)}")
    print(f"  answer {state['messages'][-1].text!r}; usage_metadata: {tokens:,} tokens")
total = engine.ledger().total
print(f"ledger: {total.spent.tokens:,} tokens spent, {total.saved.tokens:,} saved")
