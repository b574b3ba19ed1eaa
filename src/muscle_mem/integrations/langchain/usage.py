"""What the chat models of a LangGraph run spent (the ``usage_metadata`` of each response, by model), and when each began a turn."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from muscle_mem import RunView, current_run


class UsageCounter(BaseCallbackHandler):
    """A LangChain callback that adds up the usage of every chat model call of a run, by model name."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.by_model: dict[str, list[int]] = {}
        """Per model name (``""`` when the response names none): input tokens, output tokens, requests."""

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Count one model request and the tokens its response reports."""
        message = _message(response)
        usage = message.usage_metadata if message is not None else None
        metadata = message.response_metadata if message is not None else {}
        model = (
            metadata.get("model_name")
            or metadata.get("model")
            or (response.llm_output or {}).get("model_name")
        )
        with self._lock:
            counts = self.by_model.setdefault(str(model or ""), [0, 0, 0])
            counts[0] += usage["input_tokens"] if usage else 0
            counts[1] += usage["output_tokens"] if usage else 0
            counts[2] += 1

    def report(self) -> None:
        """Add what was counted to the engine's run in progress."""
        run = current_run()
        if run is None:
            return
        for model, (input_tokens, output_tokens, requests) in self.by_model.items():
            run.add_usage(input_tokens, output_tokens, requests=requests, model=model or None)


def _message(response: LLMResult) -> AIMessage | None:
    """The chat message of a model response (None for a completion model's text)."""
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration) and isinstance(generation.message, AIMessage):
                return generation.message
    return None


class TurnMarks(BaseCallbackHandler):
    """A LangChain callback that tells the engine's run when one of its chat models begins a turn.

    A graph node that is no tool node (``tool_nodes``: their names) begins one too: it reads the
    outputs of the calls before it, so the calls it asks for (a rule that emits tool calls, say) were
    decided on them, not at the chat model's turn before.
    """

    def __init__(self, run: RunView | None, tool_nodes: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.run = run
        self.tool_nodes = tool_nodes

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A node that is no tool node begins: the calls made next were decided on every output so far."""
        node = (metadata or {}).get("langgraph_node")
        if self.run is not None and isinstance(node, str) and node not in self.tool_nodes:
            self.run.begin_turn()

    def on_chat_model_start(self, serialized: dict[str, Any], messages: Any, **kwargs: Any) -> None:
        """The calls of the model's response are decided together."""
        if self.run is not None:
            self.run.begin_turn()

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        """A completion model begins a turn too."""
        if self.run is not None:
            self.run.begin_turn()
