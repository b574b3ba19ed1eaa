"""Red-team scenarios (round 13): the three newest rules.

1. a value a run saw as it is selects its way over a masked identity (literal_match, taken_elsewhere);
2. an entry a param names is judged where the param points (_param_places);
3. a number param copied only into the answer is not free (_unproven_number).
"""

from __future__ import annotations

from .harness import Answer, Call, Run, Scenario, Tool
from .kit import done, out, word

S: list[Scenario] = []
_N = [0]


def _id(prefix: str = "t") -> str:
    _N[0] += 1
    return f"{prefix}{_N[0]}x"


def _sc(name, cls, tools, policy, records, probes, doc, front="core", **kw) -> Scenario:
    s = Scenario(f"rt13_{name}_{front}", cls, front, tools, policy, records, probes, doc=doc, **kw)
    S.append(s)
    return s


def _log(name: str):
    def act(w, **kw):
        w.setdefault("log", []).append((name, kw))
        return "ok"

    act.__name__ = name
    return act


# ---- 1. literal over masked ---------------------------------------------------------------------------------


def verdict(w, case: str) -> str:
    return w["verdict"]


def verdict_obj(w, case: str) -> dict:
    return {"verdict": w["verdict"], "flag": w.get("flag", False), "ts": w.get("ts", "2024-05-01T10:00:00Z")}


def pol_verdict(text, ctx, h):
    c = word(text, "case")
    if not done(h, "verdict"):
        return Call("verdict", {"case": c})
    v = out(h, "verdict")
    if v == "ok":
        if not done(h, "file"):
            return Call("file", {"case": c})
        return Answer("filed")
    return Answer(f"verdict {v}")


def _v_run(v, region="eu", harmless=False, **extra):
    c = _id("c")
    return Run(f"review case {c}", {"verdict": v, "region": region, **extra}, {"case": c}, harmless=harmless)


T_V = [Tool("verdict", verdict), Tool("file", _log("file"))]
T_V_CHECKED = [
    Tool("verdict", verdict, check=lambda w, case: w["region"]),
    Tool("file", _log("file"), check=lambda w, case: w["region"]),
]

_sc(
    "literal_three_runs_two_masked",
    "identities",
    T_V,
    pol_verdict,
    [_v_run("ok"), _v_run("ok2"), _v_run("zz9")],
    [_v_run("ok"), _v_run("qq7", harmless=True)],
    doc="ok filed (oldest), two runs pass other verdicts on; probe ok: files",
)
_sc(
    "literal_other_checked_state",
    "identities",
    T_V_CHECKED,
    pol_verdict,
    [_v_run("ok", region="us"), _v_run("ok2", region="eu")],
    [_v_run("ok", region="eu"), _v_run("ok", region="us", harmless=True)],
    doc="the run that saw ok literally was in region us (another pre-check); probe ok in eu: agent files",
)
_sc(
    "literal_other_checked_state_two",
    "identities",
    T_V_CHECKED,
    pol_verdict,
    [_v_run("ok", region="us"), _v_run("ok2", region="eu"), _v_run("ok3", region="eu")],
    [_v_run("ok", region="eu")],
    doc="as above with two masked runs in eu",
)


def pol_verdict_flag(text, ctx, h):
    c = word(text, "case")
    if not done(h, "verdict_obj"):
        return Call("verdict_obj", {"case": c})
    o = out(h, "verdict_obj")
    if o["flag"]:
        if not done(h, "file"):
            return Call("file", {"case": c})
        return Answer("filed")
    return Answer(f"verdict {o['verdict']}")


T_VO = [Tool("verdict_obj", verdict_obj), Tool("file", _log("file"))]
_sc(
    "literal_run_other_leaves_differ",
    "identities",
    T_VO,
    pol_verdict_flag,
    [
        _v_run("ok", flag=True, ts="2024-05-01T10:00:00Z"),
        _v_run("ok2", flag=False, ts="2024-05-02T10:00:00Z"),
        _v_run("zz3", flag=False, ts="2024-05-03T10:00:00Z"),
    ],
    [
        _v_run("ok", flag=False, ts="2024-05-02T12:00:00Z", harmless=True),
        _v_run("ok", flag=True, ts="2024-05-02T12:00:00Z"),
    ],
    doc="the flag decides, not the verdict; ok was seen literally in a flagged run; probe ok unflagged: harmless",
)


