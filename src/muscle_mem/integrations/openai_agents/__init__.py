"""Muscle memory for the OpenAI Agents SDK: ``CachedRunner(engine, agent)`` in place of ``Runner``.

>>> runner = CachedRunner(engine, agent)                  # agent built with agents.Agent, unchanged
>>> result = await runner.run(f"refund order {order}", params={"order": order})
>>> result.final_output, result.to_input_list(), runner.last_result.hit

A miss runs the agent with ``Runner.run`` and records its function-tool calls; a hit replays them
without the model and returns a real ``RunResult`` (replayed call and output items with fresh
``mm_`` call ids, the answer as a message item). After a partial replay the agent resumes with
the replayed calls and their outputs as history. ``wrap_agent`` gives the wrapped agent alone, for
an engine whose agent calls ``Runner.run`` itself.

The instructions (and prompt) of the agent and of its handoff agents, resolved with the call's
``context``, and the tools each offers (name, description, parameters; handoffs too) are part of
the task, by their fingerprint in a ``context:`` tag. Callable instructions and ``is_enabled`` are
read again at each turn: a step replays only if they read as at the recorded step's turn, and a
hit whose answer turn would read otherwise is resumed by the agent. Each replayed step counts as a
model turn against ``max_turns``; a replay that ran a tool the agent stops at
(``tool_use_behavior``) ends the run with its output; a tool with guardrails, or an agent whose
``tool_use_behavior`` is a function, is not replayed (the agent makes that step).

What is recorded: the calls of each ``FunctionTool`` of the agent and of its handoff agents (an
``Agent.as_tool`` sub-agent is one step). A run that also used a hosted tool, an MCP server's
tool, a tool approval or a tripped guardrail is not stored (``last_result`` is None), since a
replay could not repeat it. A tool exception stays an error: the model still gets the SDK's error
message, and the call is not recorded. Tool versions come from the decorated function
(``FunctionTool.__wrapped__``), else from the tool's name, description and schema. The
``ToolContext`` is never recorded: a replay builds one from this call's ``context``.

Not replayed on a hit: guardrails, hooks, handoff callbacks, and writes to server-side
conversations (``previous_response_id``/``conversation_id``); with ``cache_followups=True`` and an
agents ``Session``, the hit's items are added to it as a run would add them. A replayed tool that
needs approval (or is disabled for the run) stops the replay: the agent takes over. A run that
carries earlier conversation (a ``session``, ``previous_response_id``, ``conversation_id``, or a
list input holding more than the user's message) is a different task: it runs uncached unless
``cache_followups=True``. A ``RunState`` (a resumed run) always runs uncached.
"""

from __future__ import annotations

try:
    import agents  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra only
    from muscle_mem.integrations._common import missing_extra

    raise missing_extra("openai-agents", "openai-agents") from exc

from typing import TYPE_CHECKING, Any

from muscle_mem.integrations._common import Checks
from muscle_mem.integrations.openai_agents._runner import CachedRunner, CachedStreamingResult, StreamedRun
from muscle_mem.integrations.openai_agents._tools import AgentGraph

if TYPE_CHECKING:
    from agents import Agent

    from muscle_mem import Engine

__all__ = ["CachedRunner", "CachedStreamingResult", "StreamedRun", "wrap_agent"]


def wrap_agent(engine: Engine, agent: Agent[Any], *, checks: Checks | None = None) -> Agent[Any]:
    """A clone of ``agent`` whose function tools (and its handoff agents') the engine records and replays."""
    return AgentGraph(engine, agent, checks).start
