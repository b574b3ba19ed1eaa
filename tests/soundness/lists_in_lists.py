"""Red-team scenarios: nested lists, parallel lists, loops whose count is a param or a page count,
category params beside output categories, wholes across steps, an answer deciding on a combination,
and two through the pydantic-ai and LangChain fronts."""

from __future__ import annotations

import dataclasses

from .harness import Answer, Call, Run, Step, Tool
from .kit import count, done, num, out, sc, word
from .relations_more_1 import grun, gsc

S = []
_N = [0]


def _id(prefix: str) -> str:
    _N[0] += 1
    return f"{prefix}-{_N[0]}x"


# 1. nested list: a hazmat item packed loose, inside a parcel (list in a list item) -------------------------


def _parcels(*items):
    return {"parcels": [{"items": [{"class": c, "packing": p} for c, p in items]}]}


def _loose_hazmat_ok(o, t):
    return not any(
        i["class"] == "hazmat" and i["packing"] == "loose" for parcel in o["parcels"] for i in parcel["items"]
    )


_NESTED_RECS = [
    ((("hazmat", "boxed"), ("general", "loose")),),
    ((("general", "loose"), ("general", "boxed")),),
]
_NESTED_PROBES = [
    ((("hazmat", "boxed"), ("general", "loose")), True),
    ((("hazmat", "loose"), ("general", "boxed")), False),
]

S.append(
    gsc(
        "rt6_nested_item_pairing_core",
        _loose_hazmat_ok,
        [grun(_parcels(*r[0])) for r in _NESTED_RECS],
        [grun(_parcels(*p), harmless=h) for p, h in _NESTED_PROBES],
        "hold a hazmat item packed loose; the items sit in a list inside each parcel (a list in a list): "
        "probe a loose hazmat item, each field seen at its place, the inner items' fields taken apart",
        cls="branches",
    )
)

# 2. nested list order: the latest event of the (one) ticket in a listing


def _tickets(*statuses):
    return {"tickets": [{"events": [{"status": s} for s in statuses]}]}


S.append(
    gsc(
        "rt6_nested_last_event_core",
        lambda o, t: o["tickets"][0]["events"][-1]["status"] != "on_hold",
        [
            grun(_tickets("created", "on_hold", "released")),
            grun(_tickets("created", "released")),
            grun(_tickets("created", "released", "on_hold", "released")),
        ],
        [
            grun(_tickets("created", "on_hold", "released"), harmless=True),
            grun(_tickets("created", "released", "on_hold")),
        ],
        "ship unless the latest event of the order's ticket is on_hold; the events are a list inside the "
        "listing's item; probe [created, released, on_hold]",
        cls="branches",
    )
)

# 3. parallel (columnar) lists: a hazmat parcel whose label is missing, the pairing by position


def _columns(classes, labels):
    return {"classes": list(classes), "labels": list(labels)}


def _columns_ok(o, t):
    return not any(
        c == "hazmat" and lab == "missing" for c, lab in zip(o["classes"], o["labels"], strict=True)
    )


S.append(
    gsc(
        "rt6_parallel_columns_core",
        _columns_ok,
        [
            grun(_columns(["general", "hazmat", "general", "general"], ["ok", "ok", "missing", "ok"])),
            grun(_columns(["general", "general", "hazmat", "general"], ["ok", "missing", "ok", "ok"])),
        ],
        [
            grun(
                _columns(["general", "hazmat", "general", "general"], ["ok", "ok", "missing", "ok"]),
                harmless=True,
            ),
            grun(_columns(["general", "general", "hazmat", "general"], ["ok", "ok", "missing", "ok"])),
        ],
        "a manifest as columns (classes[i] with labels[i], as a table tool returns): hold a hazmat parcel "
        "with a missing label; probe: the classes of run 2, the labels of run 1, each list whole seen",
        cls="branches",
    )
)

# 4. loop: add a guest n times (n a declared param), then confirm the count (n copied on)


def _add_guest(w, event: str) -> str:
    w["guests"] += 1
    return "added"


def _confirm(w, event: str, count: int) -> str:
    w["confirmed"] = count
    return "confirmed"


GUEST_TOOLS = [
    Tool("add_guest", _add_guest, check=lambda w, event: True),
    Tool("confirm_party", _confirm, check=lambda w, event, count: True),
]


