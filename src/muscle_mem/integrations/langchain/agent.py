"""``CachedAgent``: a compiled LangGraph graph with muscle memory.

The graph is ``langchain.agents.create_agent(...)`` or a ``StateGraph`` with a ``ToolNode``. A new task (the input's last user message, with ``params`` and ``tags``) is replayed without the
graph when the engine can; the caller gets the state a run would have returned, and with a
checkpointer the thread holds what a run would have left. Otherwise the graph runs, from where the
replay stopped, and its run is recorded, with what its chat models spent (the ``usage_metadata``
of each response, by model name).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.runnables.config import merge_configs
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel

from muscle_mem import CodecError, Engine, Result, current_run
from muscle_mem.integrations._common import (
    UNREAD,
    Checks,
    acting_context,
    checks_for,
    note_followup_bypass,
    refuse_run,
    tools_offered,
    unknown_checks,
    with_context,
)
from muscle_mem.integrations._turns import turns_of
from muscle_mem.integrations.langchain.messages import (
    CallIds,
    Task,
    answer_messages,
    final_answer,
    graph_input,
    read_task,
    replayed_messages,
    with_ids,
)
from muscle_mem.integrations.langchain.tool_errors import ToolErrors
from muscle_mem.integrations.langchain.tools import (
    RAISED,
    REPLAYED,
    Replayed,
    is_async_only,
    wrap_tool,
    wrapping_of,
)
from muscle_mem.integrations.langchain.usage import TurnMarks, UsageCounter

logger = logging.getLogger(__name__)

FRAMEWORK = "LangGraph"


@dataclass(slots=True)
class _Call:
    """One front-end call: the graph, its input and options, and what the graph returned."""

    agent: CachedAgent
    task: Task
    config: Any
    kwargs: dict[str, Any]
    is_async: bool
    tags: Sequence[str] | None
    """The call's tags, with the one naming the system prompts the model reads (:func:`with_context`)."""
    replayed: list[Replayed] = field(default_factory=list)
    raised: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """The calls that raised through the engine (the tool and its arguments), which it judges itself."""
    state: Any = None
    """The state the graph returned (on a miss)."""


_CALL: ContextVar[_Call | None] = ContextVar("muscle_mem_langchain_call", default=None)


Graph = Pregel[Any, Any, Any, Any]
"""A compiled graph."""


