"""What an agent reports of its model calls: tokens in and out, requests and model, into its run."""

from __future__ import annotations

from typing import Any

import pytest

from muscle_mem import Engine, current_run


def reporting(*reports: tuple[Any, ...]) -> Engine:
    """An engine whose agent reports each ``(input, output, requests, model)``, then answers."""
    engine = Engine()

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        for input_tokens, output_tokens, requests, model in reports:
            run.add_usage(input_tokens, output_tokens, requests=requests, model=model)
        return "done"

    engine.set_agent(agent)
    return engine


def test_reports_add_up_by_model_into_the_runs_tokens_and_its_event() -> None:
    """Each report adds to the run's tokens; the miss's event keeps the split per model, in order."""
    engine = reporting((100, 10, 1, "gpt-4.1"), (50, 5, 1, "gpt-4.1-mini"), (100, 20, 2, "gpt-4.1"))
    result = engine("a task")
    assert result.tokens_spent == engine.metrics.agent_tokens == 285
    engine.flush()
    (event,) = engine.store.events()  # type: ignore[attr-defined]
    assert event.usage == (("gpt-4.1", 200, 30, 3), ("gpt-4.1-mini", 50, 5, 1))
    assert (event.input_tokens, event.output_tokens, event.requests) == (250, 35, 4)


@pytest.mark.parametrize(
    ("report", "error"),
    [
        ((10.5, 3, 1, None), "input_tokens must be an int"),
        ((10, -3, 1, None), "output_tokens must be an int"),
        ((10, 3, True, None), "requests must be an int"),
        ((10, 3, 1, 4), "model must be a str"),
    ],
)
def test_a_count_that_is_not_a_whole_number_or_a_model_not_named_by_text_is_refused(
    report: tuple[Any, ...], error: str
) -> None:
    """Counts are ints >= 0 (not bools), a model is named by a str: anything else raises, saying which."""
    with pytest.raises((ValueError, TypeError), match=error):
        reporting(report)("a task")


async def test_a_session_takes_usage_while_its_run_goes_on_and_refuses_it_after() -> None:
    """Usage reported after the session's run ended would be lost: it is refused."""
    engine = Engine()

    @engine.tool()
    def lookup(email: str) -> str:
        return email

    async with engine.session("who is ada@x.io", params={"email": "ada@x.io"}) as session:
        await session.call(lookup, "ada@x.io")
        session.add_usage(10, 2, model="gpt-4.1")
        session.end("ada")
    assert engine.metrics.agent_tokens == 12
    with pytest.raises(RuntimeError, match="no run in progress"):
        session.add_usage(10, 2)
