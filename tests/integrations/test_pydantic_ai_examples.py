"""pydantic-ai's own examples, run plain and with the ``MuscleMem`` capability: a miss, then a hit.

Each example (``framework_examples/pydantic_ai_examples_2_62``, unchanged) runs on pydantic-ai's
``TestModel`` (it calls every tool, then answers), three times: plain, then with ``MuscleMem`` added
to the agent's own capabilities (``agent.override``), twice. Every run's messages are reduced to
their shape (each message's kind, each part's kind and fields without ids and times) with its output
and output type, and the three runs must agree.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, RunContext, models
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models.test import TestModel
from pydantic_ai.run import AgentRunResult

from muscle_mem import Engine
from muscle_mem.integrations.pydantic_ai import MuscleMem

EXAMPLES = Path(__file__).parent / "framework_examples" / "pydantic_ai_examples_2_62"
LEFT_OUT = ("tool_call_id", "timestamp", "id", "provider_details", "provider_name", "provider_call_id")


def load(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """An example module, imported afresh from its file (its agent is a module global).

    Its agent names a hosted model ("openai:…", "groq:…"), which pydantic-ai builds when the agent
    is made: a TestModel stands in for it meanwhile (each run overrides the model anyway).
    """
    spec = importlib.util.spec_from_file_location(f"pydantic_ai_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    with monkeypatch.context() as patch:
        patch.setattr(models, "infer_model", lambda model, *args, **kwargs: TestModel())
        spec.loader.exec_module(module)
    return module


def shape(result: AgentRunResult[Any]) -> tuple[Any, ...]:
    """A run's messages part by part, field by field (ids and times left out), and its output."""
    messages = []
    for message in result.all_messages():
        parts = []
        for part in message.parts:
            fields = {k: v for k, v in vars(part).items() if k not in LEFT_OUT}
            if isinstance(part, ToolCallPart):
                fields["args"] = part.args_as_dict()
            parts.append((type(part).__name__, fields))
        messages.append((type(message).__name__, message.kind, parts))
    return (messages, type(result.output).__name__, result.output)


@dataclass
class Observed(AbstractCapability[Any]):
    """Notes the shape of every run of the agent it is given to."""

    shapes: list[tuple[Any, ...]] = field(default_factory=list)

    async def after_run(self, ctx: RunContext[Any], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        self.shapes.append(shape(result))
        return result


def plain_miss_hit(agent: Agent[Any, Any], run: Callable[[], Coroutine[Any, Any, None] | None]) -> list[Any]:
    """``run()`` plain, then with MuscleMem twice (one engine): every run misses, then hits, same shapes."""
    own = list(agent.root_capability.capabilities)
    engine = Engine()
    memory = MuscleMem(engine)
    shapes: list[list[tuple[Any, ...]]] = []
    for capabilities in ([], [memory], [memory]):
        observed = Observed()
        with agent.override(model=TestModel(), capabilities=[observed, *own, *capabilities]):
            outcome = run()
            if outcome is not None:
                asyncio.run(outcome)
        shapes.append(observed.shapes)
    plain, miss, hit = shapes
    assert plain and plain == miss == hit
    assert (engine.metrics.misses, engine.metrics.hits) == (len(plain), len(plain))
    return plain


def test_bank_support_example_tools_instructions_and_structured_output_hit_with_the_same_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bank = load("bank_support", monkeypatch)
    with sqlite3.connect(":memory:") as con:
        bank.cur = con.cursor()  # the example's __main__ block makes this global, then asks twice
        bank.cur.execute("CREATE TABLE customers(id, name, balance)")
        bank.cur.execute("INSERT INTO customers VALUES (123, 'John', 123.45)")
        deps = bank.SupportDependencies(customer_id=123, db=bank.DatabaseConn(sqlite_conn=con))

        def run() -> None:
            bank.support_agent.run_sync("What is my balance?", deps=deps)
            bank.support_agent.run_sync("I just lost my card!", deps=deps)

        shapes = plain_miss_hit(bank.support_agent, run)
    assert [output_type for _, output_type, _ in shapes] == ["SupportOutput", "SupportOutput"]
    first_call = next(part for _, kind, parts in shapes[0][0] if kind == "response" for part in parts)
    assert (first_call[0], first_call[1]["tool_name"]) == ("ToolCallPart", "customer_balance")


def test_roulette_wheel_example_streamed_runs_with_a_bool_output_hit_with_the_same_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    roulette = load("roulette_wheel", monkeypatch)
    shapes = plain_miss_hit(roulette.roulette_agent, roulette.main)
    assert [(output_type, output) for _, output_type, output in shapes] == [("bool", False), ("bool", False)]