class CachedAgent:
    """A compiled LangGraph graph whose tool calls an engine records and replays.

    >>> agent = CachedAgent(engine, create_agent(model, tools))
    >>> state = agent.invoke({"messages": [("user", "reset ada@x.io")]}, params={"email": "ada@x.io"})
    >>> agent.last_result.hit, state["messages"][-1].text

    The graph's ``ToolNode`` tools are wrapped in place (:func:`wrap_tool`; ``checks`` maps a tool
    name to a Check or a ``(pre, post)`` pair); tools wrapped beforehand with :func:`wrap_tools`
    stay as they are. The engine's agent becomes this module's graph runner (one engine can serve
    several CachedAgents). A run that carries earlier conversation (in the input or in the
    checkpointer's thread) is a different task: it runs uncached unless ``cache_followups=True``.

    Middleware that acts on each run beside the tools (a ``@dynamic_prompt``, a ``before_model`` or
    ``after_model`` hook, a wrapper of model or tool calls) may make the model read what no input
    shows: such a graph runs uncached unless ``context`` is given, a function returning what the
    middleware reads (``lambda: policy.mode``), whose value is then part of the task.
    """

    def __init__(
        self,
        engine: Engine,
        graph: Graph,
        *,
        checks: Checks | None = None,
        cache_followups: bool = False,
        context: Callable[[], Any] | None = None,
    ) -> None:
        if not isinstance(graph, Pregel):
            raise TypeError(f"CachedAgent needs a compiled LangGraph graph, got {type(graph).__name__}")
        self.engine = engine
        self.graph = graph
        self.cache_followups = cache_followups
        self.context = context
        """What the graph's middleware reads besides the input (a function called before each run): part of the task."""
        self._middleware = _middleware(graph)
        self.last_result: Result | None = None
        """The engine's Result of the last call (None when the call ran uncached)."""
        self.tools = _wrap_tool_nodes(engine, graph, checks)
        """The graph's tools found in its ToolNodes, by name, as wrapped."""
        self._tool_nodes = frozenset(name for name, _ in _tool_nodes(graph))
        """The names of the graph's ToolNodes: every other node that starts begins a model turn."""
        self._prompts = _built_in_prompts(graph)
        self._offered = tools_offered(_schema_of(tool) for tool in self.tools.values())
        """The fingerprint of the tools the graph offers its model (the tools do not change once wrapped)."""
        self._end_node: str | None = None
        engine.set_agent(_run_graph)

    # the front end

    def invoke(
        self,
        input: Any,
        config: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """``graph.invoke``, replayed when the engine can: the state a run returns."""
        call = self._call(input, config, kwargs, params, tags, is_async=False)
        if call is not None and self._threaded(config):
            call = self._in_thread(call, self.graph.get_state(config), params)
        if call is None:
            self.last_result = None
            return self.graph.invoke(_as_graph_input(input), config, **kwargs)
        async_only = sorted(name for name, tool in self.tools.items() if is_async_only(tool))
        if async_only:
            raise TypeError(
                f"the graph has async tools ({', '.join(async_only)}): use `await agent.ainvoke(...)`"
            )
        with _scope(call):
            result = self.engine(
                call.task.request, params=params, tags=call.tags, **call.task.extra, **kwargs
            )
        self.last_result = result
        if not result.hit:
            return call.state
        state = self._hit_state(call, result)
        if not self._threaded(config):
            return state
        self.graph.update_state(config, state, as_node=self._last_node())
        return self.graph.get_state(config).values

    async def ainvoke(
        self,
        input: Any,
        config: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """``graph.ainvoke``, replayed when the engine can: the state a run returns."""
        call = self._call(input, config, kwargs, params, tags, is_async=True)
        if call is not None and self._threaded(config):
            call = self._in_thread(call, await self.graph.aget_state(config), params)
        if call is None:
            self.last_result = None
            return await self.graph.ainvoke(_as_graph_input(input), config, **kwargs)
        with _scope(call):
            result = await self.engine.arun(
                call.task.request, params=params, tags=call.tags, **call.task.extra, **kwargs
            )
        self.last_result = result
        if not result.hit:
            return call.state
        state = self._hit_state(call, result)
        if not self._threaded(config):
            return state
        await self.graph.aupdate_state(config, state, as_node=self._last_node())
        return (await self.graph.aget_state(config)).values

    # one call

    def _call(
        self,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        params: Mapping[str, Any] | None,
        tags: Sequence[str] | None,
        *,
        is_async: bool,
    ) -> _Call | None:
        """The state of one call, or None when it runs uncached (logged)."""
        task = read_task(input)
        if isinstance(task, str):
            logger.info("%s run uncached: %s", FRAMEWORK, task)
            return None
        read = acting_context(FRAMEWORK, self._middleware, self.context, "CachedAgent")
        if read is UNREAD:
            return None
        try:
            tags = with_context(
                tags,
                {
                    **task.context,
                    "graph_system": self._prompts,
                    "tools": self._offered,
                    "recursion_limit": _recursion_limit(self.graph, config),
                    "middleware": read,
                    "configurable": _configurable(config),
                },
            )
        except CodecError as exc:
            logger.info("%s run uncached: its system prompts cannot identify the task: %s", FRAMEWORK, exc)
            return None
        if self._has_checkpointer() and not _thread_of(config):
            logger.info(
                "%s run uncached: the graph has a checkpointer and the config names no thread", FRAMEWORK
            )
            return None
        if self._threaded(config) and self._last_node() is None:
            logger.info(
                "%s run uncached: no single node ends the graph, so a replay could not be written to the thread",
                FRAMEWORK,
            )
            return None
        call = _Call(self, task, config, kwargs, is_async, tags)
        return self._followup(call, params) if task.history else call

    def _in_thread(self, call: _Call, snapshot: Any, params: Mapping[str, Any] | None) -> _Call | None:
        """The call, unless the checkpointer's thread makes it a follow-up or a resume."""
        if snapshot.next:
            logger.info("%s run uncached: the thread is waiting to be resumed", FRAMEWORK)
            return None
        values = snapshot.values
        if isinstance(values, Mapping) and values.get("messages"):
            return self._followup(call, params)
        return call

    def _followup(self, call: _Call, params: Mapping[str, Any] | None) -> _Call | None:
        """A call that carries earlier conversation: cached only with ``cache_followups``."""
        if self.cache_followups:
            return call
        note_followup_bypass(FRAMEWORK, str(call.task.request), params)
        return None

    @staticmethod
    def _hit_state(call: _Call, result: Result) -> dict[str, Any]:
        """The state of a hit: the input's messages, a turn per replayed call, the final answer."""
        final, others = answer_messages(result.output)
        messages = [*call.task.messages, *replayed_messages(result.calls, CallIds(call.replayed)), final]
        return {**call.task.state, **others, "messages": with_ids(messages)}

    # the graph's checkpointer

    def _has_checkpointer(self) -> bool:
        return isinstance(self.graph.checkpointer, BaseCheckpointSaver)

    def _threaded(self, config: Any) -> bool:
        return self._has_checkpointer() and _thread_of(config)

    def _last_node(self) -> str | None:
        """The node a finished run's last update comes from: the one before the end that is no ToolNode."""
        if self._end_node is None:
            drawn = self.graph.get_graph()
            tool_nodes = {name for name, node in self.graph.nodes.items() if isinstance(node.bound, ToolNode)}
            ends = sorted({e.source for e in drawn.edges if e.target == "__end__"} - tool_nodes)
            self._end_node = ends[0] if len(ends) == 1 else ""
        return self._end_node or None


@contextmanager
def _scope(call: _Call) -> Iterator[None]:
    """The front-end call in progress in this context, and where its replayed calls are noted."""
    call_token = _CALL.set(call)
    notes_token = REPLAYED.set(call.replayed)
    raised_token = RAISED.set(call.raised)
    try:
        yield
    finally:
        RAISED.reset(raised_token)
        REPLAYED.reset(notes_token)
        _CALL.reset(call_token)


def _run_graph(*_args: Any, **_kwargs: Any) -> Any:
    """The engine's agent: runs the graph of the front-end call in progress, from where the replay stopped."""
    call = _CALL.get()
    if call is None:
        raise RuntimeError("this engine's agent runs LangGraph graphs: call it through CachedAgent.invoke")
    run = current_run()
    done = run.steps if run is not None else ()
    history = replayed_messages(done, CallIds(call.replayed)) if done else []
    graph_in = graph_input(call.task, history)
    agent = call.agent
    watch = _Watch(agent.engine, call.raised, TurnMarks(run, agent._tool_nodes))
    config = _resumed_limit(agent.graph, call.config, len(turns_of(done)), agent._tool_nodes)
    if call.is_async:
        return _finish_async(call, watch, graph_in, config)
    try:
        call.state = call.agent.graph.invoke(graph_in, watch.config(config), **call.kwargs)
    finally:
        watch.usage.report()
    return watch.answer(call.state)


async def _finish_async(call: _Call, watch: _Watch, graph_in: dict[str, Any], config: Any) -> Any:
    try:
        call.state = await call.agent.graph.ainvoke(graph_in, watch.config(config), **call.kwargs)
    finally:
        watch.usage.report()
    return watch.answer(call.state)


@dataclass(slots=True)
class _Watch:
    """What a graph run is watched for: what its models spent, the tool errors they read."""

    engine: Engine
    raised: list[tuple[str, dict[str, Any]]]
    turns: TurnMarks
    usage: UsageCounter = field(default_factory=UsageCounter)
    errors: ToolErrors = field(default_factory=ToolErrors)

    def config(self, config: Any) -> Any:
        """The run's config with the watching callbacks among its callbacks."""
        return merge_configs(config, {"callbacks": [self.usage, self.errors, self.turns]})

    def answer(self, state: Any) -> Any:
        """The storable answer of a finished run; a run without one, or resting on an unrecorded error, is kept out."""
        run = current_run()
        problem = self.errors.problem(run.steps if run is not None else (), self.raised)
        if problem is not None:
            refuse_run(self.engine, f"{problem}: the run is not stored")
        if not isinstance(state, Mapping):
            refuse_run(self.engine, f"the graph returned {type(state).__name__}, not a state dict")
            return None
        answer, problem = final_answer(state)
        if problem is not None:
            refuse_run(self.engine, f"{problem}: the run is not stored")
        return answer


def _wrap_tool_nodes(engine: Engine, graph: Graph, checks: Checks | None) -> dict[str, BaseTool]:
    """Wrap the tools of the graph's ToolNodes (subgraphs included) in place; the tools by name."""
    tool_nodes = [node for _, node in _tool_nodes(graph)]
    names = {name for tool_node in tool_nodes for name in tool_node.tools_by_name}
    if checks and not tool_nodes:
        raise ValueError(
            "checks were given but the graph has no ToolNode to find its tools in: wrap the tools with "
            "wrap_tools(engine, tools, checks=...) before building the graph"
        )
    unknown_checks(checks, names)
    wrapped: list[tuple[dict[str, BaseTool], str, BaseTool]] = []
    for tool_node in tool_nodes:
        for name, tool in tool_node.tools_by_name.items():
            wrapping = wrapping_of(tool)
            pre, post = checks_for(checks, name)
            if wrapping is not None and wrapping.engine is not engine:
                raise ValueError(
                    f"tool {name!r} of this graph records into another engine already: one graph, one engine"
                )
            if wrapping is None or pre or post:
                tool = wrap_tool(engine, tool, pre_check=pre, post_check=post)
            wrapped.append((tool_node.tools_by_name, name, tool))
    for by_name, name, tool in wrapped:  # all or nothing: a tool that cannot be wrapped raised above
        by_name[name] = tool
    return {name: tool for _, name, tool in wrapped}


def _tool_nodes(graph: Graph) -> list[tuple[str, ToolNode]]:
    """The graph's ToolNodes (subgraphs included), each with its name: the nodes that run calls, deciding none."""
    graphs = [graph, *(sub for _, sub in graph.get_subgraphs(recurse=True) if isinstance(sub, Pregel))]
    return [
        (name, node.bound)
        for g in graphs
        for name, node in g.nodes.items()
        if isinstance(node.bound, ToolNode)
    ]


_HOOKS = frozenset({"before_agent", "before_model", "after_model", "after_agent"})
"""The middleware hooks ``create_agent`` makes nodes of (``Name.before_model``)."""


def _middleware(graph: Graph) -> list[str]:
    """What of the graph's middleware acts on a run beside its tools: its hook nodes, and wrappers of model or tool calls."""
    graphs = [graph, *(sub for _, sub in graph.get_subgraphs(recurse=True) if isinstance(sub, Pregel))]
    found: set[str] = set()
    for name, node in ((name, node) for g in graphs for name, node in g.nodes.items()):
        owner, _, hook = name.rpartition(".")
        if owner and hook in _HOOKS:
            found.add(name)
        bound = node.bound
        if (
            getattr(bound, "_wrap_tool_call", None) is not None
            or getattr(bound, "_awrap_tool_call", None) is not None
        ):
            found.add("a wrapper of tool calls")
        func = getattr(bound, "func", None)
        code, cells = getattr(func, "__code__", None), getattr(func, "__closure__", None)
        if code is None or not cells:
            continue
        for held in ("wrap_model_call_handler", "awrap_model_call_handler"):
            cell = dict(zip(code.co_freevars, cells, strict=True)).get(held)
            try:
                if cell is not None and cell.cell_contents is not None:
                    found.add("a wrapper of model calls, such as a @dynamic_prompt")
            except ValueError:  # an empty cell
                continue
    return sorted(found)


def _built_in_prompts(graph: Graph) -> list[Any]:
    """The system prompts built into the graph's model nodes (``create_agent(system_prompt=...)``).

    ``create_agent`` keeps its prompt in its model node's closure, as ``system_message``; a prompt a
    middleware makes for each model call cannot be seen before the run.
    """
    graphs = [graph, *(sub for _, sub in graph.get_subgraphs(recurse=True) if isinstance(sub, Pregel))]
    found: list[Any] = []
    for node in (node for g in graphs for node in g.nodes.values()):
        func = getattr(node.bound, "func", None)
        code, cells = getattr(func, "__code__", None), getattr(func, "__closure__", None)
        if code is None or not cells:
            continue
        cell = dict(zip(code.co_freevars, cells, strict=True)).get("system_message")
        try:
            message = cell.cell_contents if cell is not None else None
        except ValueError:  # an empty cell
            continue
        if isinstance(message, SystemMessage):
            found.append(message.content)
    return found


def _schema_of(tool: BaseTool) -> tuple[str, str, Any]:
    """What a model is shown of a tool: its name, description and argument schema."""
    shown = convert_to_openai_tool(tool)["function"]
    return tool.name, tool.description, shown.get("parameters")


def _resumed_limit(graph: Graph, config: Any, turns: int, tool_nodes: frozenset[str]) -> Any:
    """The config a graph resumes with after ``turns`` replayed model turns: its step limit less the steps they took.

    The graph alone spent the steps of each turn's loop (the model node, the tool node, the nodes
    between them) before reaching where the replay hands over; resumed with its whole limit, it
    could go on where it alone would have stopped.
    """
    limit = _recursion_limit(graph, config)
    if not turns or not isinstance(limit, int):
        return config
    spent = turns * _steps_per_turn(graph, tool_nodes)
    return merge_configs(config, {"recursion_limit": max(limit - spent, 1)})


def _steps_per_turn(graph: Graph, tool_nodes: frozenset[str]) -> int:
    """The steps one model turn takes in the graph: the nodes on the shortest loop through a tool node (2 if none)."""
    drawn = graph.get_graph()
    following: dict[str, list[str]] = {}
    for edge in drawn.edges:
        following.setdefault(edge.source, []).append(edge.target)
    best: int | None = None
    for start in tool_nodes:
        frontier, reached, steps = [start], {start}, 0
        while frontier:
            steps += 1
            ahead = {n for node in frontier for n in following.get(node, ())}
            if start in ahead:
                best = steps if best is None else min(best, steps)
                break
            frontier = [n for n in ahead if n not in reached]
            reached.update(frontier)
    return best if best is not None else 2


def _recursion_limit(graph: Graph, config: Any) -> Any:
    """The run's step limit, when the call's config or the graph's own sets one (None for the default).

    The limit stops a run after so many steps, so it is part of the task: a replay of a run made
    under another limit could make calls the graph alone would not reach.
    """
    for given in (config, graph.config):
        if isinstance(given, Mapping) and given.get("recursion_limit") is not None:
            return given["recursion_limit"]
    return None


_CHECKPOINT_KEYS = frozenset({"thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map"})


def _configurable(config: Any) -> Any:
    """The call's ``config["configurable"]`` values but those naming a checkpoint: part of the task.

    A model node may build its prompt from them (a hand-built ``StateGraph``'s node reads its
    config), which no input shows; a value the engine cannot encode runs the call uncached.
    """
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(configurable, Mapping):
        return None
    return {
        k: v for k, v in configurable.items() if k not in _CHECKPOINT_KEYS and not str(k).startswith("__")
    } or None


def _thread_of(config: Any) -> bool:
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    return isinstance(configurable, Mapping) and configurable.get("thread_id") is not None


def _as_graph_input(graph_in: Any) -> Any:
    """A str input as the graph takes it (a user message); any other input as given."""
    return {"messages": [("user", graph_in)]} if isinstance(graph_in, str) else graph_in
