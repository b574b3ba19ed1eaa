"""LangChain's fake chat model as a support agent that refunds A1 unless a system prompt freezes refunds."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage


class PolicyModel(GenericFakeChatModel):
    """Refunds A1 unless a system prompt it is shown says 'never refund'; then answers."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> PolicyModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        system = " ".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        done = any(m.type == "tool" for m in messages)
        if done or "never refund" in system:
            reply = AIMessage("refunded A1" if done else "refunds are frozen")
        else:
            reply = AIMessage(
                "", tool_calls=[{"name": "refund", "args": {"order": "A1"}, "id": "c1", "type": "tool_call"}]
            )
        self.messages = iter([reply])
        return super()._generate(messages, *args, **kwargs)
