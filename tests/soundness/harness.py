"""The soundness judge: each run through the engine against the same agent alone on a copy of its world.

A scenario is a world (a plain dict), tools acting on it, and a deterministic policy: given the task
text, the agent's own context and the tool calls so far with their outputs, it names the next call or
its answer, as an LLM agent would. The same policy drives six front ends: a plain Python agent on
``Engine`` that resumes from ``current_run()``, a LangChain ``create_agent`` graph under
``CachedAgent`` whose fake chat model decides from the messages, a pydantic-ai ``Agent`` with the
``MuscleMem`` capability whose ``FunctionModel`` decides from the messages, an OpenAI Agents SDK
``Agent`` under ``CachedRunner`` whose ``ScriptedModel`` decides from its input and instructions, a
smolagents ``ToolCallingAgent`` under ``CachedAgent`` whose model decides from the agent's memory,
and a remote agent talking to ``muscle-mem``'s MCP caching proxy (in process) in front of an MCP
server of the tools: it calls ``muscle_mem_begin``, reads the steps the proxy says were replayed, and
goes on from there.

Every run (recordings and probes) is made twice on the same starting world: through the engine, and by
the agent alone on a ``copy.deepcopy``. A run is *unsafe* when the final worlds or the answers differ.
A *needless miss* is a probe marked harmless (a replay would be right) that the engine did not fully
hit though the agent alone made the calls of a recorded run (the same tools in the same order).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from muscle_mem import Check, Engine, Result, current_run
from muscle_mem.stores.base import Event, EventLog

Front = Literal["core", "langchain", "pydantic_ai", "mcp_proxy", "openai_agents", "smolagents"]
CheckMode = Literal["narrow", "none"]
CHECK_MODES: tuple[CheckMode, ...] = ("narrow", "none")
World = dict[str, Any]
Step = tuple[str, dict[str, Any], Any]
"""One call the agent has seen: the tool, its arguments by name, its output."""


@dataclass(frozen=True)
class Call:
    """The policy's next move: call ``tool`` with ``kwargs``."""

    tool: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """The policy's last move: answer (a text, or a dict for a structured output)."""

    value: Any


Policy = Callable[[str, str, list[Step]], "Call | Answer"]
"""(task text, the agent's own context, the calls so far) -> the next move."""


@dataclass(frozen=True)
class Tool:
    """A tool: ``fn(world, **kwargs)`` and, for narrow checks, ``check(world, **kwargs)`` (a pre-check)."""

    name: str
    fn: Callable[..., Any]
    check: Callable[..., Any] | None = None
    doc: str = ""


@dataclass(frozen=True)
class Run:
    """One task on one starting world; ``harmless`` says a replay of a recorded run would be right."""

    text: str
    world: World
    params: Mapping[str, Any] = field(default_factory=dict)
    harmless: bool = False
    note: str = ""


@dataclass(frozen=True)
class Scenario:
    """A red-team scenario: tools, an agent's policy, runs that build the cache, then probes."""

    name: str
    cls: str
    front: Front
    tools: Sequence[Tool]
    policy: Policy
    records: Sequence[Run]
    probes: Sequence[Run]
    context: Callable[[World], str] | None = None
    """The agent's own context read from the world (a system prompt, instructions), if any."""
    output_type: type | None = None
    """A pydantic model for a pydantic-ai structured output."""
    store: Literal["memory", "sqlite"] = "memory"
    restart: bool = False
    """Probe through a new Engine on the same SQLite store (another worker, or a restart)."""
    hidden_state: str | None = None
    """Why no principle can pass it: the difference lives in state no tool output shows."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Engine options the scenario needs (``templates=True``), under those the judge runs it with."""
    probe_options: Mapping[str, Any] | None = None
    """Engine options the probes run with instead (with ``restart``: recorded under one configuration,
    probed under another on the same store)."""
    tradeoff: str | None = None
    """Why a sound engine must miss a harmless probe here (its needless misses are counted, not failed)."""
    doc: str = ""


