"""Red-team scenarios: branches, loops and choices through the framework fronts (one call per model turn).

JSON fields that decide a branch, a tool error the framework hands the model, a loop on a status
field, a per-item loop over a nested list, an answer built from a tool output, a structured output.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import calls, done, out

FRONTS = ("langchain", "pydantic_ai", "openai_agents", "smolagents", "mcp_proxy")
S: list[Scenario] = []


def _as_dict(v: Any) -> Any:
    if isinstance(v, str):
        import ast
        import json

        for parse in (json.loads, ast.literal_eval):
            try:
                return parse(v)
            except (ValueError, SyntaxError):
                continue
    return v


# ---- A: a JSON status field decides ship or remind; the answer carries the amount ----------------------


def get_order(w: dict[str, Any], order: str) -> dict[str, Any]:
    return {"status": w["status"], "amount": w["amount"]}


def ship(w: dict[str, Any], order: str, amount: int) -> str:
    w["shipped"].append((order, amount))
    return "shipped"


def remind(w: dict[str, Any], order: str) -> str:
    w["reminded"].append(order)
    return "reminded"


def pol_a(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "get_order"):
        return Call("get_order", {"order": "o1"})
    o = _as_dict(out(h, "get_order"))
    if o["status"] == "paid" and not done(h, "ship"):
        return Call("ship", {"order": "o1", "amount": o["amount"]})
    if o["status"] != "paid" and not done(h, "remind"):
        return Call("remind", {"order": "o1"})
    return Answer(f"{'shipped' if done(h, 'ship') else 'reminded'} {o['amount']}")


def wa(status: str, amount: int) -> dict[str, Any]:
    return {"status": status, "amount": amount, "shipped": [], "reminded": []}


TA = [Tool("get_order", get_order), Tool("ship", ship), Tool("remind", remind)]
for f in FRONTS:
    S.append(
        Scenario(
            f"rt10h_status_branch_{f}",
            "branches",
            f,  # type: ignore[arg-type]
            TA,
            pol_a,
            [Run("handle order o1", wa("paid", 10)), Run("handle order o1", wa("paid", 20))],
            [
                Run("handle order o1", wa("paid", 30), harmless=True),
                Run("handle order o1", wa("unpaid", 10)),
                Run("handle order o1", wa("refunded", 20)),
            ],
            doc="status decides ship/remind; answer carries the amount read",
        )
    )


# ---- B: a tool error the framework hands the model sends it to invoice ---------------------------------


def charge(w: dict[str, Any], amount: int) -> str:
    if w["declined"]:
        raise RuntimeError("card declined")
    w["charged"].append(amount)
    return "charged"


def invoice(w: dict[str, Any], amount: int) -> str:
    w["invoiced"].append(amount)
    return "invoiced"


def pol_b(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "charge"):
        return Call("charge", {"amount": 5})
    if "declined" in str(out(h, "charge")) and not done(h, "invoice"):
        return Call("invoice", {"amount": 5})
    return Answer("invoiced" if done(h, "invoice") else "charged")


def wb(declined: bool) -> dict[str, Any]:
    return {"declined": declined, "charged": [], "invoiced": []}


TB = [Tool("charge", charge), Tool("invoice", invoice)]
for f in ("langchain", "openai_agents", "smolagents", "mcp_proxy"):
    S.append(
        Scenario(
            f"rt10h_error_branch_{f}",
            "tool_errors",
            f,  # type: ignore[arg-type]
            TB,
            pol_b,
            [Run("pay 5", wb(False)), Run("pay 5", wb(False))],
            [Run("pay 5", wb(True)), Run("pay 5", wb(False), harmless=True)],
            doc="a raise the framework turns into a message decides invoice",
        )
    )
    S.append(
        Scenario(
            f"rt10h_error_branch_recorded_{f}",
            "tool_errors",
            f,  # type: ignore[arg-type]
            TB,
            pol_b,
            [Run("pay 5", wb(True)), Run("pay 5", wb(True))],
            [Run("pay 5", wb(False)), Run("pay 5", wb(True))],
            doc="the error run recorded first; the probe succeeds",
        )
    )


# ---- C: a loop on a status field ----------------------------------------------------------------------


def poll(w: dict[str, Any], job: str) -> dict[str, Any]:
    w["polls"] += 1
    state = w["states"][min(w["polls"], len(w["states"])) - 1]
    return {"state": state, "polls": w["polls"]}


def cancel(w: dict[str, Any], job: str) -> str:
    w["cancelled"] = True
    return "cancelled"


def pol_c(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    last = _as_dict(out(h, "poll"))
    if last is None or last["state"] == "running":
        return Call("poll", {"job": "j1"})
    if last["state"] == "stuck" and not done(h, "cancel"):
        return Call("cancel", {"job": "j1"})
    return Answer(f"{last['state']} after {len(calls(h, 'poll'))}")


def wc(*states: str) -> dict[str, Any]:
    return {"states": list(states), "polls": 0, "cancelled": False}


TC = [Tool("poll", poll), Tool("cancel", cancel)]
for f in FRONTS:
    S.append(
        Scenario(
            f"rt10h_poll_loop_{f}",
            "loops",
            f,  # type: ignore[arg-type]
            TC,
            pol_c,
            [Run("wait for j1", wc("running", "done")), Run("wait for j1", wc("done"))],
            [
                Run("wait for j1", wc("running", "done"), harmless=True),
                Run("wait for j1", wc("running", "running", "done")),
                Run("wait for j1", wc("running", "stuck")),
                Run("wait for j1", wc("stuck")),
            ],
            doc="loop until a status leaves running; stuck cancels",
        )
    )


# ---- D: a per-item loop over a nested list ------------------------------------------------------------


def get_items(w: dict[str, Any]) -> dict[str, Any]:
    return {"items": [dict(i) for i in w["items"]]}


def fix(w: dict[str, Any], id: str) -> str:
    w["fixed"].append(id)
    return "fixed"


def pol_d(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "get_items"):
        return Call("get_items")
    items = _as_dict(out(h, "get_items"))["items"]
    fixed = [c["id"] for c in calls(h, "fix")]
    for i in items:
        if not i["ok"] and i["id"] not in fixed:
            return Call("fix", {"id": i["id"]})
    return Answer(f"fixed {len(fixed)}")


def wd(*oks: bool) -> dict[str, Any]:
    return {"items": [{"id": f"i{n}", "ok": ok} for n, ok in enumerate(oks)], "fixed": []}


TD = [Tool("get_items", get_items), Tool("fix", fix)]
for f in FRONTS:
    S.append(
        Scenario(
            f"rt10h_nested_items_{f}",
            "loops",
            f,  # type: ignore[arg-type]
            TD,
            pol_d,
            [Run("fix broken items", wd(True, False)), Run("fix broken items", wd(False, True))],
            [
                Run("fix broken items", wd(False, False)),
                Run("fix broken items", wd(True, True)),
                Run("fix broken items", wd(True, False), harmless=True),
                Run("fix broken items", wd(True, False, False)),
            ],
            doc="fix every item not ok; runs fixed one item at either place",
        )
    )


# ---- E: an answer built from a tool output; F: a structured output from tool outputs ------------------


def balance(w: dict[str, Any], user: str) -> dict[str, Any]:
    return {"balance": w["balance"], "currency": w["currency"]}


def pol_e(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "balance"):
        return Call("balance", {"user": "u1"})
    b = _as_dict(out(h, "balance"))
    return Answer(f"{b['balance']} {b['currency']}")


def we(bal: int, cur: str) -> dict[str, Any]:
    return {"balance": bal, "currency": cur}


TE = [Tool("balance", balance)]
for f in FRONTS:
    S.append(
        Scenario(
            f"rt10h_answer_from_output_{f}",
            "computed",
            f,  # type: ignore[arg-type]
            TE,
            pol_e,
            [Run("balance of u1", we(10, "EUR")), Run("balance of u1", we(20, "EUR"))],
            [
                Run("balance of u1", we(30, "EUR"), harmless=True),
                Run("balance of u1", we(10, "USD")),
                Run("balance of u1", we(-5, "EUR")),
            ],
            doc="the answer quotes the live output",
        )
    )


class Decision(BaseModel):
    approve: bool
    limit: int
    note: str


def score(w: dict[str, Any], user: str) -> dict[str, Any]:
    return {"score": w["score"], "band": w["band"]}


def pol_f(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "score"):
        return Call("score", {"user": "u1"})
    s = _as_dict(out(h, "score"))
    ok = s["band"] in ("A", "B")
    return Answer({"approve": ok, "limit": s["score"] * 10 if ok else 0, "note": f"band {s['band']}"})


def wf(score_: int, band: str) -> dict[str, Any]:
    return {"score": score_, "band": band}


S.append(
    Scenario(
        "rt10h_structured_output_pydantic_ai",
        "computed",
        "pydantic_ai",
        [Tool("score", score)],
        pol_f,
        [Run("decide u1", wf(50, "A")), Run("decide u1", wf(60, "B"))],
        [
            Run("decide u1", wf(70, "A"), harmless=True),
            Run("decide u1", wf(50, "C")),
            Run("decide u1", wf(60, "A"), harmless=True),
        ],
        output_type=Decision,
        doc="a structured output whose fields come from the live output",
    )
)
