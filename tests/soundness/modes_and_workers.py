"""Red-team scenarios: soundness across engine configurations (modes, templates, stores, restarts,
eviction, write-behind), each run judged against the agent alone.

Scenarios that need one configuration to record and another to probe set ``store="sqlite"``,
``restart=True`` and ``probe_options``.
"""

from __future__ import annotations

from .harness import Answer, Call, Run, Scenario, Tool
from .kit import done, num, out, word

T = lambda *a, **k: True  # noqa: E731
S: list[Scenario] = []


def _sc(name, tools, policy, records, probes, doc, cls="context", front="core", **kw):
    return Scenario(name, cls, front, tools, policy, records, probes, doc=doc, **kw)


def _tool(name, fn):
    return Tool(name, fn, check=T)


# ---- refunds steered by the agent's own context (hidden state: only proven mode can catch it) ----------


def _get_order(w, order: int):
    return {"order": order, "total": w["total"]}


def _refund(w, order: int) -> str:
    w["refunded"].append(order)
    return "refunded"


REFUND_TOOLS = [_tool("get_order", _get_order), _tool("refund", _refund)]


def _refund_policy(text, ctx, h):
    o = num(text, "order")
    if not done(h, "get_order"):
        return Call("get_order", {"order": o})
    if "paused" in ctx:
        return Answer(f"Refunds are paused; order {o} not refunded.")
    if not done(h, "refund"):
        return Call("refund", {"order": o})
    return Answer(f"Refunded order {o}.")


def _ctx(w):
    return w["policy"]


def _r(o, paused=False, params=None, harmless=False):
    return Run(
        f"refund order {o}",
        {"total": 40, "refunded": [], "policy": "refunds paused" if paused else "refunds allowed"},
        params or {},
        harmless=harmless,
    )


PROVEN_TPL = {"mode": "proven", "proof": 1, "templates": True}

# 1. proven: the exact text disagreed, its template (the same task) replays
S.append(
    _sc(
        "rt8d_proven_exact_disagreed_template_replays",
        REFUND_TOOLS,
        _refund_policy,
        [_r(1000), _r(1040), _r(1017), _r(1000, paused=True)],
        [_r(1020, paused=True)],
        "proven proof=1, templates: 1000 and 1040 prove 'refund order {1}', 1017 agrees through it; then "
        "'refund order 1000' (its own exact family) disagrees in shadow (refunds paused in the agent's "
        "prompt); the probe 1020, paused, is served by the template family, which never disagreed",
        context=_ctx,
        options=PROVEN_TPL,
    )
)

# 2. proven: the template family disagreed, an exact text proven before replays
S.append(
    _sc(
        "rt8d_proven_template_disagreed_exact_replays",
        REFUND_TOOLS,
        _refund_policy,
        [_r(1000), _r(1040), _r(1000), _r(1017, paused=True)],
        [_r(1000, paused=True)],
        "proven proof=1, templates: 'refund order 1000' agrees in shadow (its exact family proven); "
        "the template then disagrees on 1017 (refunds paused); the probe 1000, paused, replays its exact "
        "family though the same task just disagreed",
        context=_ctx,
        options=PROVEN_TPL,
    )
)

# 3. proven: declared params disagreed, the plain-text form (template) replays
S.append(
    _sc(
        "rt8d_proven_params_disagreed_template_replays",
        REFUND_TOOLS,
        _refund_policy,
        [_r(1000), _r(1040), _r(1017), _r(1030, paused=True, params={"order": 1030})],
        [_r(1020, paused=True)],
        "proven proof=1, templates: the template agreed on 1017; the same text with the order declared "
        "as a param (another front of the same app) disagrees on 1030; the plain text 1020 replays",
        context=_ctx,
        options=PROVEN_TPL,
    )
)

# 4. recorded in shadow mode (a disagreement among them), probed in proven mode after a restart
S.append(
    _sc(
        "rt8d_shadow_then_proven_restart",
        REFUND_TOOLS,
        _refund_policy,
        [_r(1000), _r(1000), _r(1000), _r(1000, paused=True)],
        [_r(1000, paused=True), _r(1000, paused=True)],
        "shadow mode records three agreements and one disagreement; a new worker in proven mode (proof=1) "
        "must read the disagreement from the store's events and keep the family in shadow",
        context=_ctx,
        options={"mode": "shadow"},
        store="sqlite",
        restart=True,
        probe_options={"mode": "proven", "proof": 1},
    )
)