def pol_verdict_tier(text, ctx, h):
    c = word(text, "case")
    tier = word(text, "tier")
    if not done(h, "verdict"):
        return Call("verdict", {"case": c})
    v = out(h, "verdict")
    if v == "ok" and tier == "gold":
        if not done(h, "file"):
            return Call("file", {"case": c})
        return Answer("filed")
    return Answer(f"verdict {v}")


def _vt_run(v, tier, harmless=False):
    c = _id("c")
    return Run(
        f"review case {c} tier {tier}",
        {"verdict": v, "region": "eu"},
        {"case": c, "tier": tier},
        harmless=harmless,
    )


_sc(
    "literal_run_other_param",
    "identities",
    T_V,
    pol_verdict_tier,
    [_vt_run("ok", "gold"), _vt_run("ok2", "silver"), _vt_run("zz", "silver")],
    [_vt_run("ok", "silver", harmless=True), _vt_run("ok", "gold")],
    doc="filing needs ok and tier gold; ok was seen literally by a gold run; probe ok silver: answers",
)


def stock_count(w, sku: str) -> int:
    return w["count"]


def pol_count(text, ctx, h):
    s = word(text, "sku")
    if not done(h, "stock_count"):
        return Call("stock_count", {"sku": s})
    n = out(h, "stock_count")
    if n == 0:
        if not done(h, "restock"):
            return Call("restock", {"sku": s})
        return Answer("restocked")
    return Answer(f"count {n}")


def _c_run(n, region="eu", harmless=False):
    s = _id("sku")
    return Run(f"check sku {s}", {"count": n, "region": region}, {"sku": s}, harmless=harmless)


T_C = [Tool("stock_count", stock_count), Tool("restock", _log("restock"))]
T_C_CHECKED = [
    Tool("stock_count", stock_count, check=lambda w, sku: w["region"]),
    Tool("restock", _log("restock"), check=lambda w, sku: w["region"]),
]
_sc(
    "int_literal_zero_vs_handles",
    "identities",
    T_C,
    pol_count,
    [_c_run(0), _c_run(5), _c_run(17)],
    [_c_run(0), _c_run(9, harmless=True)],
    doc="an int count passed on whole (a handle?) and 0 seen literally; probe 0: restock",
)
_sc(
    "int_literal_other_checked_state",
    "identities",
    T_C_CHECKED,
    pol_count,
    [_c_run(0, region="us"), _c_run(5, region="eu"), _c_run(17, region="eu")],
    [_c_run(0, region="eu")],
    doc="0 seen literally only in region us; probe 0 in eu: restock",
)


def pol_verdict_equal_passed(text, ctx, h):
    """The verdict equal to the case's own reference (passed on) is filed."""
    c = word(text, "case")
    if not done(h, "verdict"):
        return Call("verdict", {"case": c})
    v = out(h, "verdict")
    if v == c:
        if not done(h, "file"):
            return Call("file", {"case": c})
        return Answer("filed")
    return Answer(f"verdict {v}")


def _ve_run(v_is_case, harmless=False):
    c = _id("c")
    return Run(
        f"review case {c}",
        {"verdict": c if v_is_case else _id("v"), "region": "eu"},
        {"case": c},
        harmless=harmless,
    )


_sc(
    "literal_equal_to_passed_param",
    "identities",
    T_V,
    pol_verdict_equal_passed,
    [_ve_run(True), _ve_run(False), _ve_run(False)],
    [_ve_run(True), _ve_run(False, harmless=True)],
    doc="the verdict equal to the case id is filed; other verdicts echoed",
)


# ---- 2. entries a param names ----------------------------------------------------------------------------------


def accounts(w, team: str) -> dict:
    return {"users": {k: dict(v) for k, v in w["users"].items()}}


def pol_user_status(text, ctx, h):
    u = word(text, "user")
    if not done(h, "accounts"):
        return Call("accounts", {"team": "core"})
    st = out(h, "accounts")["users"][u]["status"]
    tool = "grant" if st == "active" else "deny"
    if not done(h, tool):
        return Call(tool, {"user": u})
    return Answer(tool)


def _u_run(mine, others, harmless=False):
    u = _id("u")
    users = {_id("u"): {"status": s} for s in others}
    users[u] = {"status": mine}
    users = dict(sorted(users.items()))
    return Run(f"grant access to user {u}", {"users": users}, {"user": u}, harmless=harmless)