def _guest_policy(text: str, ctx: str, h: list[Step]):
    e = word(text, "event")
    n = num(text, "guests")
    if count(h, "add_guest") < n:
        return Call("add_guest", {"event": e})
    if not done(h, "confirm_party"):
        return Call("confirm_party", {"event": e, "count": n})
    return Answer(f"Added {n} guests.")


def _party(n, harmless=False):
    e = _id("evt")
    return Run(
        f"for event {e} register guests {n}",
        {"guests": 0, "confirmed": None},
        {"event": e, "n": n},
        harmless=harmless,
    )


S.append(
    sc(
        "rt6_loop_count_param_core",
        "loops",
        GUEST_TOOLS,
        _guest_policy,
        [_party(3), _party(2)],
        [_party(2, harmless=True), _party(3, harmless=True), _party(4)],
        "add a guest n times (n a declared param), then confirm_party(count=n): n is copied into a call, so "
        "free; the number of add_guest calls is n too",
    )
)

# 5. loop over pages: total_pages read, export_page(page=i) for each, the last page number copied on


def _report_info(w, report: str):
    return {"report": report, "total_pages": w["pages"]}


def _export(w, report: str, page: int) -> str:
    w["exported"].append(page)
    return "exported"


PAGE_TOOLS = [
    Tool("report_info", _report_info, check=lambda w, report: True),
    Tool("export_page", _export, check=lambda w, report, page: True),
]


def _page_policy(text, ctx, h):
    r = word(text, "report")
    if not done(h, "report_info"):
        return Call("report_info", {"report": r})
    total = out(h, "report_info")["total_pages"]
    k = count(h, "export_page")
    if k < total:
        return Call("export_page", {"report": r, "page": k + 1})
    return Answer(f"Exported {total} pages.")


def _pages(n, harmless=False):
    r = _id("rep")
    return Run(
        f"export every page of report {r}", {"pages": n, "exported": []}, {"report": r}, harmless=harmless
    )


S.append(
    sc(
        "rt6_loop_page_count_core",
        "loops",
        PAGE_TOOLS,
        _page_policy,
        [_pages(2), _pages(3)],
        [_pages(3, harmless=True), _pages(4), _pages(1)],
        "export pages 1..total_pages; the last call's page equals total_pages (a whole number a tool "
        "returned flowing into a call); probe 4 pages and 1 page",
    )
)

# 6. a category param (bound into a call) beside an output category read later


def _get_ticket(w, ticket: str):
    return {"ticket": ticket, "queue": w["queue"], "age_h": w["age"]}


def _page_oncall(w, ticket: str, priority: str):
    w["done"].append(("page", priority))
    return "paged"


def _assign(w, ticket: str, priority: str):
    w["done"].append(("assign", priority))
    return "assigned"


TICKET_TOOLS = [
    Tool("get_ticket", _get_ticket, check=lambda w, ticket: True),
    Tool("page_oncall", _page_oncall, check=lambda w, ticket, priority: True),
    Tool("assign", _assign, check=lambda w, ticket, priority: True),
]


def _ticket_policy(text, ctx, h):
    t = word(text, "ticket")
    p = word(text, "priority")
    if not done(h, "get_ticket"):
        return Call("get_ticket", {"ticket": t})
    q = out(h, "get_ticket")["queue"]
    act = "page_oncall" if (p == "urgent" and q == "payments") else "assign"
    if not done(h, act):
        return Call(act, {"ticket": t, "priority": p})
    return Answer(f"{act} done.")


def _ticket(prio, queue, age, harmless=False):
    t = _id("TCK")
    return Run(
        f"route ticket {t} with priority {prio}",
        {"queue": queue, "age": age, "done": []},
        {"ticket": t, "priority": prio},
        harmless=harmless,
    )


S.append(
    sc(
        "rt6_param_category_x_output_category_core",
        "params",
        TICKET_TOOLS,
        _ticket_policy,
        [
            _ticket("urgent", "shipping", 3),
            _ticket("normal", "payments", 5),
            _ticket("normal", "shipping", 4),
        ],
        [_ticket("normal", "payments", 4, harmless=True), _ticket("urgent", "payments", 4)],
        "page on-call for an urgent payments ticket, else assign; the priority param is copied into the "
        "call; urgent seen with shipping, payments with normal; probe urgent + payments",
    )
)

# 7. three reads: the category at step 0 and the one at step 2 decide together; step 1 a number


