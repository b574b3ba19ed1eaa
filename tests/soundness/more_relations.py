"""Identities compared by order (idempotency), and a timestamp difference (an SLA)."""

from __future__ import annotations

import datetime
from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

# ---- 1. process an invoice only if its number is past the last one processed ---------------------------


def get_cursor(w: dict[str, Any], ledger: str) -> dict[str, Any]:
    return {"ledger": ledger, "last_invoice_no": w["last"]}


def next_invoice(w: dict[str, Any], ledger: str) -> dict[str, Any]:
    return {"ledger": ledger, "invoice_no": w["next"], "amount": 40}


def process(w: dict[str, Any], invoice_no: int) -> str:
    w["processed"].append(invoice_no)
    return "processed"


IDEM_TOOLS = [
    Tool("get_cursor", get_cursor, check=lambda w, ledger: True),
    Tool("next_invoice", next_invoice, check=lambda w, ledger: True),
    Tool("process", process, check=lambda w, invoice_no: True),
]


def idem_policy(text: str, ctx: str, h: list[Step]):
    led = word(text, "ledger")
    if not done(h, "get_cursor"):
        return Call("get_cursor", {"ledger": led})
    if not done(h, "next_invoice"):
        return Call("next_invoice", {"ledger": led})
    no = out(h, "next_invoice")["invoice_no"]
    if no <= out(h, "get_cursor")["last_invoice_no"]:
        return Answer("Already processed.")
    if not done(h, "process"):
        return Call("process", {"invoice_no": no})
    return Answer("Processed.")


def _led(led: str, last: int, nxt: int) -> Run:
    return Run(
        f"process the next invoice of ledger {led}",
        {"last": last, "next": nxt, "processed": []},
        {"ledger": led},
    )


# ---- 2. escalate a ticket open for more than 24 hours (two timestamps, their difference) ------------------


def get_ticket(w: dict[str, Any], ticket: str) -> dict[str, Any]:
    return {"ticket": ticket, "created_at": w["created"], "status": "open"}


def clock(w: dict[str, Any]) -> dict[str, Any]:
    return {"now": w["now"]}


def escalate(w: dict[str, Any], ticket: str) -> str:
    w["escalated"].append(ticket)
    return "escalated"


SLA_TOOLS = [
    Tool("get_ticket", get_ticket, check=lambda w, ticket: True),
    Tool("clock", clock, check=lambda w: True),
    Tool("escalate", escalate, check=lambda w, ticket: True),
]


def _t(s: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))


def sla_policy(text: str, ctx: str, h: list[Step]):
    t = word(text, "ticket")
    if not done(h, "get_ticket"):
        return Call("get_ticket", {"ticket": t})
    if not done(h, "clock"):
        return Call("clock", {})
    age = _t(out(h, "clock")["now"]) - _t(out(h, "get_ticket")["created_at"])
    if age > datetime.timedelta(hours=24):
        if not done(h, "escalate"):
            return Call("escalate", {"ticket": t})
        return Answer("Escalated: past the SLA.")
    return Answer("Within the SLA.")


def _sla(t: str, created: str, now: str) -> Run:
    return Run(
        f"check the SLA of ticket {t}", {"created": created, "now": now, "escalated": []}, {"ticket": t}
    )


SCENARIOS = [
    sc(
        "rt_invoice_no_idempotency_core",
        "identities",
        IDEM_TOOLS,
        idem_policy,
        [_led("lg-1", 1040, 1042)],
        [_led("lg-2", 1041, 1043), _led("lg-3", 1040, 1039)],
        "process(invoice_no) only past last_invoice_no; the invoice number (an id copied on) is now below.",
    ),
    sc(
        "rt_sla_timestamp_difference_core",
        "relations",
        SLA_TOOLS,
        sla_policy,
        [
            _sla("t-1", "2024-06-01T10:00:00Z", "2024-06-01T12:00:00Z"),
            _sla("t-2", "2024-06-03T08:00:00Z", "2024-06-03T09:30:00Z"),
        ],
        [
            _sla("t-3", "2024-06-04T08:00:00Z", "2024-06-04T18:00:00Z"),
            _sla("t-4", "2024-06-01T10:00:00Z", "2024-06-03T10:00:00Z"),
            _sla("t-5", "2024-06-02T09:00:00Z", "2024-06-04T09:00:00Z"),
        ],
        "Escalate when now - created_at > 24h; two runs of a few hours, now 48 hours.",
    ),
]
