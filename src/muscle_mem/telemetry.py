"""OpenTelemetry spans and metrics of engine calls (``Engine(telemetry=True)``, the ``otel`` extra).

Only the OpenTelemetry API is used: the application's SDK and exporter decide where the spans and
metrics go (with none set up, the API's no-op implementations take them). Each engine call is a
``muscle_mem.run`` span, a child of the span current when the call was made (the framework's, when
it has one), made as the call ends; each replayed step is a ``muscle_mem.step`` child span, laid end
to end from the call's start with the step's own duration. Attribute names follow the OpenTelemetry
GenAI semantic conventions where one applies (``gen_ai.operation.name``, ``gen_ai.tool.name``,
``gen_ai.usage.*``, ``gen_ai.request.model``); the others are ``muscle_mem.*``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from muscle_mem.cache.ledger import family_of
from muscle_mem.record._run import Call, Run
from muscle_mem.replay._drivers import Ending

try:
    from opentelemetry import metrics, trace
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise ImportError("Engine(telemetry=True) needs OpenTelemetry: pip install 'muscle-mem[otel]'") from exc

SCOPE = "muscle_mem"
"""The instrumentation scope of the tracer and the meter."""


class Telemetry:
    """Reports engine calls to the OpenTelemetry API: a span per call and per replayed step, and metrics.

    ``Engine(telemetry=True)`` uses the global providers; ``Engine(telemetry=Telemetry(tracer_provider,
    meter_provider))`` others.
    """

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        from muscle_mem import __version__

        self._tracer = trace.get_tracer(SCOPE, __version__, tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, meter_provider)
        self._calls = meter.create_counter(
            "muscle_mem.calls",
            unit="{call}",
            description="Engine calls, by outcome (hit, partial, miss) and miss reason",
        )
        self._tokens_saved = meter.create_counter(
            "muscle_mem.tokens.saved",
            unit="{token}",
            description="LLM tokens the replayed runs spent when recorded",
        )
        self._tokens_spent = meter.create_counter(
            "muscle_mem.tokens.spent",
            unit="{token}",
            description="LLM tokens the agent reported spending on misses",
        )
        self._replay = meter.create_histogram(
            "muscle_mem.replay.duration",
            unit="s",
            description="Duration of the engine calls that were full hits",
        )

    def hit(self, run: Run, started: float, tokens_saved: int, trajectory_id: str) -> None:
        """Report a full hit; ``started`` is the call's start (``time.perf_counter()``)."""
        elapsed = time.perf_counter() - started
        attributes: dict[str, Any] = {
            "muscle_mem.outcome": "hit",
            "muscle_mem.tokens_saved": tokens_saved,
            "muscle_mem.trajectory_id": trajectory_id,
            "gen_ai.usage.input_tokens": 0,
            "gen_ai.usage.output_tokens": 0,
        }
        self._span(run, elapsed, attributes, None)
        self._calls.add(1, {"muscle_mem.outcome": "hit"})
        self._tokens_saved.add(tokens_saved)
        self._replay.record(elapsed)

    def miss(self, run: Run, started: float, ending: Ending, replayed: int, *, raised: bool = False) -> None:
        """Report a miss (or a partial replay): why, and what the agent spent."""
        outcome = "partial" if replayed else "miss"
        reason = ending.kind.value if ending.kind is not None else "none"
        attributes: dict[str, Any] = {"muscle_mem.outcome": outcome, "muscle_mem.miss_reason": reason}
        if ending.tool is not None:
            attributes["muscle_mem.miss_tool"] = ending.tool
        if ending.reason is not None:
            attributes["muscle_mem.reason"] = ending.reason
        if raised:
            attributes["error.type"] = "agent_raised"
        usage = run.usage or {}
        attributes["gen_ai.usage.input_tokens"] = sum(counts[0] for counts in usage.values())
        attributes["gen_ai.usage.output_tokens"] = sum(counts[1] for counts in usage.values())
        models = [model for model in usage if model]
        if len(models) == 1:
            attributes["gen_ai.request.model"] = models[0]
        self._span(run, time.perf_counter() - started, attributes, ending)
        self._calls.add(1, {"muscle_mem.outcome": outcome, "muscle_mem.miss_reason": reason})
        if run.tokens:
            self._tokens_spent.add(run.tokens)

    def _span(self, run: Run, elapsed: float, attributes: dict[str, Any], ending: Ending | None) -> None:
        """The call's span and its steps' spans, made now with the times they had."""
        end = time.time_ns()
        start = end - int(elapsed * 1e9)
        replayed = [c for c in run.calls if c.replayed]
        attributes |= {
            "gen_ai.operation.name": "invoke_agent",
            "muscle_mem.task_key": run.task_key,
            "muscle_mem.family": family_of(run.task_key),
            "muscle_mem.template": run.task,
            "muscle_mem.steps_replayed": len(replayed),
        }
        span = self._tracer.start_span("muscle_mem.run", start_time=start, attributes=attributes)
        context = trace.set_span_in_context(span)
        at = self._steps(replayed, start, context)
        if ending is not None and ending.tool is not None and ending.kind is not None:
            failed = self._tracer.start_span("muscle_mem.step", context, start_time=min(at, end))
            failed.set_attributes(_step(ending.tool, len(replayed), ending.kind.value))
            failed.end(end_time=end)
        span.end(end_time=end)

    def _steps(self, calls: Sequence[Call], at: int, context: Any) -> int:
        """A span per replayed step, end to end from ``at`` (ns); the time the last one ends."""
        for index, call in enumerate(calls):
            span = self._tracer.start_span("muscle_mem.step", context, start_time=at)
            span.set_attributes(_step(call.tool, index, "passed"))
            at += int(call.seconds * 1e9)
            span.end(end_time=at)
        return at


def _step(tool: str, index: int, check: str) -> dict[str, Any]:
    """A step span's attributes: the tool, its place in the run, and what its checks said."""
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "muscle_mem.step": index,
        "muscle_mem.check": check,
    }