@dataclass
class Outcome:
    """One run of a scenario judged: how the engine did and whether it matched the agent alone."""

    scenario: str
    phase: Literal["record", "probe"]
    index: int
    harmless: bool
    kind: Literal["hit", "partial", "miss"]
    steps_replayed: int
    miss_reason: str | None
    reason: str | None
    unsafe: bool
    needless: bool
    engine_calls: list[tuple[str, dict[str, Any]]]
    alone_calls: list[tuple[str, dict[str, Any]]]
    engine_answer: Any
    alone_answer: Any
    error: str | None = None

    def describe(self) -> str:
        """One line saying what went wrong (or right) in this run."""
        head = f"{self.scenario} {self.phase}[{self.index}]: {self.kind}"
        if self.error:
            return f"{head}, engine raised {self.error}"
        if self.unsafe:
            return (
                f"{head} UNSAFE: engine {self.engine_calls} -> {self.engine_answer!r}; "
                f"alone {self.alone_calls} -> {self.alone_answer!r} ({self.miss_reason}: {self.reason})"
            )
        return f"{head} ({self.miss_reason}: {self.reason})"


@dataclass
class Report:
    """The outcomes of one scenario in one check mode and engine configuration."""

    scenario: Scenario
    checks: CheckMode
    outcomes: list[Outcome]
    events: Sequence[Event] = ()
    """The engine's events, in order (for the shadow verdicts of ``mode="shadow"`` and ``"proven"``)."""

    @property
    def probes(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.phase == "probe"]

    @property
    def unsafe(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.unsafe]

    @property
    def needless(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.needless]

    def count(self, kind: str) -> int:
        return sum(1 for o in self.probes if o.kind == kind)


class Box:
    """The world the tools act on now, and the calls they ran (in order)."""

    def __init__(self) -> None:
        self.world: World = {}
        self.log: list[tuple[str, dict[str, Any]]] = []


def _signature(tool: Tool) -> inspect.Signature:
    """The tool's signature without its world parameter, annotations resolved."""
    sig = inspect.signature(tool.fn)
    hints = typing.get_type_hints(tool.fn)
    params = [p.replace(annotation=hints.get(p.name, Any)) for p in list(sig.parameters.values())[1:]]
    return sig.replace(parameters=params, return_annotation=hints.get("return", Any))


def _bound(sig: inspect.Signature, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _callable(tool: Tool, box: Box) -> Callable[..., Any]:
    """A plain function with the tool's name and signature, acting on ``box.world`` and logged."""
    sig = _signature(tool)

    def call(*args: Any, **kwargs: Any) -> Any:
        arguments = _bound(sig, args, kwargs)
        box.log.append((tool.name, copy.deepcopy(arguments)))
        return tool.fn(box.world, **arguments)

    _dress(call, tool, sig)
    return call


def _capture(tool: Tool, box: Box) -> Callable[..., Any]:
    """The narrow pre-check's capture, with the tool's signature."""
    assert tool.check is not None
    check, sig = tool.check, _signature(tool)

    def capture(*args: Any, **kwargs: Any) -> Any:
        return check(box.world, **_bound(sig, args, kwargs))

    _dress(capture, tool, sig)
    return capture


def _dress(fn: Callable[..., Any], tool: Tool, sig: inspect.Signature) -> None:
    fn.__name__ = fn.__qualname__ = tool.name
    fn.__doc__ = tool.doc or f"The {tool.name.replace('_', ' ')} tool."
    fn.__signature__ = sig  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()} | {
        "return": sig.return_annotation
    }


def _parse(content: Any) -> Any:
    """A tool message's content as the tool returned it (JSON text parsed), as a model reads it."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def _norm(value: Any) -> Any:
    """An answer made comparable: pydantic models as dicts."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


# ---- front ends -----------------------------------------------------------------------------------------


class _Front:
    """Runs a scenario's agent on ``box.world``: through the engine, or alone."""

    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        raise NotImplementedError

    def alone(self, run: Run) -> Any:
        raise NotImplementedError

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        raise NotImplementedError