T_U = [Tool("accounts", accounts), Tool("grant", _log("grant")), Tool("deny", _log("deny"))]
_sc(
    "id_keyed_nested_dict",
    "params",
    T_U,
    pol_user_status,
    [_u_run("active", ["suspended"]), _u_run("active", ["suspended"]), _u_run("active", ["suspended"])],
    [_u_run("suspended", ["active"]), _u_run("active", ["suspended"], harmless=True)],
    doc="a dict keyed by user ids (not category words); the user's entry always active; probe: suspended",
)


def calendar(w, site: str) -> dict:
    return {"by_day": dict(w["by_day"])}


def pol_prev_day(text, ctx, h):
    import datetime as dt

    day = word(text, "on")
    if not done(h, "calendar"):
        return Call("calendar", {"site": "s1"})
    prev = (dt.date.fromisoformat(day) - dt.timedelta(days=1)).isoformat()
    tool = "defer" if out(h, "calendar")["by_day"].get(prev, 0) > 100 else "schedule"
    if not done(h, tool):
        return Call(tool, {"day": day})
    return Answer(tool)


def _pd_run(day, loads, harmless=False):
    import datetime as dt

    d = dt.date.fromisoformat(day)
    by_day = {(d + dt.timedelta(days=i - 1)).isoformat(): v for i, v in enumerate(loads)}
    return Run(f"plan the crew on {day}", {"by_day": by_day}, {"day": day}, harmless=harmless)


T_PD = [Tool("calendar", calendar), Tool("defer", _log("defer")), Tool("schedule", _log("schedule"))]
_sc(
    "date_keyed_previous_day",
    "params",
    T_PD,
    pol_prev_day,
    [
        _pd_run("2024-05-02", [10, 150, 20]),
        _pd_run("2024-05-09", [20, 30, 160]),
        _pd_run("2024-05-15", [30, 170, 140]),
    ],
    [_pd_run("2024-05-20", [150, 10, 20]), _pd_run("2024-05-21", [25, 150, 20], harmless=True)],
    doc="the load the day BEFORE the param decides; it was low in every run; probe: it is high",
)


def pol_day_missing(text, ctx, h):
    day = word(text, "on")
    if not done(h, "calendar"):
        return Call("calendar", {"site": "s1"})
    tool = "defer" if out(h, "calendar")["by_day"].get(day, 0) > 100 else "schedule"
    if not done(h, tool):
        return Call(tool, {"day": day})
    return Answer(tool)


def _dm_run(day, by_day, harmless=False):
    return Run(f"plan the crew on {day}", {"by_day": by_day}, {"day": day}, harmless=harmless)


_sc(
    "date_key_only_in_some_runs",
    "params",
    T_PD,
    pol_day_missing,
    [
        _dm_run("2024-05-02", {"2024-05-02": 10, "2024-05-03": 150}),
        _dm_run("2024-05-09", {"2024-05-08": 160, "2024-05-10": 170}),
        _dm_run("2024-05-15", {"2024-05-15": 30, "2024-05-16": 200}),
    ],
    [
        _dm_run("2024-05-20", {"2024-05-20": 150, "2024-05-21": 10}),
        _dm_run("2024-05-22", {"2024-05-21": 150, "2024-05-23": 110}, harmless=True),
    ],
    doc="the param's day is absent from some runs' dicts (load 0); probe: present and high",
)


def pol_cat_nested(text, ctx, h):
    cat = word(text, "category")
    if not done(h, "budgets"):
        return Call("budgets", {"team": "t"})
    b = out(h, "budgets")["regions"]["eu"][cat]
    tool = "approve" if b["left"] >= 50 else "reject"
    if not done(h, tool):
        return Call(tool, {"category": cat})
    return Answer(tool)


def budgets(w, team: str) -> dict:
    return {"regions": {r: {c: dict(v) for c, v in cs.items()} for r, cs in w["regions"].items()}}


def _cat_run(cat, eu, us, harmless=False):
    return Run(
        f"buy for category {cat}",
        {"regions": {"eu": eu, "us": us}},
        {"category": cat},
        harmless=harmless,
    )


