"""Loops and choices: a count in a text, duplicate ids, a tool called twice whose outputs swap,
a choice over permuted elements, a case-sensitive identity comparison, self-approval."""

from __future__ import annotations

import re
from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import calls, count, done, out, sc, word

# ---- 1. a count written in a text: "3 parcels waiting" ---------------------------------------------------


def dock_status(w: dict[str, Any], dock: str) -> str:
    return f"{w['waiting']} parcels waiting at {dock}"


def load_next(w: dict[str, Any], dock: str) -> str:
    w["loaded"] += 1
    return "loaded"


TEXTCOUNT_TOOLS = [
    Tool("dock_status", dock_status, check=lambda w, dock: True),
    Tool("load_next", load_next, check=lambda w, dock: True),
]


def textcount_policy(text: str, ctx: str, h: list[Step]):
    d = word(text, "dock")
    if not done(h, "dock_status"):
        return Call("dock_status", {"dock": d})
    n = int(re.match(r"(\d+)", out(h, "dock_status")).group(1))
    if count(h, "load_next") < n:
        return Call("load_next", {"dock": d})
    return Answer("Loaded everything.")


def _dock(d: str, n: int, **kw: Any) -> Run:
    return Run(f"load the truck at dock {d}", {"waiting": n, "loaded": 0}, {"dock": d}, **kw)


# ---- 2. duplicate ids: notify each distinct user once ------------------------------------------------------


def watchers(w: dict[str, Any], doc: str) -> list[dict[str, Any]]:
    return [{"user_id": u} for u in w["watchers"]]


def notify(w: dict[str, Any], user_id: str) -> str:
    w["sent"].append(user_id)
    return "sent"


DUP_TOOLS = [
    Tool("watchers", watchers, check=lambda w, doc: True),
    Tool("notify", notify, check=lambda w, user_id: True),
]


def dup_policy(text: str, ctx: str, h: list[Step]):
    d = word(text, "doc")
    if not done(h, "watchers"):
        return Call("watchers", {"doc": d})
    sent = {c["user_id"] for c in calls(h, "notify")}
    for row in out(h, "watchers"):
        if row["user_id"] not in sent:
            return Call("notify", {"user_id": row["user_id"]})
    return Answer("Notified the watchers.")


def _doc(d: str, users: list[str], **kw: Any) -> Run:
    return Run(f"tell the watchers of doc {d}", {"watchers": users, "sent": []}, {"doc": d}, **kw)


# ---- 3. the same tool twice, outputs swapped: buy from the cheaper shop -----------------------------------


def price_at(w: dict[str, Any], shop: str) -> dict[str, Any]:
    return {"shop": shop, "price": w["prices"][shop]}


def buy_at(w: dict[str, Any], shop: str) -> str:
    w["bought"].append(shop)
    return "bought"


SWAP_TOOLS = [
    Tool("price_at", price_at, check=lambda w, shop: True),
    Tool("buy_at", buy_at, check=lambda w, shop: True),
]


def swap_policy(text: str, ctx: str, h: list[Step]):
    if count(h, "price_at") == 0:
        return Call("price_at", {"shop": "north"})
    if count(h, "price_at") == 1:
        return Call("price_at", {"shop": "south"})
    if not done(h, "buy_at"):
        quotes = [o for n, _a, o in h if n == "price_at"]
        best = min(quotes, key=lambda q: q["price"])
        return Call("buy_at", {"shop": best["shop"]})
    return Answer("Bought.")


def _shops(north: int, south: int) -> Run:
    return Run("buy the cheaper kettle", {"prices": {"north": north, "south": south}, "bought": []})


# ---- 4. choose the least-loaded server among permuted elements (three of them) ---------------------------


def servers(w: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"host": h, "load": load} for h, load in w["servers"]]


def place_job(w: dict[str, Any], host: str) -> str:
    w["placed"].append(host)
    return "placed"


PERM_TOOLS = [
    Tool("servers", servers, check=lambda w: True),
    Tool("place_job", place_job, check=lambda w, host: True),
]


def perm_policy(text: str, ctx: str, h: list[Step]):
    if not done(h, "servers"):
        return Call("servers", {})
    if not done(h, "place_job"):
        return Call("place_job", {"host": min(out(h, "servers"), key=lambda s: s["load"])["host"]})
    return Answer("Placed.")


def _servers(*rows: tuple[str, int]) -> Run:
    return Run("place the nightly job", {"servers": list(rows), "placed": []})


# ---- 5. a case-sensitive comparison of two identities (forms are labelled equal) ----------------------------


def get_commit(w: dict[str, Any], sha: str) -> dict[str, Any]:
    return {"sha": sha, "author_login": w["author"]}


def get_pr(w: dict[str, Any], pr: str) -> dict[str, Any]:
    return {"pr": pr, "reviewer_login": w["reviewer"]}


def approve_pr(w: dict[str, Any], pr: str) -> str:
    w["approved"].append(pr)
    return "approved"


def reject_self_review(w: dict[str, Any], pr: str) -> str:
    w["rejected"].append(pr)
    return "rejected"