def _drive(policy: Policy, text: str, context: str, history: list[Step], tools: Mapping[str, Any]) -> Any:
    for _ in range(50):
        move = policy(text, context, history)
        if isinstance(move, Answer):
            return move.value
        try:
            output = tools[move.tool](**dict(move.kwargs))
        except Exception as exc:  # handed to the agent as a text, as LangGraph's tool node does
            output = f"Error: {exc!r}"
        history.append((move.tool, dict(move.kwargs), output))
    raise AssertionError("the policy did not answer in 50 moves")


class _Core(_Front):
    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        self.sc, self.box, self.engine = sc, box, engine
        self.raw = {t.name: _callable(t, box) for t in sc.tools}
        self.sigs = {t.name: _signature(t) for t in sc.tools}
        self.wrapped: dict[str, Any] = {}
        for t in sc.tools:
            pre = Check.equal(_capture(t, box)) if checks == "narrow" and t.check is not None else None
            self.wrapped[t.name] = engine.register(
                self.raw[t.name], name=t.name, version=f"{sc.name}.{t.name}.1", pre_check=pre
            )
        engine.set_agent(self._agent)

    def _context(self) -> str:
        return self.sc.context(self.box.world) if self.sc.context else ""

    def _agent(self, text: str) -> Any:
        run = current_run()
        history: list[Step] = []
        if run is not None:  # resume after the steps the engine replayed
            for s in run.steps:
                history.append((s.tool, _bound(self.sigs[s.tool], s.args, s.kwargs), s.output))
        return _drive(self.sc.policy, text, self._context(), history, self.wrapped)

    def alone(self, run: Run) -> Any:
        return _drive(self.sc.policy, run.text, self._context(), [], self.raw)

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        result = self.engine(run.text, params=dict(run.params))
        return result, result.output


class _LangChain(_Front):
    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        from langchain.agents import create_agent
        from langchain_core.tools import StructuredTool

        from muscle_mem.integrations.langchain import CachedAgent

        self.sc, self.box = sc, box
        model = policy_chat_model(sc.policy)

        def lc_tools() -> list[Any]:
            return [
                StructuredTool.from_function(
                    _errors_as_tool_errors(_callable(t, box)),
                    name=t.name,
                    description=t.doc or t.name,
                    handle_tool_error=True,
                )
                for t in sc.tools
            ]

        lc_checks = {
            t.name: Check.equal(_capture(t, box)) for t in sc.tools if checks == "narrow" and t.check
        }
        self.graph_alone: Any = create_agent(model, lc_tools())
        self.agent = CachedAgent(engine, create_agent(model, lc_tools()), checks=lc_checks or None)

    def _input(self, run: Run) -> dict[str, Any]:
        from langchain_core.messages import HumanMessage, SystemMessage

        messages: list[Any] = []
        if self.sc.context:
            messages.append(SystemMessage(self.sc.context(self.box.world)))
        messages.append(HumanMessage(run.text))
        return {"messages": messages}

    def alone(self, run: Run) -> Any:
        state = self.graph_alone.invoke(self._input(run))
        return state["messages"][-1].content

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        state = self.agent.invoke(self._input(run), params=dict(run.params))
        return self.agent.last_result, state["messages"][-1].content


