"""The messages of a LangGraph run: the task in an input, replayed calls as history, the final answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    convert_to_messages,
)
from langgraph.graph.message import add_messages
from langgraph.prebuilt.tool_node import msg_content_output
from pydantic_core import to_jsonable_python

from muscle_mem import StepView
from muscle_mem.integrations._common import fresh_call_id
from muscle_mem.integrations._turns import turns_of
from muscle_mem.integrations.langchain.tools import Replayed


@dataclass(frozen=True, slots=True)
class Task:
    """A graph input read as a task: its messages, the user's request, what else identifies it."""

    messages: list[BaseMessage]
    """The input's messages (for a str input, one HumanMessage)."""
    request: Any
    """The last message's content: the request the engine keys the task on."""
    history: bool
    """Earlier conversation (other than system messages) comes before the request."""
    extra: dict[str, Any] = field(default_factory=dict)
    """What else the graph gets that changes the task: the input's other state keys."""
    state: dict[str, Any] = field(default_factory=dict)
    """The input's keys other than ``messages``."""
    context: dict[str, Any] = field(default_factory=dict)
    """What the model reads besides the request: the contents of the system messages before it."""


def read_task(graph_input: Any) -> Task | str:
    """The task in a graph input, or why the input is not a new task (a text for the log)."""
    if isinstance(graph_input, str):
        return Task([HumanMessage(graph_input)], graph_input, history=False)
    if not isinstance(graph_input, Mapping) or "messages" not in graph_input:
        return "the input is not a str or a dict with messages (a resume, a command)"
    raw = graph_input["messages"]
    try:
        messages = convert_to_messages(raw if isinstance(raw, list) else [raw])  # as add_messages reads it
    except (TypeError, ValueError, NotImplementedError) as exc:
        return f"the input's messages cannot be read: {exc}"
    if not messages or not isinstance(messages[-1], HumanMessage):
        return "the input does not end with a user message"
    earlier = messages[:-1]
    state = {k: v for k, v in graph_input.items() if k != "messages"}
    extra: dict[str, Any] = {"state": state} if state else {}
    history = any(not isinstance(m, SystemMessage) for m in earlier)
    context = {"system": [m.content for m in earlier if isinstance(m, SystemMessage)]}
    return Task(messages, messages[-1].content, history, extra, state, context)


def graph_input(task: Task, replayed: Sequence[BaseMessage]) -> dict[str, Any]:
    """The input that runs the graph on ``task``, with the calls replayed so far as history."""
    return {**task.state, "messages": [*task.messages, *replayed]}


class CallIds:
    """The fresh ids the replayed calls got, taken in order, tool by tool."""

    def __init__(self, replayed: Sequence[Replayed]) -> None:
        self._left = list(replayed)

    def take(self, tool: str) -> Replayed:
        """The next replayed call of ``tool`` (a fresh id for a call no wrapped tool noted)."""
        for at, note in enumerate(self._left):
            if note.tool == tool:
                return self._left.pop(at)
        return Replayed(tool, fresh_call_id(), with_artifact=False)


def replayed_messages(calls: Sequence[StepView], ids: CallIds) -> list[BaseMessage]:
    """The replayed calls as the model turns they were recorded in: an AIMessage with the turn's tool calls, then a ToolMessage each."""
    out: list[BaseMessage] = []
    for turn in turns_of(calls):
        asked: list[ToolCall] = []
        answered: list[BaseMessage] = []
        for call in turn:
            note = ids.take(call.tool)
            named = {f"__arg{i}": value for i, value in enumerate(call.args, 1)}  # a single-input Tool's
            args = to_jsonable_python({**named, **call.kwargs}, fallback=str)
            asked.append(ToolCall(name=call.tool, args=args, id=note.call_id))
            answered.append(_tool_message(call, note))
        out += [AIMessage("", tool_calls=asked), *answered]
    return out


def with_ids(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages with an id each, given as a graph's ``add_messages`` reducer gives them in a run."""
    merged: list[BaseMessage] = add_messages([], list(messages))  # type: ignore[arg-type, assignment]
    return merged


def _tool_message(call: StepView, note: Replayed) -> ToolMessage:
    """The ToolMessage LangGraph's ToolNode makes of a tool's output."""
    output = call.output
    if isinstance(output, ToolMessage):
        if output.tool_call_id == note.call_id:
            return output
        return output.model_copy(update={"tool_call_id": note.call_id})
    artifact = None
    if note.with_artifact and isinstance(output, tuple) and len(output) == 2:
        output, artifact = output
    content: Any = msg_content_output(output)
    return ToolMessage(content, artifact=artifact, tool_call_id=note.call_id, name=call.tool)


def final_answer(state: Mapping[str, Any]) -> tuple[Any, str | None]:
    """What the engine stores of a finished graph run, or None and why a run cannot be stored.

    It is the final AI message's text; with other state keys (a ``structured_response``), a dict
    ``{"text": ..., "state": {...}}``.
    """
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if "__interrupt__" in state:
        return None, "the graph stopped at an interrupt"
    if not isinstance(last, AIMessage) or last.tool_calls:
        kind = type(last).__name__ if last is not None else "no message"
        return None, f"the graph ended on {kind}, not on a final AI answer"
    text = str(last.text)
    others = {k: v for k, v in state.items() if k != "messages"}
    return ({"text": text, "state": others} if others else text), None


def answer_messages(answer: Any) -> tuple[AIMessage, dict[str, Any]]:
    """The final AI message and the other state keys of a stored answer."""
    if isinstance(answer, Mapping):
        return AIMessage(str(answer["text"])), dict(answer["state"])
    return AIMessage(str(answer)), {}