T_CAT = [Tool("budgets", budgets), Tool("approve", _log("approve")), Tool("reject", _log("reject"))]
_sc(
    "category_key_nested_twice",
    "params",
    T_CAT,
    pol_cat_nested,
    [
        _cat_run(
            "travel",
            {"travel": {"left": 80}, "food": {"left": 10}},
            {"travel": {"left": 5}, "food": {"left": 90}},
        ),
        _cat_run(
            "food",
            {"travel": {"left": 20}, "food": {"left": 70}},
            {"travel": {"left": 95}, "food": {"left": 3}},
        ),
        _cat_run(
            "travel",
            {"travel": {"left": 60}, "food": {"left": 5}},
            {"travel": {"left": 1}, "food": {"left": 99}},
        ),
    ],
    [
        _cat_run(
            "food",
            {"travel": {"left": 80}, "food": {"left": 10}},
            {"travel": {"left": 5}, "food": {"left": 90}},
        ),
        _cat_run(
            "travel",
            {"travel": {"left": 70}, "food": {"left": 15}},
            {"travel": {"left": 2}, "food": {"left": 80}},
            harmless=True,
        ),
    ],
    doc="the eu entry the category names decides; probe: food in eu is low (us food high)",
)


def lines(w, order: str) -> dict:
    return {"lines": [dict(x) for x in w["lines"]]}


def pol_line_1based(text, ctx, h):
    import re

    o = word(text, "order")
    ln = int(re.search(r"line (\d+)", text).group(1))
    if not done(h, "lines"):
        return Call("lines", {"order": o})
    tool = "ship" if out(h, "lines")["lines"][ln - 1]["state"] == "ready" else "hold"
    if not done(h, tool):
        return Call(tool, {"order": o, "line": ln})
    return Answer(tool)


def _ln_run(ln, states, harmless=False):
    o = _id("o")
    return Run(
        f"ship order {o} line {ln}",
        {"lines": [{"sku": _id("k"), "state": s} for s in states]},
        {"order": o, "line": ln},
        harmless=harmless,
    )


T_LN = [Tool("lines", lines), Tool("ship", _log("ship")), Tool("hold", _log("hold"))]
_sc(
    "line_1based_other_index_varies",
    "params",
    T_LN,
    pol_line_1based,
    [
        _ln_run(1, ["ready", "ready", "held"]),
        _ln_run(2, ["held", "ready", "ready"]),
        _ln_run(1, ["ready", "ready", "ready"]),
    ],
    [
        _ln_run(1, ["ready", "held", "ready"], harmless=True),
        _ln_run(2, ["held", "ready", "held"], harmless=True),
        _ln_run(2, ["ready", "held", "ready"]),
    ],
    doc="line n (from 1) decides; [n] from 0 was ready in every run; probe harmless: [n] held",
)


# ---- 3. a number param echoed only in the answer -----------------------------------------------------------------


def pol_refund_echo(text, ctx, h):
    o = word(text, "order")
    amount = int(word(text, "of"))
    if not done(h, "lookup"):
        return Call("lookup", {"order": o})
    if not done(h, "refund"):
        return Call("refund", {"order": o})
    return Answer(f"Refunded {amount}")


def lookup(w, order: str) -> dict:
    return {"status": w.get("status", "paid")}


def _rf_run(amount, harmless=False):
    o = _id("o")
    return Run(
        f"refund order {o} of {amount}", {"status": "paid"}, {"order": o, "amount": amount}, harmless=harmless
    )


T_RF = [Tool("lookup", lookup), Tool("refund", _log("refund"))]
_sc(
    "refund_amount_echoed",
    "params",
    T_RF,
    pol_refund_echo,
    [_rf_run(10), _rf_run(25), _rf_run(40)],
    [_rf_run(30, harmless=True), _rf_run(7, harmless=True)],
    doc="the amount param is only echoed in the answer; probe another amount: harmless",
)


def pol_invite_k(text, ctx, h):
    k = int(word(text, "invite"))
    if not done(h, "pool"):
        return Call("pool", {"team": "t"})
    people = out(h, "pool")["people"]
    sent = [a["who"] for n, a, _ in h if n == "invite"]
    todo = [p for p in people[:k] if p not in sent]
    if todo:
        return Call("invite", {"who": todo[0]})
    return Answer(f"invited {k} of {len(people)}")


def pool(w, team: str) -> dict:
    return {"people": list(w["people"])}


def _k_run(k, n, harmless=False):
    return Run(
        f"please invite {k} people", {"people": [_id("p") for _ in range(n)]}, {"k": k}, harmless=harmless
    )


T_K = [Tool("pool", pool), Tool("invite", _log("invite"))]
_sc(
    "invite_k_echo_k_not_count",
    "params",
    T_K,
    pol_invite_k,
    [_k_run(2, 5), _k_run(3, 5), _k_run(2, 4)],
    [_k_run(4, 3), _k_run(3, 6, harmless=True)],
    doc="answer echoes the requested k, not the count; probe: fewer people than k",
)