def lc_history(messages: Sequence[Any]) -> tuple[str, str, list[Step]]:
    """The task text, the system context and the calls so far, read from LangChain messages."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    text, context, history = "", "", []
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        if isinstance(m, SystemMessage):
            context = str(m.content)
        elif isinstance(m, HumanMessage) and not text:
            text = str(m.content)
        elif isinstance(m, AIMessage):
            for c in m.tool_calls:
                asked[str(c["id"])] = (c["name"], dict(c["args"]))
        elif isinstance(m, ToolMessage):
            name, args = asked[m.tool_call_id]
            history.append((name, args, _parse(m.content)))
    return text, context, history


def _errors_as_tool_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, its exceptions raised as LangChain's ``ToolException``: the tool then hands the model
    ``Error: ...`` as its message, as the plain agent's loop does (:func:`_drive`)."""
    from langchain_core.tools import ToolException

    @functools.wraps(fn)
    def raising(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise ToolException(f"Error: {exc!r}") from exc

    return raising


def policy_chat_model(policy: Policy) -> Any:
    """LangChain's fake chat model, deciding each turn from the messages by ``policy``."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class PolicyChatModel(GenericFakeChatModel):
        """A fake chat model whose next message is the policy's move on the messages so far."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            text, context, history = lc_history(messages)
            move = policy(text, context, history)
            if isinstance(move, Call):
                call = {
                    "name": move.tool,
                    "args": dict(move.kwargs),
                    "id": f"c{len(history)}",
                    "type": "tool_call",
                }
                message = AIMessage("", tool_calls=[call])
            else:
                message = AIMessage(str(move.value))
            return ChatResult(generations=[ChatGeneration(message=message)])

    return PolicyChatModel(messages=iter(()))


class _PydanticAI(_Front):
    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        from pydantic_ai import Agent
        from pydantic_ai import Tool as PTool
        from pydantic_ai.models.function import FunctionModel

        from muscle_mem.integrations.pydantic_ai import MuscleMem

        self.sc, self.box = sc, box
        respond = functools.partial(_pai_respond, sc.policy)
        pai_checks = {
            t.name: Check.equal(_capture(t, box)) for t in sc.tools if checks == "narrow" and t.check
        }
        self.memory = MuscleMem(engine, params=lambda ctx: ctx.metadata, checks=pai_checks or None)

        def agent(capabilities: list[Any]) -> Any:
            options: dict[str, Any] = {}
            if sc.output_type is not None:
                options["output_type"] = sc.output_type
            if sc.context is not None:
                context = sc.context
                options["instructions"] = lambda: context(box.world)
            return Agent(
                FunctionModel(respond),
                tools=[PTool(_callable(t, box), name=t.name, takes_ctx=False) for t in sc.tools],
                capabilities=capabilities,
                **options,
            )

        self.agent_alone = agent([])
        self.agent = agent([self.memory])

    def alone(self, run: Run) -> Any:
        return _norm(self.agent_alone.run_sync(run.text).output)

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        out = self.agent.run_sync(run.text, metadata=dict(run.params) or None)
        return self.memory.last_result, _norm(out.output)


def pai_history(messages: Sequence[Any]) -> tuple[str, list[Step]]:
    """The task text and the calls so far, read from pydantic-ai messages."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

    text, history = "", []
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for part in m.parts:
            if isinstance(m, ModelRequest) and isinstance(part, UserPromptPart) and not text:
                text = str(part.content)
            elif isinstance(m, ModelResponse) and isinstance(part, ToolCallPart):
                asked[part.tool_call_id] = (part.tool_name, part.args_as_dict())
            elif isinstance(part, ToolReturnPart) and part.tool_call_id in asked:
                name, args = asked[part.tool_call_id]
                history.append((name, args, _parse(part.content)))
    return text, history


def _pai_respond(policy: Policy, messages: list[Any], info: Any) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    text, history = pai_history(messages)
    move = policy(text, info.instructions or "", history)
    if isinstance(move, Call):
        return ModelResponse(
            parts=[ToolCallPart(move.tool, dict(move.kwargs), tool_call_id=f"c{len(history)}")]
        )
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, dict(move.value))])
    return ModelResponse(parts=[TextPart(str(move.value))])


class _OpenAIAgents(_Front):
    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        from agents import Agent, function_tool

        from muscle_mem.integrations.openai_agents import CachedRunner

        self.sc, self.box = sc, box
        oa_checks = {
            t.name: Check.equal(_capture(t, box)) for t in sc.tools if checks == "narrow" and t.check
        }

        def agent() -> Any:
            context = sc.context
            return Agent(
                name=sc.name,
                instructions=(lambda ctx, agent: context(box.world)) if context is not None else None,
                model=policy_agents_model(sc.policy),
                tools=[function_tool(_json_text(_callable(t, box))) for t in sc.tools],
            )

        self.agent_alone = agent()
        self.runner = CachedRunner(engine, agent(), checks=oa_checks or None)

    def alone(self, run: Run) -> Any:
        from agents import Runner

        return Runner.run_sync(self.agent_alone, run.text).final_output

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        result = self.runner.run_sync(run.text, params=dict(run.params))
        return self.runner.last_result, result.final_output


def agents_history(items: Any) -> tuple[str, list[Step]]:
    """The task text and the calls so far, read from an Agents SDK model input."""
    if isinstance(items, str):
        return items, []
    text, history = "", []
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    for item in items:
        kind = item.get("type")
        if item.get("role") == "user" and not text:
            text = str(item["content"])
        elif kind == "function_call":
            asked[item["call_id"]] = (item["name"], json.loads(item["arguments"] or "{}"))
        elif kind == "function_call_output":
            name, args = asked[item["call_id"]]
            history.append((name, args, _parse(item["output"])))
    return text, history


def policy_agents_model(policy: Policy) -> Any:
    """The Agents SDK's ScriptedModel, deciding each turn from its input and instructions by ``policy``."""
    from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

    def respond(call: ModelCall) -> Any:
        text, history = agents_history(call.input)
        move = policy(text, call.system_instructions or "", history)
        if isinstance(move, Call):
            return [function_call(move.tool, dict(move.kwargs), call_id=f"c{len(history)}")]
        return [assistant_message(str(move.value))]

    return ScriptedModel([ModelStep.respond(respond) for _ in range(500)])


class _Smolagents(_Front):
    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        from smolagents import ToolCallingAgent

        from muscle_mem.integrations.smolagents import CachedAgent

        self.sc, self.box = sc, box
        sm_checks = {
            t.name: Check.equal(_capture(t, box)) for t in sc.tools if checks == "narrow" and t.check
        }

        def agent() -> Any:
            model = policy_smol_model(sc.policy)
            tools = [_smol_tool(t, box) for t in sc.tools]
            model.agent = ToolCallingAgent(tools=tools, model=model, verbosity_level=-1)
            return model.agent

        self.agent_alone = agent()
        self.cached_agent = CachedAgent(engine, agent(), checks=sm_checks or None)

    def _instruct(self, agent: Any) -> Any:
        """The agent, its instructions set from the world (as an app sets today's before a run)."""
        agent.instructions = self.sc.context(self.box.world) if self.sc.context else None
        return agent

    def alone(self, run: Run) -> Any:
        return self._instruct(self.agent_alone).run(run.text)

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        self._instruct(self.cached_agent.agent)
        answer = self.cached_agent.run(run.text, params=dict(run.params))
        return self.cached_agent.last_result, answer


_SMOL_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def _smol_tool(tool: Tool, box: Box) -> Any:
    """The tool as a smolagents ``Tool``: its output as JSON text."""
    from smolagents import Tool as SmolTool

    fn = _json_text(_callable(tool, box))
    inputs = {
        p.name: {
            "type": _SMOL_TYPES.get(typing.get_origin(p.annotation) or p.annotation, "any"),
            "description": p.name,
        }
        | ({"nullable": True} if p.default is not inspect.Parameter.empty else {})
        for p in _signature(tool).parameters.values()
    }
    attributes = {
        "name": tool.name,
        "description": tool.doc or tool.name,
        "inputs": inputs,
        "output_type": "string",
        "skip_forward_signature_validation": True,
        "forward": lambda self, **kwargs: fn(**kwargs),
    }
    return type(f"{tool.name}_tool", (SmolTool,), attributes)()


def smol_history(agent: Any) -> tuple[str, str, list[Step]]:
    """The task text, the system prompt and the calls so far, read from a smolagents agent's memory."""
    from smolagents.memory import ActionStep, TaskStep

    steps = agent.memory.steps
    text = next(str(s.task) for s in steps if isinstance(s, TaskStep))
    history: list[Step] = []
    for step in steps:
        if isinstance(step, ActionStep):
            for c in step.tool_calls or []:
                if c.name != "final_answer":
                    history.append((c.name, dict(c.arguments), _parse(step.observations)))
    return text, str(agent.memory.system_prompt.system_prompt), history


def policy_smol_model(policy: Policy) -> Any:
    """A smolagents ``Model`` deciding each turn from its agent's memory by ``policy``."""
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
    )

    class PolicyModel(Model):  # type: ignore[misc]  # smolagents has no type hints
        agent: Any = None

        def generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatMessage:
            text, context, history = smol_history(self.agent)
            move = policy(text, context, history)
            name, arguments = (
                (move.tool, dict(move.kwargs))
                if isinstance(move, Call)
                else ("final_answer", {"answer": move.value})
            )
            call = ChatMessageToolCall(
                function=ChatMessageToolCallFunction(name=name, arguments=arguments),
                id=f"c{len(history)}",
                type="function",
            )
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])

    return PolicyModel(model_id="policy")


