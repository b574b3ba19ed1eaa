"""The OpenAI Agents SDK's own examples, run plain and through ``CachedRunner``: a miss, then a hit.

Each example (``framework_examples/openai_agents_0_24``, unchanged) runs its ``main()`` three times
on the SDK's ``ScriptedModel``: with the SDK's ``Runner``, then with a stand-in for ``Runner`` that
sends each call through a ``CachedRunner`` (one engine per agent), twice. Every result is reduced
to its shape (its class, the last agent, each item's kind, agent and fields without ids, the final
output and its type, the input list's kinds, the streamed events) and the three runs must agree.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, ItemHelpers, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from muscle_mem import Engine
from muscle_mem.integrations.openai_agents import CachedRunner

set_tracing_disabled(True)

EXAMPLES = Path(__file__).parent / "framework_examples" / "openai_agents_0_24"


def load(name: str) -> ModuleType:
    """An example module, imported afresh from its file (its agents are module globals)."""
    spec = importlib.util.spec_from_file_location(f"openai_agents_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def shape(result: Any, events: list[tuple[str, str | None]] | None) -> tuple[Any, ...]:
    """What a caller of ``Runner`` sees of a result, field by field, ids left out."""
    items = []
    for item in result.new_items:
        raw = item.raw_item
        fields = raw if isinstance(raw, dict) else raw.model_dump(exclude_none=True)
        kept = {k: v for k, v in fields.items() if k not in ("id", "call_id")}
        if item.type == "message_output_item":
            kept = {"text": ItemHelpers.text_message_output(item)}
        agents = tuple(
            getattr(getattr(item, name, None), "name", None)
            for name in ("agent", "source_agent", "target_agent")
        )
        items.append((type(item).__name__, agents, kept, getattr(item, "output", None)))
    inputs = [
        (i.get("type"), i.get("role"), i.get("name"), i.get("content") if i.get("role") == "user" else None)
        for i in result.to_input_list()
    ]
    final = result.final_output
    return (result.last_agent.name, items, (type(final).__name__, final), inputs, events)


class Recorder:
    """Stands in for the example's ``Runner``: runs each call plainly or through a CachedRunner."""

    def __init__(self, cached: dict[int, CachedRunner] | None) -> None:
        self.cached = cached
        """One CachedRunner per agent (kept across runs), or None to run with the SDK's Runner."""
        self.shapes: list[tuple[Any, ...]] = []
        self.hits: list[bool] = []

    def _runner(self, agent: Agent[Any]) -> CachedRunner:
        assert self.cached is not None
        if id(agent) not in self.cached:
            self.cached[id(agent)] = CachedRunner(Engine(), agent, cache_followups=True)
        return self.cached[id(agent)]

    async def run(self, agent: Agent[Any], input: Any, **kwargs: Any) -> Any:
        if self.cached is None:
            result = await Runner.run(agent, input, **kwargs)
        else:
            runner = self._runner(agent)
            result = await runner.run(input, **kwargs)
            assert runner.last_result is not None
            self.hits.append(runner.last_result.hit)
        self.shapes.append(shape(result, None))
        return result

    def run_streamed(self, agent: Agent[Any], input: Any, **kwargs: Any) -> Streamed:
        if self.cached is None:
            return Streamed(self, Runner.run_streamed(agent, input, **kwargs), None)
        runner = self._runner(agent)
        return Streamed(self, runner.run_streamed(input, **kwargs), runner)


class Streamed:
    """A streamed result as the example uses it, its events noted as they pass."""

    def __init__(self, recorder: Recorder, streamed: Any, runner: CachedRunner | None) -> None:
        self._recorder, self._streamed, self._runner = recorder, streamed, runner

    async def stream_events(self) -> AsyncIterator[Any]:
        seen = []
        async for event in self._streamed.stream_events():
            if event.type != "raw_response_event":
                seen.append((event.type, getattr(event, "name", None) or event.new_agent.name))
            yield event
        if self._runner is not None:
            assert self._runner.last_result is not None
            self._recorder.hits.append(self._runner.last_result.hit)
        self._recorder.shapes.append(shape(self._streamed, seen))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._streamed, name)


async def plain_miss_hit(name: str, script: list[Any], hit_script: list[Any]) -> list[Recorder]:
    """``main()`` plain, then through CachedRunners twice (a miss, then a hit); every script used up.

    One ScriptedModel serves every agent of the example (the runners' clones keep it), given each
    run's steps in turn; ``Runner`` in the example is stood in for.
    """
    module = load(name)
    model = ScriptedModel()
    for value in vars(module).values():
        if isinstance(value, Agent):
            value.model = model
    plain, miss = Recorder(None), Recorder({})
    hit = Recorder(miss.cached)
    for recorder, steps in ((plain, script), (miss, script), (hit, hit_script)):
        model.extend(steps)
        module.Runner = recorder
        random.seed(7)
        await module.main()
        assert model.remaining_steps == 0, (name, recorder.hits)
    assert plain.shapes == miss.shapes == hit.shapes
    return [plain, miss, hit]


async def test_tools_example_a_function_tool_returning_a_model_hits_with_the_same_items() -> None:
    script = [
        [function_call("get_weather", {"city": "Tokyo"}, call_id="c1")],
        [assistant_message("The weather in Tokyo is sunny.")],
    ]
    _, miss, hit = await plain_miss_hit("tools", script, [])
    assert (miss.hits, hit.hits) == ([False], [True])
    kinds = [item[0] for item in hit.shapes[0][1]]
    assert kinds == ["ToolCallItem", "ToolCallOutputItem", "MessageOutputItem"]
    assert type(hit.shapes[0][1][1][3]).__name__ == "Weather"  # the tool's own return value


async def test_message_filter_streaming_example_its_tool_run_hits_and_every_run_keeps_its_shape() -> None:
    chat = [assistant_message("Hi Sora.")]
    numbers = [[function_call("random_number_tool", {"max": 100}, call_id="c1")], [assistant_message("37.")]]
    city = [assistant_message("About 8.5 million.")]
    spanish = [
        [function_call("transfer_to_spanish_assistant", {}, call_id="c2")],
        [assistant_message("Vives en Nueva York.")],
    ]
    script = [chat, *numbers, city, *spanish]
    # only the run with a function tool call is stored: the others run the model every time
    _, miss, hit = await plain_miss_hit("message_filter_streaming", script, [chat, city, *spanish])
    assert (miss.hits, hit.hits) == ([False] * 4, [False, True, False, False])
    assert hit.shapes[3][4][:4] == [
        ("agent_updated_stream_event", "Assistant"),
        ("run_item_stream_event", "handoff_requested"),
        ("run_item_stream_event", "handoff_occured"),
        ("agent_updated_stream_event", "Spanish Assistant"),
    ]
    assert hit.shapes[3][0] == "Spanish Assistant"


async def test_agents_as_tools_structured_example_a_sub_agent_step_hits_and_runs_the_sub_agent() -> None:
    arguments = {"text": "Hola", "source": "Spanish", "target": "French"}
    direct = [assistant_message("Bonjour")]
    script = [
        direct,
        [function_call("translate_text", arguments, call_id="c1")],
        [assistant_message("Bonjour")],  # the translator, run by the orchestrator's tool
        [assistant_message("In French: Bonjour")],
    ]
    # the direct run has no tool call (never stored); the orchestrator's hit replays its one step,
    # the translator as a tool, which calls the model once more
    _, miss, hit = await plain_miss_hit(
        "agents_as_tools_structured", script, [direct, [assistant_message("Bonjour")]]
    )
    assert (miss.hits, hit.hits) == ([False, False], [False, True])
