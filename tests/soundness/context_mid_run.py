"""The agent's context (instructions) is read from the world at every model turn, as pydantic-ai
instruction functions and OpenAI Agents instruction callables are. The first turn's context is the
same in the recording and the probe; a tool's side effect shows only in the context of a later turn
(no tool output shows it). Rule 4: the context is part of the task -- here it changes mid-run.

Order: submit_order returns "ok" in both worlds; in the probe world the account is put under review
by the submission (the instructions then say so), and the agent escalates.
"""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import done


def submit_order(w: dict[str, Any], sku: str) -> str:
    w["orders"].append(sku)
    if w["review_on_submit"]:
        w["status"] = "under_review"
    return "ok"


def notify_compliance(w: dict[str, Any], sku: str) -> str:
    w["compliance"].append(sku)
    return "notified"


TOOLS = [
    Tool("submit_order", submit_order, check=lambda w, sku: True),
    Tool("notify_compliance", notify_compliance, check=lambda w, sku: True),
]


def context(w: dict[str, Any]) -> str:
    return f"You are the order desk. Account status: {w['status']}."


def policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "submit_order"):
        return Call("submit_order", {"sku": "sku-1"})
    if "under_review" in ctx and not done(h, "notify_compliance"):
        return Call("notify_compliance", {"sku": "sku-1"})
    return Answer("escalated" if done(h, "notify_compliance") else "ordered")


def world(review: bool) -> dict[str, Any]:
    return {"status": "active", "review_on_submit": review, "orders": [], "compliance": []}


def make(front: str) -> Scenario:
    t = "order sku-1"
    return Scenario(
        f"midrun_context_{front}",
        "context",
        front,  # type: ignore[arg-type]
        TOOLS,
        policy,
        [Run(t, world(False))],
        [Run(t, world(True)), Run(t, world(False), harmless=True)],
        context=context,
        doc="instructions re-read at every model turn change mid-run; tool outputs identical",
    )


SCENARIOS = [
    make(f) for f in ("core", "langchain", "pydantic_ai", "openai_agents", "smolagents", "mcp_proxy")
]
