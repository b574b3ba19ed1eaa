"""Harness scenarios: the MCP proxy's listing of replayed steps (outputs cut at 400 characters), and
a structured output computed from tool outputs (pydantic-ai output_type)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import done, out


def list_members(w: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(m) for m in w["members"]]


def get_rate(w: dict[str, Any]) -> dict[str, Any]:
    return {"rate": w["rate"], "status": w["status"]}


def send_offer(w: dict[str, Any], rate: int, vip: bool) -> str:
    w["offers"].append((rate, vip))
    return "sent"


TOOLS = [
    Tool("list_members", list_members, check=lambda w: True),
    Tool("get_rate", get_rate, check=lambda w: True),
    Tool("send_offer", send_offer, check=lambda w, rate, vip: True),
]


def policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "list_members"):
        return Call("list_members")
    if not done(h, "get_rate"):
        return Call("get_rate")
    if not done(h, "send_offer"):
        vip = '"tier": "vip"' in str(out(h, "list_members")).replace("'", '"')  # reads the listing as text
        return Call("send_offer", {"rate": out(h, "get_rate")["rate"], "vip": vip})
    return Answer("offer sent")


def members(last_tier: str) -> list[dict[str, Any]]:
    ms = [{"name": f"member number {i:02d}", "tier": "basic"} for i in range(12)]
    ms.append({"name": "member number 12", "tier": last_tier})
    return ms


def world(rate: int, last_tier: str, status: str = "open") -> dict[str, Any]:
    return {"members": members(last_tier), "rate": rate, "status": status, "offers": []}


def _proxy(front: str) -> Scenario:
    t = "send the member offer"
    return Scenario(
        f"proxy_truncated_listing_{front}",
        "mcp_proxy",
        front,  # type: ignore[arg-type]
        TOOLS,
        policy,
        [Run(t, world(5, "vip"))],
        [Run(t, world(5, "vip", "open since monday"))],
        doc="step 0's output (>400 chars) holds the vip at its end; step 1 changes: partial replay",
    )


class Total(BaseModel):
    total: int
    currency: str


def get_lines(w: dict[str, Any]) -> list[int]:
    return list(w["lines"])


def book(w: dict[str, Any], amount: int) -> str:
    w["booked"].append(amount)
    return "booked"


def total_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "get_lines"):
        return Call("get_lines")
    s = sum(out(h, "get_lines"))
    if not done(h, "book"):
        return Call("book", {"amount": 100})
    return Answer({"total": s, "currency": "EUR"})


def _structured(front: str) -> Scenario:
    t = "book the invoice"

    def w(lines):
        return {"lines": lines, "booked": []}

    return Scenario(
        f"coinciding_total_{front}",
        "computed",
        front,  # type: ignore[arg-type]
        [
            Tool("get_lines", get_lines, check=lambda w: True),
            Tool("book", book, check=lambda w, amount: True),
        ],
        total_policy,
        [Run(t, w([40, 60])), Run(t, w([30, 70]))],
        [Run(t, w([35, 65]), harmless=True), Run(t, w([40, 70])), Run(t, w([10, 20]))],
        output_type=Total if front == "pydantic_ai" else None,
        doc="a structured answer is the sum of a tool's output (the booking is constant)",
    )


SCENARIOS = [
    _proxy("mcp_proxy"),
    _proxy("core"),
    _structured("pydantic_ai"),
    _structured("core"),
    _structured("smolagents"),
    _structured("openai_agents"),
]
