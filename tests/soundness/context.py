"""The agent's own context: today's date in its prompt is part of the task, or the replay stops."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from .harness import Answer, Call, Front, Run, Scenario, Step, Tool
from .kit import done


def schedule(w: dict[str, Any], what: str, date: str) -> str:
    w["scheduled"].append((what, date))
    return "scheduled"


def list_sprints(w: dict[str, Any]) -> list[str]:
    return list(w["sprints"])


TOOLS = [
    Tool("list_sprints", list_sprints, check=lambda w: True),
    Tool("schedule", schedule, check=lambda w, what, date: w["calendar_up"]),
]


def _date_in(text: str) -> dt.date:
    found = re.search(r"\d{4}-\d{2}-\d{2}", text)
    assert found, f"no date in {text!r}"
    return dt.date.fromisoformat(found.group(0))


def _policy(source: str) -> Any:
    def policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
        start = _date_in(text if source == "task" else ctx)
        if not done(h, "list_sprints"):
            return Call("list_sprints")
        review = (start + dt.timedelta(days=14)).isoformat()
        if not done(h, "schedule"):
            return Call("schedule", {"what": "sprint review", "date": review})
        return Answer(f"Sprint review on {review}.")

    return policy


def _world(today: str) -> dict[str, Any]:
    return {"today": today, "sprints": ["s1", "s2"], "scheduled": [], "calendar_up": True}


def _today(w: dict[str, Any]) -> str:
    return f"You are the planning assistant. Today is {w['today']}."


def _in_prompt(name: str, front: Front, doc: str, hidden: str | None = None) -> Scenario:
    text = "plan the next sprint review"
    return Scenario(
        name,
        "context",
        front,
        TOOLS,
        _policy("context"),
        [Run(text, _world("2026-12-04"))],
        [
            Run(text, _world("2026-12-11")),
            Run(text, _world("2026-12-04"), harmless=True, note="the recorded prompt again: it hits"),
        ],
        context=_today,
        hidden_state=hidden,
        doc=doc,
    )


def _in_task(name: str, front: Front, doc: str) -> Scenario:
    def run(day: str) -> Run:
        return Run(f"plan the sprint review for the sprint starting {day}", _world(day), {"start": day})

    return Scenario(
        name,
        "context",
        front,
        TOOLS,
        _policy("task"),
        [run("2026-12-04")],
        [run("2026-12-11")],
        doc=doc,
    )


SCENARIOS = [
    _in_task(
        "date_in_task_text_core",
        "core",
        "The date the agent works from is in the task text (and a param): another date is another task.",
    ),
    _in_task("date_in_task_text_pydantic_ai", "pydantic_ai", "The date in the prompt, through pydantic-ai."),
    _in_prompt(
        "date_in_system_message_langchain",
        "langchain",
        "Today's date in a LangChain system message: a changed prompt is another task.",
    ),
    _in_prompt(
        "date_in_instructions_pydantic_ai",
        "pydantic_ai",
        "Today's date in pydantic-ai instructions: a changed prompt is another task.",
    ),
    _in_prompt(
        "date_in_instructions_openai_agents",
        "openai_agents",
        "Today's date in an OpenAI Agents instructions callable: a changed prompt is another task.",
    ),
    _in_prompt(
        "date_in_instructions_smolagents",
        "smolagents",
        "Today's date in a smolagents agent's instructions (its system prompt): another task.",
    ),
    _in_prompt(
        "date_in_agent_memory_core",
        "core",
        "A plain agent reads today's date from its own state, which the engine cannot see.",
        hidden=(
            "the date lives only in the agent's own state: no tool output, param or task text shows it, so"
            " the core engine cannot tell the runs apart (the documented rule: put it in the task or a param)"
        ),
    ),
]