def _three_tools():
    def get_account(w, case: str):
        return {"case": case, "plan": w["plan"]}

    def get_usage(w, case: str):
        return {"case": case, "gb": w["gb"]}

    def get_flags(w, case: str):
        return {"case": case, "abuse": w["abuse"]}

    def renew(w, case: str):
        w["done"].append("renew")
        return "ok"

    def suspend(w, case: str):
        w["done"].append("suspend")
        return "ok"

    return [
        Tool("get_account", get_account, check=lambda w, case: True),
        Tool("get_usage", get_usage, check=lambda w, case: True),
        Tool("get_flags", get_flags, check=lambda w, case: True),
        Tool("renew", renew, check=lambda w, case: True),
        Tool("suspend", suspend, check=lambda w, case: True),
    ]


def _three_policy(text, ctx, h):
    c = word(text, "case")
    for tool in ("get_account", "get_usage", "get_flags"):
        if not done(h, tool):
            return Call(tool, {"case": c})
    plan = out(h, "get_account")["plan"]
    abuse = out(h, "get_flags")["abuse"]
    act = "suspend" if (plan == "trial" and abuse == "suspected") else "renew"
    if not done(h, act):
        return Call(act, {"case": c})
    return Answer(f"{act} done.")


def _three(plan, gb, abuse, harmless=False):
    c = _id("cs")
    return Run(
        f"renew case {c}",
        {"plan": plan, "gb": gb, "abuse": abuse, "done": []},
        {"case": c},
        harmless=harmless,
    )


S.append(
    sc(
        "rt6_three_steps_whole_core",
        "branches",
        _three_tools(),
        _three_policy,
        [
            _three(
                "trial",
                10,
                "none",
            ),
            _three("pro", 20, "suspected"),
            _three("trial", 30, "none"),
            _three("pro", 15, "none"),
        ],
        [_three("trial", 25, "none", harmless=True), _three("trial", 15, "suspected")],
        "suspend a trial account suspected of abuse; trial seen with no abuse, suspected with pro; the probe's "
        "step 1 number matches no run exactly (evidence from step 1), step 2 the pro run's",
    )
)

# 8. the answer (no tool action) decides on a combination read in two outputs


def _eligibility_policy(text, ctx, h):
    c = word(text, "case")
    if not done(h, "get_customer"):
        return Call("get_customer", {"case": c})
    if not done(h, "get_policy"):
        return Call("get_policy", {"case": c})
    a, b = out(h, "get_customer"), out(h, "get_policy")
    ok = b["covers"] == "all" or a["segment"] == b["covers"]
    return Answer({"eligible": ok, "segment": a["segment"]})


def _elig_tools():
    def get_customer(w, case: str):
        return {"case": case, "segment": w["segment"], "spend": w["spend"]}

    def get_policy(w, case: str):
        return {"case": case, "covers": w["covers"]}

    return [
        Tool("get_customer", get_customer, check=lambda w, case: True),
        Tool("get_policy", get_policy, check=lambda w, case: True),
    ]


def _elig(segment, spend, covers, harmless=False):
    c = _id("cs")
    return Run(
        f"check eligibility for case {c}",
        {"segment": segment, "spend": spend, "covers": covers},
        {"case": c},
        harmless=harmless,
    )


S.append(
    sc(
        "rt6_answer_combination_core",
        "branches",
        _elig_tools(),
        _eligibility_policy,
        [_elig("retail", 100, "retail"), _elig("business", 200, "business"), _elig("business", 150, "all")],
        [_elig("retail", 120, "retail", harmless=True), _elig("retail", 150, "business")],
        "answer (no tool action) whether the policy covers the customer's segment, echoing the segment; "
        "the answer's segment is bound, so runs of both segments end with the same answer record",
    )
)

# 9-10. the nested pairing and the parallel columns through pydantic-ai and LangChain

S.append(
    dataclasses.replace(
        S[0],
        name="rt6_nested_item_pairing_pydantic_ai",
        front="pydantic_ai",
        records=[grun(_parcels(*r[0])) for r in _NESTED_RECS],
        probes=[grun(_parcels(*p), harmless=h) for p, h in _NESTED_PROBES],
    )
)
S.append(
    dataclasses.replace(
        S[2],
        name="rt6_parallel_columns_langchain",
        front="langchain",
        records=[dataclasses.replace(r, text=r.text) for r in S[2].records],
        probes=list(S[2].probes),
    )
)
