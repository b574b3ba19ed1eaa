"""A smolagents ToolCallingAgent with muscle memory, offline (a scripted model stands in for the LLM).

The first task misses: the agent looks the user up, opens a ticket and sends a reset, and the engine
records the calls. The second task, for another user, is replayed without the model: the e-mail is a
param and the ticket id opened in this run flows into ``send_reset``. Each call says the LLM tokens
it spent or saved, as the engine read them from the agent's own token counts.

Run: python examples/smolagents_agent.py   (needs pip install 'muscle-mem[smolagents]')
"""

from __future__ import annotations

import itertools
from typing import Any

from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from smolagents.monitoring import LogLevel, TokenUsage

from muscle_mem import Engine, Result
from muscle_mem.integrations.smolagents import CachedAgent

tickets = itertools.count(100)


@tool
def lookup_user(email: str) -> dict:  # type: ignore[type-arg]
    """Look up a user by e-mail.

    Args:
        email: the user's e-mail address
    """
    return {"id": "usr_" + email.split("@")[0]}


@tool
def open_ticket(user_id: str) -> str:
    """Open a support ticket and return its id.

    Args:
        user_id: the user's id
    """
    return f"T-{next(tickets)}"


@tool
def send_reset(user_id: str, ticket: str) -> str:
    """Send a password reset and note it on the ticket.

    Args:
        user_id: the user's id
        ticket: the ticket id
    """
    return f"reset sent to {user_id} ({ticket})"


class ScriptedModel(Model):
    """The LLM's turns for the first task, in order."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted")
        turns = [
            ("lookup_user", {"email": "ada@example.com"}, 402, 25),
            ("open_ticket", {"user_id": "usr_ada"}, 455, 21),
            ("send_reset", {"user_id": "usr_ada", "ticket": "T-100"}, 503, 33),
            ("final_answer", {"answer": "reset sent to usr_ada (T-100)"}, 560, 19),
        ]
        self.turns = iter(turns)
        self.calls = 0

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        self.calls += 1
        name, arguments, input_tokens, output_tokens = next(self.turns)
        call = ChatMessageToolCall(
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            id=f"call_{self.calls}",
            type="function",
        )
        used = TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens)  # as a provider reports
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call], token_usage=used)


def said(result: Result, model_calls: int) -> str:
    """What an engine call did, and the tokens it spent or saved."""
    if result.hit:
        return f"hit: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_saved:,} tokens saved"
    kind = "partial replay" if result.steps_replayed else "miss"
    return f"{kind}: {result.steps_replayed} steps replayed, {model_calls} model calls, {result.tokens_spent:,} tokens spent"


model = ScriptedModel()
engine = Engine()
agent = CachedAgent(
    engine,
    ToolCallingAgent(tools=[lookup_user, open_ticket, send_reset], model=model, verbosity_level=LogLevel.OFF),
)
for email in ("ada@example.com", "bob@example.com"):
    before = model.calls
    run = agent.run(f"reset the password of {email}", params={"email": email}, return_full_result=True)
    result = agent.last_result
    assert result is not None and run.token_usage is not None
    print(f"{email}: {said(result, model.calls - before)} -> {run.output}")
    print(f"  (the run's token_usage: {run.token_usage.total_tokens:,} tokens)")
total = engine.ledger().total
print(f"ledger: {total.spent.tokens:,} tokens spent, {total.saved.tokens:,} saved")