def get_tier(w, case: str) -> dict:
    return {"tier": w["tier"]}


def pol_verdict_tier_read(text, ctx, h):
    c = word(text, "case")
    if not done(h, "get_tier"):
        return Call("get_tier", {"case": c})
    if not done(h, "verdict"):
        return Call("verdict", {"case": c})
    v = out(h, "verdict")
    if v == "ok" and out(h, "get_tier")["tier"] == "gold":
        if not done(h, "file"):
            return Call("file", {"case": c})
        return Answer("filed")
    return Answer(f"verdict {v}")


def _vtr_run(v, tier, harmless=False):
    c = _id("c")
    return Run(
        f"review case {c}", {"verdict": v, "tier": tier, "region": "eu"}, {"case": c}, harmless=harmless
    )


_sc(
    "literal_run_other_earlier_read",
    "identities",
    [Tool("get_tier", get_tier), *T_V],
    pol_verdict_tier_read,
    [_vtr_run("ok", "gold"), _vtr_run("ok2", "silver"), _vtr_run("zz", "silver")],
    [_vtr_run("ok", "silver", harmless=True), _vtr_run("ok", "gold")],
    doc="filing needs ok and a gold tier read before; ok was seen literally by a gold run; probe ok silver",
)


def get_case(w, case: str) -> dict:
    return {"open": True}


def pol_verdict_tier_later(text, ctx, h):
    c = word(text, "case")
    if not done(h, "get_case"):
        return Call("get_case", {"case": c})
    return pol_verdict_tier(text, ctx, h)


_sc(
    "literal_run_other_param_later_step",
    "identities",
    [Tool("get_case", get_case), *T_V],
    pol_verdict_tier_later,
    [_vt_run("ok", "gold"), _vt_run("ok2", "silver"), _vt_run("zz", "silver")],
    [_vt_run("ok", "silver", harmless=True), _vt_run("ok", "gold")],
    doc="as literal_run_other_param, the verdict read at step 1 after a constant read",
)
_sc(
    "literal_run_other_param",
    "identities",
    T_V,
    pol_verdict_tier,
    [_vt_run("ok", "gold"), _vt_run("ok2", "silver"), _vt_run("zz", "silver")],
    [_vt_run("ok", "silver", harmless=True), _vt_run("ok", "gold")],
    doc="as literal_run_other_param through pydantic-ai",
    front="pydantic_ai",
)
_sc(
    "literal_run_other_param",
    "identities",
    T_V,
    pol_verdict_tier,
    [_vt_run("ok", "gold"), _vt_run("ok2", "silver"), _vt_run("zz", "silver")],
    [_vt_run("ok", "silver", harmless=True), _vt_run("ok", "gold")],
    doc="as literal_run_other_param through LangChain",
    front="langchain",
)


def _vt_text_run(v, tier, harmless=False):
    c = _id("c")
    return Run(f"review case {c} tier {tier}", {"verdict": v, "region": "eu"}, {"case": c}, harmless=harmless)


_sc(
    "literal_run_other_word_in_text",
    "identities",
    T_V,
    pol_verdict_tier,
    [_vt_text_run("ok", "gold"), _vt_text_run("ok2", "silver"), _vt_text_run("zz", "silver")],
    [_vt_text_run("ok", "silver", harmless=True), _vt_text_run("ok", "gold")],
    doc="as literal_run_other_param, the tier only in the task text (no param declared)",
)


def pol_count_tier(text, ctx, h):
    s = word(text, "sku")
    tier = word(text, "tier")
    if not done(h, "stock_count"):
        return Call("stock_count", {"sku": s})
    n = out(h, "stock_count")
    if n == 0 and tier == "gold":
        if not done(h, "restock"):
            return Call("restock", {"sku": s})
        return Answer("restocked")
    return Answer(f"count {n}")


def _ct_run(n, tier, harmless=False):
    s = _id("sku")
    return Run(
        f"check sku {s} tier {tier}",
        {"count": n, "region": "eu"},
        {"sku": s, "tier": tier},
        harmless=harmless,
    )


_sc(
    "int_literal_other_param",
    "identities",
    T_C,
    pol_count_tier,
    [_ct_run(0, "gold"), _ct_run(5, "silver"), _ct_run(17, "silver")],
    [_ct_run(0, "silver", harmless=True), _ct_run(0, "gold")],
    doc="restock needs count 0 and tier gold; 0 seen literally by the gold run; probe 0 silver",
)