CASE_TOOLS = [
    Tool("get_pr", get_pr, check=lambda w, pr: True),
    Tool("get_commit", get_commit, check=lambda w, sha: True),
    Tool("approve_pr", approve_pr, check=lambda w, pr: True),
    Tool("reject_self_review", reject_self_review, check=lambda w, pr: True),
]


def case_policy(text: str, ctx: str, h: list[Step]):
    pr = word(text, "pr")
    if not done(h, "get_pr"):
        return Call("get_pr", {"pr": pr})
    if not done(h, "get_commit"):
        return Call("get_commit", {"sha": "abc123"})
    same = out(h, "get_pr")["reviewer_login"] == out(h, "get_commit")["author_login"]
    tool = "reject_self_review" if same else "approve_pr"
    if not done(h, tool):
        return Call(tool, {"pr": pr})
    return Answer("Self-review rejected." if same else "Approved.")


def _pr(pr: str, reviewer: str, author: str) -> Run:
    return Run(
        f"merge review for pr {pr}",
        {"reviewer": reviewer, "author": author, "approved": [], "rejected": []},
        {"pr": pr},
    )


# ---- 6. self-approval: the submitter equals the approver param in one run, not in another ---------------------


def get_expense(w: dict[str, Any], expense: str) -> dict[str, Any]:
    return {"expense": expense, "submitter": w["submitter"], "amount": 40}


def approve_expense(w: dict[str, Any], expense: str, approver: str) -> str:
    w["approved"].append((expense, approver))
    return "approved"


def escalate(w: dict[str, Any], expense: str) -> str:
    w["escalated"].append(expense)
    return "escalated"


SELF_TOOLS = [
    Tool("get_expense", get_expense, check=lambda w, expense: True),
    Tool("approve_expense", approve_expense, check=lambda w, expense, approver: True),
    Tool("escalate", escalate, check=lambda w, expense: True),
]


def self_policy(text: str, ctx: str, h: list[Step]):
    e, me = word(text, "expense"), word(text, "as")
    if not done(h, "get_expense"):
        return Call("get_expense", {"expense": e})
    if out(h, "get_expense")["submitter"] == me:
        if not done(h, "escalate"):
            return Call("escalate", {"expense": e})
        return Answer("Escalated: you cannot approve your own expense.")
    if not done(h, "approve_expense"):
        return Call("approve_expense", {"expense": e, "approver": me})
    return Answer("Approved.")


def _exp(e: str, me: str, submitter: str) -> Run:
    return Run(
        f"approve expense {e} as {me}",
        {"submitter": submitter, "approved": [], "escalated": []},
        {"expense": e, "approver": me},
    )


SCENARIOS = [
    sc(
        "rt_count_in_text_core",
        "loops",
        TEXTCOUNT_TOOLS,
        textcount_policy,
        [_dock("d-1", 2)],
        [_dock("d-2", 2, harmless=True), _dock("d-3", 3)],
        "A count written in a text ('3 parcels waiting at d-3') drives a loop.",
    ),
    sc(
        "rt_duplicate_ids_core",
        "loops",
        DUP_TOOLS,
        dup_policy,
        [_doc("doc-1", ["u-1", "u-2"])],
        [_doc("doc-2", ["u-3", "u-4"], harmless=True), _doc("doc-3", ["u-5", "u-5"])],
        "Notify each distinct watcher; the list now names one user twice.",
    ),
    sc(
        "rt_same_tool_swapped_core",
        "choices",
        SWAP_TOOLS,
        swap_policy,
        [_shops(5, 9), _shops(6, 8)],
        [_shops(6, 9), _shops(8, 6)],
        "Two calls of price_at; buy where cheaper; the prices now swap.",
    ),
    sc(
        "rt_permuted_choice_core",
        "choices",
        PERM_TOOLS,
        perm_policy,
        [_servers(("h-1", 10), ("h-2", 50), ("h-3", 70)), _servers(("h-4", 20), ("h-5", 60), ("h-6", 40))],
        [_servers(("h-7", 15), ("h-8", 55), ("h-9", 45)), _servers(("h-7", 20), ("h-8", 60), ("h-9", 10))],
        "Least load among three; the least-loaded now sits at another position.",
    ),
    sc(
        "rt_case_sensitive_identity_core",
        "relations",
        CASE_TOOLS,
        case_policy,
        [_pr("pr-1", "Ada", "ada")],
        [_pr("pr-2", "Bob", "bob"), _pr("pr-3", "ada", "ada")],
        "reviewer == author compared exactly; 'Ada' vs 'ada' recorded (different), 'ada' vs 'ada' now.",
    ),
    sc(
        "rt_self_approval_core",
        "relations",
        SELF_TOOLS,
        self_policy,
        [_exp("ex-1", "mgr-7", "u-3"), _exp("ex-2", "mgr-8", "mgr-8")],
        [_exp("ex-3", "mgr-9", "u-4"), _exp("ex-4", "mgr-9", "mgr-9"), _exp("ex-5", "mgr-9", "mgr-1")],
        "Escalate when the submitter equals the approver param; equal in one run, not in another.",
    ),
]
