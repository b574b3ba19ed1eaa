"""pydantic-ai with its own OpenTelemetry instrumentation: the engine's spans nest under the agent's."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel

from muscle_mem import Engine
from muscle_mem.integrations.pydantic_ai import MuscleMem
from muscle_mem.telemetry import Telemetry


def lookup_user(email: str) -> str:
    """Find a user by email."""
    return "usr_" + email.split("@")[0]


def parent_name(span: ReadableSpan, spans: list[ReadableSpan]) -> str | None:
    by_id = {s.context.span_id: s.name for s in spans}
    return by_id.get(span.parent.span_id) if span.parent is not None else None


def test_the_run_span_of_a_miss_and_of_a_hit_is_a_child_of_the_agents_own_span() -> None:
    """Each engine call's span sits under pydantic-ai's ``invoke_agent`` span; the hit's steps under it."""
    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    engine = Engine(telemetry=Telemetry(provider))
    agent = Agent(
        TestModel(),
        tools=[lookup_user],
        capabilities=[
            Instrumentation(InstrumentationSettings(tracer_provider=provider)),
            MuscleMem(engine, params=lambda ctx: ctx.metadata),
        ],
    )
    agent.run_sync("who is ada@x.io", metadata={"email": "ada@x.io"})
    agent.run_sync("who is ada@x.io", metadata={"email": "ada@x.io"})  # TestModel passes no param on
    spans = list(exporter.get_finished_spans())
    runs = [s for s in spans if s.name == "muscle_mem.run"]
    assert [dict(s.attributes or {})["muscle_mem.outcome"] for s in runs] == ["miss", "hit"]
    assert {parent_name(s, spans) for s in runs} == {"invoke_agent agent"}
    steps = [s for s in spans if s.name == "muscle_mem.step"]
    assert [parent_name(s, spans) for s in steps] == ["muscle_mem.run"]