# 5. recorded with templates in replay mode, probed frozen: the template's range only
S.append(
    _sc(
        "rt8d_templates_then_frozen",
        [_tool("get_order", _get_order), _tool("refund", _refund)],
        lambda text, ctx, h: (
            Call("get_order", {"order": num(text, "order")})
            if not done(h, "get_order")
            else Answer("Too large, needs approval.")
            if out(h, "get_order")["total"] > 100
            else Call("refund", {"order": num(text, "order")})
            if not done(h, "refund")
            else Answer("Refunded.")
        ),
        [
            Run("refund order 1000", {"total": 40, "refunded": []}),
            Run("refund order 1040", {"total": 60, "refunded": []}),
        ],
        [
            Run("refund order 1017", {"total": 50, "refunded": []}, harmless=True),
            Run("refund order 1020", {"total": 500, "refunded": []}),
            Run("refund order 1090", {"total": 50, "refunded": []}),
            Run("refund order 1020", {"total": 500, "refunded": []}),
        ],
        "templates learned in replay mode; a frozen worker on the same file replays 1017 (in range), "
        "misses total 500 (out of the runs' range) and 1090, twice: nothing it ran was learned",
        cls="params",
        options={"templates": True},
        store="sqlite",
        restart=True,
        probe_options={"mode": "frozen"},
    )
)

# 6. a template word slot whose value changes what the agent does


def _ticket(w, title: str, priority: str) -> dict:
    w["tickets"].append((title, priority))
    return {"id": f"T-{len(w['tickets'])}", "priority": priority}


def _page(w, ticket: str) -> str:
    w["paged"].append(ticket)
    return "paged"


def _ticket_policy(text, ctx, h):
    title = word(text, "about")
    prio = word(text, "priority")
    if not done(h, "open_ticket"):
        return Call("open_ticket", {"title": title, "priority": prio})
    if prio in ("urgent", "critical") and not done(h, "page_oncall"):
        return Call("page_oncall", {"ticket": out(h, "open_ticket")["id"]})
    return Answer(f"Opened {out(h, 'open_ticket')['id']}.")


def _t(title, prio, harmless=False):
    return Run(
        f"open a ticket about {title} with priority {prio}", {"tickets": [], "paged": []}, harmless=harmless
    )


S.append(
    _sc(
        "rt8d_tpl_word_slot_priority",
        [_tool("open_ticket", _ticket), _tool("page_oncall", _page)],
        _ticket_policy,
        [_t("printer", "low"), _t("vpn", "normal"), _t("email", "high")],
        [_t("wifi", "low", harmless=True), _t("database", "urgent")],
        "templates: 'priority {w}' flows into open_ticket with low/normal/high seen; the ticket tool "
        "echoes the priority; urgent makes the agent page on-call (a category the runs never showed)",
        cls="params",
        options={"templates": True},
    )
)

# 7. a number slot that flows into a call and decides through the agent's own bound in the text


def _hold(w, account: int, days: int) -> str:
    w["holds"].append((account, days))
    return "held"


def _escalate(w, account: int) -> str:
    w["escalated"].append(account)
    return "escalated"


def _hold_policy(text, ctx, h):
    a = num(text, "account")
    d = num(text, "for")
    if not done(h, "place_hold"):
        return Call("place_hold", {"account": a, "days": d})
    if d > 30 and not done(h, "escalate"):
        return Call("escalate", {"account": a})
    return Answer(f"Hold of {d} days on {a}.")


def _h(a, d, harmless=False):
    return Run(f"place a hold on account {a} for {d} days", {"holds": [], "escalated": []}, harmless=harmless)


S.append(
    _sc(
        "rt8d_tpl_number_slot_threshold_outside",
        [_tool("place_hold", _hold), _tool("escalate", _escalate)],
        _hold_policy,
        [_h(5001, 7), _h(5002, 30), _h(5003, 14)],
        [_h(5004, 20, harmless=True), _h(5005, 45), _h(5006, 31)],
        "templates: days flows into place_hold (7, 30, 14 seen); 45 and 31 lie outside the range and "
        "make the agent escalate",
        cls="params",
        options={"templates": True},
    )
)

# 8. restart: a relation between two numbers held over many runs; the index rebuilt from the store


def _acct(w, account: int):
    return {"account": account, "balance": w["balance"], "overdraft": w["overdraft"]}


def _pay(w, account: int, amount: int) -> str:
    w["paid"].append((account, amount))
    return "paid"


