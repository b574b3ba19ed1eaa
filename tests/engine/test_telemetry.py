"""OpenTelemetry: a span per engine call and per replayed step, and metrics, read by the SDK's in-memory exporters."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from muscle_mem import Check, Engine, current_run
from muscle_mem.telemetry import Telemetry


@dataclass
class Traced:
    """An engine reporting to in-memory exporters, and the desk its tools act on."""

    engine: Engine
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider
    desk: dict[str, Any]

    def finished(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans.get_finished_spans() if s.name == name]

    def points(self) -> dict[str, list[Any]]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        found: dict[str, list[Any]] = {}
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found[metric.name] = list(metric.data.data_points)
        return found


@pytest.fixture
def traced() -> Iterator[Traced]:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry = Telemetry(tracer_provider, MeterProvider(metric_readers=[reader]))
    engine = Engine(telemetry=telemetry)
    desk = {"open": True, "tickets": 0}

    @engine.tool()
    def lookup(email: str) -> str:
        return "usr_" + email.split("@")[0]

    @engine.tool(pre_check=Check.equal(lambda user: desk["open"]))
    def open_ticket(user: str) -> str:
        desk["tickets"] += 1
        return f"T{desk['tickets']}"

    def agent(task: str) -> str:
        user = lookup(task.split()[-1])
        ticket = open_ticket(user)
        run = current_run()
        assert run is not None
        run.add_usage(200, 30, requests=2, model="gpt-4.1")
        return ticket

    engine.set_agent(agent)
    yield Traced(engine, spans, reader, tracer_provider, desk)
    engine.close()


def ask(engine: Engine, email: str) -> Any:
    return engine(f"open a ticket for {email}", params={"email": email})


def test_a_hit_is_a_run_span_with_a_child_span_per_replayed_step(traced: Traced) -> None:
    """A hit's span names the task, its family and template, the steps replayed and the tokens saved."""
    ask(traced.engine, "ada@x.io")
    traced.spans.clear()
    assert ask(traced.engine, "bob@x.io").hit
    (run,) = traced.finished("muscle_mem.run")
    attributes = dict(run.attributes or {})
    assert attributes["muscle_mem.outcome"] == "hit"
    assert attributes["muscle_mem.template"] == "open a ticket for {email}"
    assert attributes["muscle_mem.family"] == attributes["muscle_mem.task_key"]
    assert attributes["muscle_mem.steps_replayed"] == 2
    assert attributes["muscle_mem.tokens_saved"] == 230
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.usage.input_tokens"] == attributes["gen_ai.usage.output_tokens"] == 0
    steps = traced.finished("muscle_mem.step")
    assert [dict(s.attributes or {})["gen_ai.tool.name"] for s in steps] == ["lookup", "open_ticket"]
    assert all(dict(s.attributes or {})["muscle_mem.check"] == "passed" for s in steps)
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in steps)
    assert all(run.start_time <= s.start_time <= s.end_time <= run.end_time for s in steps)  # type: ignore[operator]


def test_a_miss_span_carries_its_reason_and_what_the_agent_spent(traced: Traced) -> None:
    """A miss's span gives the miss reason and the GenAI usage and model of the agent's run."""
    ask(traced.engine, "ada@x.io")
    (run,) = traced.finished("muscle_mem.run")
    attributes = dict(run.attributes or {})
    assert attributes["muscle_mem.outcome"] == "miss"
    assert attributes["muscle_mem.miss_reason"] == "no_trajectory"
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (200, 30)
    assert attributes["gen_ai.request.model"] == "gpt-4.1"
    assert traced.finished("muscle_mem.step") == []


def test_a_partial_replay_span_names_the_step_whose_check_failed(traced: Traced) -> None:
    """The step a failed check stopped is a child span with the check's outcome; the run is partial."""
    ask(traced.engine, "ada@x.io")
    traced.desk["open"] = False
    traced.spans.clear()
    result = ask(traced.engine, "bob@x.io")
    assert not result.hit and result.steps_replayed == 1
    (run,) = traced.finished("muscle_mem.run")
    attributes = dict(run.attributes or {})
    assert attributes["muscle_mem.outcome"] == "partial"
    assert attributes["muscle_mem.miss_reason"] == "pre_check_failed"
    assert attributes["muscle_mem.miss_tool"] == "open_ticket"
    checks = [
        (dict(s.attributes or {})["gen_ai.tool.name"], dict(s.attributes or {})["muscle_mem.check"])
        for s in traced.finished("muscle_mem.step")
    ]
    assert checks == [("lookup", "passed"), ("open_ticket", "pre_check_failed")]


def test_the_run_span_nests_under_the_span_current_at_the_call(traced: Traced) -> None:
    """Called inside a framework's span, the engine's span is its child."""
    with traced.tracer_provider.get_tracer("a framework").start_as_current_span("agent run") as outer:
        ask(traced.engine, "ada@x.io")
    (run,) = traced.finished("muscle_mem.run")
    assert run.parent is not None and run.parent.span_id == outer.get_span_context().span_id


def test_calls_tokens_and_hit_durations_are_counted_through_the_metrics_api(traced: Traced) -> None:
    """Calls are counted by outcome and miss reason, tokens saved and spent, and a hit's duration recorded."""
    ask(traced.engine, "ada@x.io")
    ask(traced.engine, "bob@x.io")
    points = traced.points()
    calls = {tuple(sorted(dict(p.attributes).items())): p.value for p in points["muscle_mem.calls"]}
    assert calls == {
        (("muscle_mem.outcome", "hit"),): 1,
        (("muscle_mem.miss_reason", "no_trajectory"), ("muscle_mem.outcome", "miss")): 1,
    }
    assert [p.value for p in points["muscle_mem.tokens.saved"]] == [230]
    assert [p.value for p in points["muscle_mem.tokens.spent"]] == [230]
    assert [p.count for p in points["muscle_mem.replay.duration"]] == [1]


def test_with_no_sdk_set_up_the_global_providers_take_the_calls_and_nothing_breaks() -> None:
    """``telemetry=True`` reports to the global providers: the API's no-op ones until an SDK is set."""
    engine = Engine(telemetry=True)

    @engine.tool()
    def lookup(email: str) -> str:
        return email

    engine.set_agent(lambda task: lookup(task.split()[-1]))
    assert not engine("find ada@x.io", params={"email": "ada@x.io"}).hit
    assert engine("find bob@x.io", params={"email": "bob@x.io"}).hit


def test_telemetry_must_be_a_bool_or_a_telemetry() -> None:
    """Any other value is refused when the engine is made."""
    with pytest.raises(TypeError, match="telemetry must be a bool"):
        Engine(telemetry="yes")  # type: ignore[arg-type]