class _McpProxy(_Front):
    def __init__(self, sc: Scenario, box: Box, engine: Engine, checks: CheckMode) -> None:
        from mcp.server.mcpserver import MCPServer

        self.sc, self.box, self.engine = sc, box, engine
        self.checks = {
            t.name: Check.equal(_capture(t, box)) for t in sc.tools if checks == "narrow" and t.check
        }
        self.server = MCPServer(f"{sc.name}-upstream", log_level="WARNING")
        for t in sc.tools:
            self.server.tool(name=t.name, description=t.doc or t.name, structured_output=False)(
                _json_text(_callable(t, box))
            )

    def _context(self) -> str:
        return self.sc.context(self.box.world) if self.sc.context else ""

    async def _work(self, client: Any, run: Run, history: list[Step]) -> Any:
        for _ in range(50):
            move = self.sc.policy(run.text, self._context(), history)
            if isinstance(move, Answer):
                return move.value
            result = await client.call_tool(move.tool, dict(move.kwargs))
            history.append((move.tool, dict(move.kwargs), _parse(_mcp_text(result))))
        raise AssertionError("the policy did not answer in 50 moves")

    def alone(self, run: Run) -> Any:
        from mcp import Client

        async def go() -> Any:
            async with Client(self.server) as client:
                return await self._work(client, run, [])

        return asyncio.run(go())

    def cached(self, run: Run) -> tuple[Result | None, Any]:
        from mcp import Client

        from muscle_mem.integrations.mcp_proxy import BEGIN, END, CachingProxy

        async def go() -> tuple[Result | None, Any]:
            async with Client(self.server) as upstream:
                proxy = CachingProxy(self.engine, upstream, checks=self.checks or None)
                await proxy.refresh_tools()
                async with Client(proxy.server) as client:
                    begun = await client.call_tool(BEGIN, {"task": run.text, "params": dict(run.params)})
                    said = _mcp_text(begun)
                    if said.startswith("done by replay: "):
                        answer = re.sub(r" \(\d+ steps?\)$", "", said.removeprefix("done by replay: "))
                        return proxy.last_result, answer
                    answer = await self._work(client, run, _replayed_steps(said))
                    await client.call_tool(END, {"answer": answer})
                    return proxy.last_result, answer

        return asyncio.run(go())