def _pay_policy(text, ctx, h):
    a = num(text, "account")
    amt = num(text, "pay")
    if not done(h, "get_account"):
        return Call("get_account", {"account": a})
    acc = out(h, "get_account")
    if acc["balance"] <= acc["overdraft"]:
        return Answer("Account frozen: balance at or below the overdraft floor.")
    if not done(h, "pay"):
        return Call("pay", {"account": a, "amount": amt})
    return Answer("Paid.")


def _p(a, balance, overdraft, harmless=False):
    return Run(
        f"pay 10 from account {a}",
        {"balance": balance, "overdraft": overdraft, "paid": []},
        {"account": a},
        harmless=harmless,
    )


S.append(
    _sc(
        "rt8d_restart_relation_many_runs",
        [_tool("get_account", _acct), _tool("pay", _pay)],
        _pay_policy,
        [_p(1, 50, 10), _p(2, 80, 60), _p(3, 70, 20), _p(4, 90, 85), _p(5, 60, 40), _p(6, 55, 30)],
        [_p(7, 65, 35, harmless=True), _p(8, 62, 70), _p(9, 60, 60)],
        "six runs with balance > overdraft (each in 50..90 and 10..85); a new worker on the same file "
        "rebuilds the index from the store: balance 62 under overdraft 70 (each in range) must miss",
        cls="relations",
        store="sqlite",
        restart=True,
    )
)

# 9. eviction: a capacity bound drops the runs that showed the other branch


def _ep(a, balance, overdraft, harmless=False):
    return _p(a, balance, overdraft, harmless)


S.append(
    _sc(
        "rt8d_eviction_drops_branch_evidence",
        [_tool("get_account", _acct), _tool("pay", _pay)],
        _pay_policy,
        [_ep(1, 20, 40), _ep(2, 30, 50), _ep(3, 50, 10), _ep(4, 80, 60), _ep(5, 70, 20)],
        [_ep(6, 60, 30, harmless=True), _ep(7, 25, 45), _ep(8, 45, 45)],
        "capacity=3: the frozen-branch runs (balance under overdraft) are evicted; the pay runs left "
        "show balance > overdraft; probes under the floor must not pay",
        cls="relations",
        options={"capacity": 3},
    )
)

# 10. write-behind: a probe right after the recording, before its write lands
S.append(
    _sc(
        "rt8d_write_behind_probe_before_write",
        [_tool("get_account", _acct), _tool("pay", _pay)],
        _pay_policy,
        [_p(1, 50, 10), _p(2, 80, 60), _p(3, 20, 40)],
        [_p(4, 25, 45), _p(5, 60, 30, harmless=True), _p(6, 45, 45)],
        "write_behind=True, SQLite: the frozen-branch run is the newest; probes come right after",
        cls="relations",
        options={"write_behind": True},
        store="sqlite",
    )
)

# 11. two workers: one records the pay branch, the other (restarted) records the frozen branch, probe
S.append(
    _sc(
        "rt8d_shadow_records_replay_probes",
        [_tool("get_account", _acct), _tool("pay", _pay)],
        _pay_policy,
        [_p(1, 50, 10), _p(2, 80, 60), _p(3, 20, 40), _p(4, 70, 20)],
        [_p(5, 60, 30, harmless=True), _p(6, 25, 45), _p(7, 45, 45), _p(8, 200, 10)],
        "recorded in shadow mode, probed in replay mode on the same file: the shadow runs' evidence is "
        "the same as a replay-mode recording's",
        cls="relations",
        options={"mode": "shadow"},
        store="sqlite",
        restart=True,
        probe_options={"mode": "replay"},
    )
)

# 12. templates recorded, probed with templates off then declared params (other key forms)
S.append(
    _sc(
        "rt8d_templates_then_templates_off",
        REFUND_TOOLS,
        _refund_policy,
        [_r(1000), _r(1040)],
        [_r(1017), _r(1000, harmless=True), _r(1020, params={"order": 1020})],
        "templates learned; a worker without templates misses 1017 and hits the exact text 1000",
        cls="params",
        context=_ctx,
        options={"templates": True},
        store="sqlite",
        restart=True,
        probe_options={"templates": False},
    )
)

# 13. proven: a second worker (restart) must see the template family's disagreement too
S.append(
    _sc(
        "rt8d_proven_restart_exact_disagreed_template_replays",
        REFUND_TOOLS,
        _refund_policy,
        [_r(1000), _r(1040), _r(1017), _r(1000, paused=True)],
        [_r(1025, paused=True)],
        "as rt8d_proven_exact_disagreed_template_replays, the probe on a new worker reading the events",
        context=_ctx,
        options=PROVEN_TPL,
        store="sqlite",
        restart=True,
    )
)
