"""LangChain and LangGraph: tools an engine records and replays, and ``CachedAgent`` for a compiled graph.

``wrap_tool(engine, tool)`` / ``wrap_tools(engine, tools, checks=...)`` give tools whose calls the
engine records; ``CachedAgent(engine, graph)`` runs a graph (``langchain.agents.create_agent`` or a
``StateGraph`` with a ``ToolNode``) with ``invoke``/``ainvoke`` that replay a task when they can and
return the state a run would have returned. Needs ``pip install 'muscle-mem[langchain]'``.
"""

from muscle_mem.integrations._common import missing_extra

try:
    import langchain_core  # noqa: F401
    import langgraph  # noqa: F401
except ImportError as exc:
    raise missing_extra("langchain-core and langgraph", "langchain") from exc

from muscle_mem.integrations.langchain.agent import CachedAgent
from muscle_mem.integrations.langchain.tools import wrap_tool, wrap_tools

__all__ = ["CachedAgent", "wrap_tool", "wrap_tools"]