def _json_text(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The tool as an MCP server serves it: its output as JSON text."""

    def serve(*args: Any, **kwargs: Any) -> str:
        return json.dumps(fn(*args, **kwargs))

    functools.update_wrapper(serve, fn)
    serve.__annotations__ = {**fn.__annotations__, "return": str}
    serve.__signature__ = inspect.signature(fn).replace(return_annotation=str)  # type: ignore[attr-defined]
    return serve


def _mcp_text(result: Any) -> str:
    return "".join(str(getattr(block, "text", "")) for block in result.content)


def _replayed_steps(said: str) -> list[Step]:
    """The steps the proxy says it replayed, read back from its text as a remote model reads them."""
    steps: list[Step] = []
    for line in said.splitlines():
        found = re.match(r"^\d+\. ([\w.]+)\((.*?)\) -> (.*)$", line)
        if found:
            steps.append((found.group(1), json.loads(found.group(2)), _parse(found.group(3))))
    return steps


FRONTS: dict[str, type[_Front]] = {
    "core": _Core,
    "langchain": _LangChain,
    "pydantic_ai": _PydanticAI,
    "mcp_proxy": _McpProxy,
    "openai_agents": _OpenAIAgents,
    "smolagents": _Smolagents,
}


# ---- the judge ------------------------------------------------------------------------------------------


def _kind(result: Result | None) -> Literal["hit", "partial", "miss"]:
    if result is not None and result.hit:
        return "hit"
    if result is not None and result.steps_replayed > 0:
        return "partial"
    return "miss"


def run_scenario(
    sc: Scenario,
    checks: CheckMode,
    engine_options: Mapping[str, Any] | None = None,
    tmp_dir: Path | None = None,
) -> Report:
    """Records ``sc.records`` then runs ``sc.probes``, each judged against the agent alone."""
    options = {**sc.options, **(engine_options or {})}
    store: str | None = None
    if sc.store == "sqlite":
        assert tmp_dir is not None, f"{sc.name} needs a directory for its SQLite store"
        tag = "-".join(f"{k}={v}" for k, v in sorted(options.items()))
        store = f"sqlite:///{tmp_dir / f'{sc.name}-{checks}-{tag}.db'}"
    engine = Engine(store, **options)
    box = Box()
    front = FRONTS[sc.front](sc, box, engine, checks)
    outcomes: list[Outcome] = []
    recorded: list[list[str]] = []
    try:
        phases: tuple[tuple[Literal["record", "probe"], Sequence[Run]], ...] = (
            ("record", sc.records),
            ("probe", sc.probes),
        )
        for phase, runs in phases:
            if phase == "probe" and sc.restart:
                assert store is not None, f"{sc.name} restarts: it needs a SQLite store"
                engine.close()
                engine = Engine(store, **{**options, **(sc.probe_options or {})})
                front = FRONTS[sc.front](sc, box, engine, checks)
            for index, run in enumerate(runs):
                box.world, box.log = copy.deepcopy(run.world), []
                alone_answer = _norm(front.alone(run))
                alone_world, alone_calls = box.world, box.log

                box.world, box.log = copy.deepcopy(run.world), []
                error: str | None = None
                result: Result | None = None
                answer: Any = None
                try:
                    result, answer = front.cached(run)
                except Exception as exc:  # the judge reports it; the agent alone did not raise
                    error = f"{type(exc).__name__}: {exc}"
                answer = _norm(answer)
                kind = _kind(result)
                unsafe = error is not None or box.world != alone_world or answer != alone_answer
                shape = [name for name, _ in alone_calls]
                needless = (
                    phase == "probe" and run.harmless and kind != "hit" and not unsafe and shape in recorded
                )
                outcomes.append(
                    Outcome(
                        scenario=sc.name,
                        phase=phase,
                        index=index,
                        harmless=run.harmless,
                        kind=kind,
                        steps_replayed=result.steps_replayed if result is not None else 0,
                        miss_reason=getattr(result.miss_reason, "name", None) if result is not None else None,
                        reason=result.reason if result is not None else None,
                        unsafe=unsafe,
                        needless=needless,
                        engine_calls=box.log,
                        alone_calls=alone_calls,
                        engine_answer=answer,
                        alone_answer=alone_answer,
                        error=error,
                    )
                )
                if phase == "record":
                    recorded.append(shape)
    finally:
        engine.flush()
        events = engine.store.events() if isinstance(engine.store, EventLog) else []
        engine.close()
    return Report(sc, checks, outcomes, events)
