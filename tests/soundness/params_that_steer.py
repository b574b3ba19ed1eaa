"""Params echoed by outputs, membership, sentinels in id fields, bare ints as handles, template slots."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import calls, done, out, sc, word
from .param_thresholds import WHO_TOOLS, who_policy

# ---- 1. the requested priority, echoed by the ticket, steers a page (not copied into any call) -----------


def get_ticket(w: dict[str, Any], ticket: str) -> dict[str, Any]:
    return {"ticket": ticket, "priority": w["prio"], "title": "printer on fire"}


def set_priority(w: dict[str, Any], ticket: str, priority: str) -> str:
    w["prio"] = priority
    return "updated"


def page_oncall(w: dict[str, Any], ticket: str) -> str:
    w["pages"].append(ticket)
    return "paged"


PRIO_TOOLS = [
    Tool("get_ticket", get_ticket, check=lambda w, ticket: True),
    Tool("set_priority", set_priority, check=lambda w, ticket, priority: True),
    Tool("page_oncall", page_oncall, check=lambda w, ticket: True),
]


def prio_policy(text: str, ctx: str, h: list[Step]):
    t, p = word(text, "ticket"), word(text, "to")
    if not done(h, "get_ticket"):
        return Call("get_ticket", {"ticket": t})
    if out(h, "get_ticket")["priority"] != p and not done(h, "set_priority"):
        return Call("set_priority", {"ticket": t, "priority": p})
    if p == "urgent" and not done(h, "page_oncall"):
        return Call("page_oncall", {"ticket": t})
    return Answer("Done.")


def _prio(t: str, p: str, current: str) -> Run:
    return Run(
        f"set the priority of ticket {t} to {p}",
        {"prio": current, "pages": []},
        {"ticket": t, "priority": p},
    )


# ---- 2. add a user to a group unless already a member (a param in a returned list) -----------------------


def list_members(w: dict[str, Any], group: str) -> list[str]:
    return list(w["members"])


def add_member(w: dict[str, Any], group: str, user: str) -> str:
    w["members"].append(user)
    w["adds"] += 1
    return "added"


MEMBER_TOOLS = [
    Tool("list_members", list_members, check=lambda w, group: True),
    Tool("add_member", add_member, check=lambda w, group, user: True),
]


def member_policy(text: str, ctx: str, h: list[Step]):
    user = word(text, "add")
    if not done(h, "list_members"):
        return Call("list_members", {"group": "eng"})
    if user in out(h, "list_members"):
        return Answer("Already a member.")
    if not done(h, "add_member"):
        return Call("add_member", {"group": "eng", "user": user})
    return Answer("Added.")


def _mem(user: str, members: list[str]) -> Run:
    return Run(f"add {user} to the eng group", {"members": list(members), "adds": 0}, {"user": user})


# ---- 3. owner_id 0 means unassigned (a sentinel in an id field) ---------------------------------------------


def get_issue(w: dict[str, Any], issue: str) -> dict[str, Any]:
    return {"issue": issue, "owner_id": w["owner"], "state": "open"}


def notify_user(w: dict[str, Any], user_id: int, issue: str) -> str:
    w["notified"].append((user_id, issue))
    return "notified"


def assign_to_me(w: dict[str, Any], issue: str) -> str:
    w["owner"] = 999
    w["assigned"].append(issue)
    return "assigned"


OWNER_TOOLS = [
    Tool("get_issue", get_issue, check=lambda w, issue: True),
    Tool("notify_user", notify_user, check=lambda w, user_id, issue: True),
    Tool("assign_to_me", assign_to_me, check=lambda w, issue: True),
]


def owner_policy(text: str, ctx: str, h: list[Step]):
    i = word(text, "issue")
    if not done(h, "get_issue"):
        return Call("get_issue", {"issue": i})
    owner = out(h, "get_issue")["owner_id"]
    if owner == 0:
        if not done(h, "assign_to_me"):
            return Call("assign_to_me", {"issue": i})
        return Answer("Took the unassigned issue.")
    if not done(h, "notify_user"):
        return Call("notify_user", {"user_id": owner, "issue": i})
    return Answer("Pinged the owner.")


def _issue(i: str, owner: int) -> Run:
    return Run(f"chase issue {i}", {"owner": owner, "notified": [], "assigned": []}, {"issue": i})


# ---- 4. a bare int output (a 'handle') that is also compared: sweep a balance above 100 ---------------------


def balance_of(w: dict[str, Any], account: str) -> int:
    return w["balance"]


def sweep(w: dict[str, Any], account: str, amount: int) -> str:
    w["balance"] -= amount
    w["swept"].append(amount)
    return "swept"


SWEEP_TOOLS = [
    Tool("balance_of", balance_of, check=lambda w, account: True),
    Tool("sweep", sweep, check=lambda w, account, amount: True),
]


def sweep_policy(text: str, ctx: str, h: list[Step]):
    acct = word(text, "account")
    if not done(h, "balance_of"):
        return Call("balance_of", {"account": acct})
    bal = out(h, "balance_of")
    if bal < 100:
        return Answer("Too little to sweep.")
    if not done(h, "sweep"):
        return Call("sweep", {"account": acct, "amount": bal})
    return Answer("Swept.")


def _sweep(acct: str, bal: int) -> Run:
    return Run(f"sweep account {acct}", {"balance": bal, "swept": []}, {"account": acct})


# ---- 5. a list of bare ints, each passed on: pay small ones, flag large ones --------------------------------


def pending_amounts(w: dict[str, Any], vendor: str) -> list[int]:
    return list(w["amounts"])


def pay_amount(w: dict[str, Any], vendor: str, amount: int) -> str:
    w["paid"].append(amount)
    return "paid"


def flag_amount(w: dict[str, Any], vendor: str, amount: int) -> str:
    w["flagged"].append(amount)
    return "flagged"


AMOUNT_TOOLS = [
    Tool("pending_amounts", pending_amounts, check=lambda w, vendor: True),
    Tool("pay_amount", pay_amount, check=lambda w, vendor, amount: True),
    Tool("flag_amount", flag_amount, check=lambda w, vendor, amount: True),
]


def amount_policy(text: str, ctx: str, h: list[Step]):
    v = word(text, "vendor")
    if not done(h, "pending_amounts"):
        return Call("pending_amounts", {"vendor": v})
    handled = {c["amount"] for c in calls(h, "pay_amount") + calls(h, "flag_amount")}
    for a in out(h, "pending_amounts"):
        if a not in handled:
            return Call("pay_amount" if a <= 100 else "flag_amount", {"vendor": v, "amount": a})
    return Answer("Handled.")


def _amounts(v: str, amounts: list[int]) -> Run:
    return Run(f"settle vendor {v}", {"amounts": amounts, "paid": [], "flagged": []}, {"vendor": v})


# ---- 6. a template word slot that steers (no explicit params): send to a person, or to everyone -----------
# the tools and the policy of param_thresholds' report to {who}, the task text alone naming the person


def _slot(who: str) -> Run:
    return Run(f"send the weekly report to {who}", {"sent": [], "broadcasts": 0})


# ---- 7. a write that raises on replay -------------------------------------------------------------------------


def get_card(w: dict[str, Any], card: str) -> dict[str, Any]:
    return {"card": card, "status": "active"}


def charge_card(w: dict[str, Any], card: str, amount: int) -> str:
    if w["down"]:
        raise RuntimeError("gateway unavailable")
    w["charges"].append((card, amount))
    return "charged"


def log_failure(w: dict[str, Any], card: str) -> str:
    w["failures"].append(card)
    return "logged"


RAISE_TOOLS = [
    Tool("get_card", get_card, check=lambda w, card: True),
    Tool("charge_card", charge_card, check=lambda w, card, amount: True),
    Tool("log_failure", log_failure, check=lambda w, card: True),
]


def raise_policy(text: str, ctx: str, h: list[Step]):
    c = word(text, "card")
    if not done(h, "get_card"):
        return Call("get_card", {"card": c})
    if not done(h, "charge_card"):
        return Call("charge_card", {"card": c, "amount": 25})
    r = out(h, "charge_card")
    if isinstance(r, str) and r.startswith("Error"):
        if not done(h, "log_failure"):
            return Call("log_failure", {"card": c})
        return Answer("The charge failed; logged.")
    return Answer("Charged 25.")


def _card(c: str, down: bool) -> Run:
    return Run(f"charge the fee to card {c}", {"down": down, "charges": [], "failures": []}, {"card": c})


SCENARIOS = [
    sc(
        "rt_echoed_param_steers_core",
        "params",
        PRIO_TOOLS,
        prio_policy,
        [_prio("T-7", "low", "low")],
        [_prio("T-8", "high", "high"), _prio("T-9", "urgent", "urgent")],
        "The requested priority equals the ticket's (echoed, so free) and only steers: urgent pages on-call.",
    ),
    sc(
        "rt_param_in_returned_list_core",
        "params",
        MEMBER_TOOLS,
        member_policy,
        [_mem("carol", ["alice", "bob"]), _mem("dave", ["erin", "frank"])],
        [_mem("gina", ["hal", "ivy"]), _mem("hal", ["hal", "ivy"]), _mem("ivy", ["hal", "ivy"])],
        "Add unless the user is already listed; now the user is in the list (first, then second).",
    ),
    sc(
        "rt_owner_id_sentinel_core",
        "identities",
        OWNER_TOOLS,
        owner_policy,
        [_issue("IS-1", 17)],
        [_issue("IS-2", 23), _issue("IS-3", 0)],
        "owner_id 0 means unassigned; recorded with owner 17 (notified), now 0: take it.",
    ),
    sc(
        "rt_bare_int_handle_compared_core",
        "identities",
        SWEEP_TOOLS,
        sweep_policy,
        [_sweep("ac-1", 250)],
        [_sweep("ac-2", 300), _sweep("ac-3", 40)],
        "A bare int balance is swept whole when at least 100; recorded 250, now 40.",
    ),
    sc(
        "rt_int_list_handles_compared_core",
        "identities",
        AMOUNT_TOOLS,
        amount_policy,
        [_amounts("v-1", [30, 50])],
        [_amounts("v-2", [20, 70]), _amounts("v-3", [30, 500])],
        "A list of bare int amounts, each passed on: pay <= 100, flag above; 500 now.",
    ),
    sc(
        "rt_template_word_slot_core",
        "params",
        WHO_TOOLS,
        who_policy,
        [_slot("ada"), _slot("bob"), _slot("cy")],
        [_slot("dee"), _slot("everyone")],
        "A plain-text task whose word slot flows into send_to, but 'everyone' means broadcast.",
    ),
    sc(
        "rt_write_raises_on_replay_core",
        "tool_errors",
        RAISE_TOOLS,
        raise_policy,
        [_card("cd-1", False)],
        [_card("cd-2", False), _card("cd-3", True)],
        "Recorded a charge that went through; on replay the gateway raises: the agent logs the failure.",
    ),
]

OPTIONS = {"rt_template_word_slot_core": {"templates": True}}
