"""The tool errors a LangGraph run's models saw that the engine did not record.

LangChain turns some failures into an error ``ToolMessage`` before the tool's function runs (an
argument its schema refuses, ``handle_validation_error``), and ``ToolNode`` answers a call of an
unknown tool with one: the model reads the error and decides on it, while the engine recorded no
call. A run whose model went on from such an error other than by making the same call again is
kept out of the store, as the engine keeps out a run that went on from a tool that raised.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from muscle_mem import StepView


class ToolErrors(BaseCallbackHandler):
    """A LangChain callback noting the tool calls a run's models made and the error results they read."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.calls: list[tuple[str, str, Any]] = []
        """The tool calls the models made in this run, in order: call id, tool name, arguments."""
        self.errors: set[str] = set()
        """The ids of the calls whose error ``ToolMessage`` a model read."""

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """Note the error results in what a model is about to read."""
        failed = {
            m.tool_call_id
            for batch in messages
            for m in batch
            if isinstance(m, ToolMessage) and m.status == "error"
        }
        with self._lock:
            self.errors |= failed

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Note the tool calls of a model's response."""
        made = [
            (str(c["id"]), c["name"], c["args"])
            for generations in response.generations
            for generation in generations
            if isinstance(generation, ChatGeneration) and isinstance(generation.message, AIMessage)
            for c in generation.message.tool_calls
            if c.get("id")
        ]
        with self._lock:
            self.calls.extend(made)

    def problem(
        self, recorded: Sequence[StepView], raised: Sequence[tuple[str, dict[str, Any]]]
    ) -> str | None:
        """Why the run cannot be stored: a model went on from an error result the engine did not see.

        The engine saw the call whose error is a ``ToolMessage`` the tool returned (``recorded``) and
        the calls that raised through it (``raised``, judged by the engine). After any other error
        result, the next call that did not fail must be the same call with the same arguments (a
        retry), as for a tool that raised.
        """
        returned = {s.output.tool_call_id for s in recorded if isinstance(s.output, ToolMessage)}
        with self._lock:
            calls, errors = list(self.calls), self.errors - returned
        failed = {
            call_id for call_id, name, args in calls if call_id in errors and (name, args) not in raised
        }
        for at, (call_id, name, args) in enumerate(calls):
            if call_id not in failed:
                continue
            after = next((c for c in calls[at + 1 :] if c[0] not in errors), None)
            if after is None or after[1:] != (name, args):
                what_next = "answered" if after is None else f"called {after[1]!r}"
                return (
                    f"the model read an error result of tool {name!r} and then {what_next} instead of "
                    "calling it again: what it did rests on the error, which a replay cannot see"
                )
        return None
