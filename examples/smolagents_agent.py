"""A smolagents ToolCallingAgent with muscle memory, offline (a scripted model stands in for the LLM).

The first task misses: the agent looks the user up, opens a ticket and sends a reset, and the engine
records the calls. The second task, for another user, is replayed without the model: the e-mail is a
param and the ticket id opened in this run flows into ``send_reset``.

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
from smolagents.monitoring import LogLevel

from muscle_mem import Engine
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
            ("lookup_user", {"email": "ada@example.com"}),
            ("open_ticket", {"user_id": "usr_ada"}),
            ("send_reset", {"user_id": "usr_ada", "ticket": "T-100"}),
            ("final_answer", {"answer": "reset sent to usr_ada (T-100)"}),
        ]
        self.turns = iter(turns)
        self.calls = 0

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        self.calls += 1
        name, arguments = next(self.turns)
        call = ChatMessageToolCall(
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            id=f"call_{self.calls}",
            type="function",
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


model = ScriptedModel()
agent = CachedAgent(
    Engine(),
    ToolCallingAgent(tools=[lookup_user, open_ticket, send_reset], model=model, verbosity_level=LogLevel.OFF),
)
for email in ("ada@example.com", "bob@example.com"):
    answer = agent.run(f"reset the password of {email}", params={"email": email})
    result = agent.last_result
    assert result is not None
    print(f"{email}: hit={result.hit} replayed={result.steps_replayed} model calls={model.calls} -> {answer}")
