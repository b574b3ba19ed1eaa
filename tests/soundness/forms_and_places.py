"""Red-team scenarios: values copied out of JSON texts, identities' shapes, failed attempts,
items placed from a list's end or by their categories, param orders, and proven mode."""

from __future__ import annotations

import dataclasses
import json

from .harness import Answer, Call, Run, Scenario, Tool
from .kit import count, done, out, word
from .parts_and_shapes import act_tool_body, flow, flow_run, flow_tools

S: list[Scenario] = []
_N = [0]
T = lambda *a, **k: True  # noqa: E731


def _id(prefix: str) -> str:
    _N[0] += 1
    return f"{prefix}-{_N[0]}x"


def _front(s: Scenario, front: str) -> Scenario:
    return dataclasses.replace(s, name=s.name.rsplit("_", 1)[0] + "_" + front, front=front)


def _flow_sc(name, compute, recs, probes, doc, front="core", cls="computed", **kw):
    return Scenario(name, cls, front, flow_tools(), flow(compute), recs, probes, doc=doc, **kw)


# 1. lower-cased email, every run's email already lower case ------------------------------------------------
S.append(
    _flow_sc(
        "rt9e_email_lowered_core",
        lambda o: o["email"].lower(),
        [flow_run({"email": "ann@x.io"}), flow_run({"email": "bob@y.io"}), flow_run({"email": "cy@z.io"})],
        [flow_run({"email": "dan@w.io"}, harmless=True), flow_run({"email": "Eve.Doe@W.io"})],
        "act(value=email.lower()); every run's email was lower case, so lower() and the whole agree; "
        "probe 'Eve.Doe@W.io' -> agent 'eve.doe@w.io'",
        cls="identities",
    )
)

# 2. blanks inside a name collapsed -----------------------------------------------------------------------
S.append(
    _flow_sc(
        "rt9e_inner_blanks_collapsed_core",
        lambda o: " ".join(o["name"].split()),
        [flow_run({"name": "Mary Ann"}), flow_run({"name": "Jo Beth"}), flow_run({"name": "Li Na"})],
        [
            flow_run({"name": "Ana Sofia"}, harmless=True),
            flow_run({"name": "Ana  Sofia"}),
            flow_run({"name": "Ana\tSofia"}),
        ],
        "act(value=' '.join(name.split())); every run's name was two words one blank apart; "
        "probe two blanks (or a tab) inside: the shape 'several words' holds, the agent's value differs",
        cls="identities",
    )
)

# 3. int() of a float that was whole in every run --------------------------------------------------------
S.append(
    _flow_sc(
        "rt9e_int_of_whole_float_core",
        lambda o: int(o["kg"]),
        [flow_run({"kg": 2.0}), flow_run({"kg": 3.0}), flow_run({"kg": 4.0})],
        [flow_run({"kg": 3.0}, harmless=True), flow_run({"kg": 2.5}), flow_run({"kg": 3.75})],
        "act(value=int(kg)); every run's kg was a whole float (2.0), so int(kg) == kg; probe 2.5",
        cls="value_kinds",
    )
)

# 3b. the same, read out of a JSON text ---------------------------------------------------------------------
S.append(
    _flow_sc(
        "rt9e_json_int_of_whole_float_core",
        lambda o: int(json.loads(o)["kg"]),
        [
            flow_run(json.dumps({"kg": 2.0})),
            flow_run(json.dumps({"kg": 3.0})),
            flow_run(json.dumps({"kg": 4.0})),
        ],
        [flow_run(json.dumps({"kg": 3.0}), harmless=True), flow_run(json.dumps({"kg": 2.5}))],
        "act(value=int(json.loads(out)['kg'])); every run's kg was a whole float in the JSON text; probe 2.5",
        cls="value_kinds",
    )
)

# 4. 'n/a' as no email: the agent falls back ---------------------------------------------------------------
S.append(
    _flow_sc(
        "rt9e_na_email_fallback_core",
        lambda o: o["email"] if o["email"].lower() not in ("n/a", "none", "-") else o["backup"],
        [
            flow_run({"email": "a@x.io", "backup": "b@x.io"}),
            flow_run({"email": "c@y.io", "backup": "d@y.io"}),
            flow_run({"email": "e@z.io", "backup": "f@z.io"}),
        ],
        [
            flow_run({"email": "g@w.io", "backup": "h@w.io"}, harmless=True),
            flow_run({"email": "n/a", "backup": "h@w.io"}),
        ],
        "act(value=email unless it is 'n/a', else backup); probe email 'n/a'",
        cls="identities",
    )
)

# 5. JSON inside JSON: a status inside the payload text decides -------------------------------------------


def _nested(order, status):
    return json.dumps({"ok": True, "payload": json.dumps({"order_id": order, "status": status})})


def _nested_policy(o):
    inner = json.loads(json.loads(o)["payload"])
    return inner["order_id"] if inner["status"] == "paid" else None


S.append(
    _flow_sc(
        "rt9e_json_in_json_status_core",
        _nested_policy,
        [
            flow_run(_nested("o-11a", "paid")),
            flow_run(_nested("o-12b", "paid")),
            flow_run(_nested("o-13c", "paid")),
        ],
        [flow_run(_nested("o-14d", "paid"), harmless=True), flow_run(_nested("o-15e", "refunded"))],
        "act(order_id) out of a JSON text inside a JSON text when its status is paid; probe refunded",
        cls="output_shapes",
    )
)


# 6. a JSON list of offers, the cheapest picked; prices written with trailing zeros (19.90) ----------------


def _offers_text(prices):
    items = ", ".join(f'{{"id": "{_id("of")}", "price": {p:.2f}}}' for p in prices)
    return "[" + items + "]"


def _cheapest(o):
    offers = json.loads(o)
    return min(offers, key=lambda x: x["price"])["id"]


S.append(
    _flow_sc(
        "rt9e_json_cheapest_decimals_core",
        _cheapest,
        [
            flow_run(_offers_text([10.5, 20.1])),
            flow_run(_offers_text([5.5, 30.2, 40.0])),
            flow_run(_offers_text([7.0, 9.9])),
        ],
        [flow_run(_offers_text([8.5, 22.0]), harmless=True), flow_run(_offers_text([20.0, 10.5]))],
        "act(id of the cheapest) out of a JSON text whose prices are written 10.50: every run's cheapest first",
        cls="choices",
    )
)

# 7. a JSON list of offers, plain prices, the cheapest picked; reordered ----------------------------------
S.append(
    _flow_sc(
        "rt9e_json_cheapest_plain_core",
        _cheapest,
        [
            flow_run(json.dumps([{"id": _id("of"), "price": 10}, {"id": _id("of"), "price": 20}])),
            flow_run(json.dumps([{"id": _id("of"), "price": 5}, {"id": _id("of"), "price": 30}])),
        ],
        [
            flow_run(
                json.dumps([{"id": _id("of"), "price": 7}, {"id": _id("of"), "price": 25}]), harmless=True
            ),
            flow_run(json.dumps([{"id": _id("of"), "price": 25}, {"id": _id("of"), "price": 7}])),
        ],
        "act(id of the cheapest) out of a JSON text list; probe cheapest second",
        cls="choices",
    )
)

# 8. JSON text with a key written twice: an agent reading the text takes the first -----------------------


def _first_id(o):
    import re

    return re.search(r'"order_id": "([^"]*)"', o).group(1)


def _dup(first, second=None):
    if second is None:
        return json.dumps({"order_id": first, "state": "open"})
    return f'{{"order_id": "{first}", "state": "open", "order_id": "{second}"}}'


S.append(
    _flow_sc(
        "rt9e_json_key_twice_core",
        _first_id,
        [flow_run(_dup("o-21a")), flow_run(_dup("o-22b")), flow_run(_dup("o-23c"))],
        [flow_run(_dup("o-24d"), harmless=True), flow_run(_dup("o-25e", "o-26f"))],
        "act(the first order_id written in the text); probe writes order_id twice (json.loads keeps the last)",
        cls="output_shapes",
    )
)

# 9. a value copied out of JSON equal to another field in every run -----------------------------------------


def _two(a, b):
    return json.dumps({"order_id": a, "parent_id": b, "n": 1})


S.append(
    _flow_sc(
        "rt9e_json_copied_equals_other_field_core",
        lambda o: json.loads(o)["parent_id"],
        [flow_run(_two("o-31a", "o-31a")), flow_run(_two("o-32b", "o-32b"))],
        [flow_run(_two("o-33c", "o-33c"), harmless=True), flow_run(_two("o-34d", "o-35e"))],
        "act(parent_id) out of a JSON text; order_id equalled it in every run; probe they differ",
        cls="identities",
    )
)


# 10. fallback tool after the primary raised: the raise is filed under another tool's step ------------------


class Down(Exception):
    pass


def _primary(w, order: str) -> str:
    if w["primary_down"]:
        raise Down("primary gateway down")
    w["log"].append(("primary", order))
    return "charged"


def _backup(w, order: str) -> str:
    w["log"].append(("backup", order))
    return "charged"


def _fallback_policy(text, ctx, h):
    o = word(text, "order")
    if not done(h, "primary_charge"):
        return Call("primary_charge", {"order": o})
    last = out(h, "primary_charge")
    if isinstance(last, str) and last.startswith("Error") and not done(h, "backup_charge"):
        return Call("backup_charge", {"order": o})
    return Answer("charged")


def _fb_run(down, harmless=False):
    o = _id("or")
    return Run(f"charge order {o}", {"primary_down": down, "log": []}, {"order": o}, harmless=harmless)


S.append(
    Scenario(
        "rt9e_fallback_after_raise_core",
        "tool_errors",
        "core",
        [Tool("primary_charge", _primary, check=T), Tool("backup_charge", _backup, check=T)],
        _fallback_policy,
        [_fb_run(True), _fb_run(True), _fb_run(True)],
        [_fb_run(True, harmless=True), _fb_run(False)],
        doc="the primary gateway raised in every run and the agent charged through the backup; probe: the "
        "primary works, the agent charges there only",
    )
)


# 11. a retried call with a smaller amount after a limit error --------------------------------------------


class Limit(Exception):
    pass


def _charge(w, account: str, amount: int) -> str:
    if amount > w["limit"]:
        raise Limit(f"over the limit of {w['limit']}")
    w["log"].append(("charge", account, amount))
    return "charged"


def _limit_policy(text, ctx, h):
    a = word(text, "account")
    tries = [args for name, args, o in h if name == "charge_card"]
    if not tries:
        return Call("charge_card", {"account": a, "amount": 100})
    last = out(h, "charge_card")
    if isinstance(last, str) and last.startswith("Error") and len(tries) == 1:
        return Call("charge_card", {"account": a, "amount": 50})
    return Answer("charged" if last == "charged" else "failed")


def _lim_run(limit, harmless=False):
    a = _id("ac")
    return Run(f"charge account {a}", {"limit": limit, "log": []}, {"account": a}, harmless=harmless)


S.append(
    Scenario(
        "rt9e_retry_smaller_amount_core",
        "tool_errors",
        "core",
        [Tool("charge_card", _charge, check=T)],
        _limit_policy,
        [_lim_run(60), _lim_run(70), _lim_run(80)],
        [_lim_run(75, harmless=True), _lim_run(200)],
        doc="charge 100; over the limit it raises and the agent charges 50; probe: 100 goes through at once",
    )
)


# 12. a read that raised another kind of error once: the agent gives up on 'denied' -----------------------


class Busy(Exception):
    pass


class Denied(Exception):
    pass


def _flaky_read(w, key: str):
    if w["fail"]:
        why = w["fail"].pop(0)
        raise (Busy if why == "busy" else Denied)(why)
    return {"rate": w["rate"]}


def _flaky_policy(text, ctx, h):
    k = word(text, "key")
    last = out(h, "read")
    if not done(h, "read"):
        return Call("read", {"key": k})
    if isinstance(last, str):
        if "Denied" in last:
            return Answer("denied")
        if count(h, "read") < 3:
            return Call("read", {"key": k})
        return Answer("gave up")
    if not done(h, "act"):
        return Call("act", {"key": k, "value": last["rate"]})
    return Answer("set")


def _fl_run(fail, rate, harmless=False):
    k = _id("k")
    return Run(f"rate key {k}", {"fail": list(fail), "rate": rate, "acts": []}, {"key": k}, harmless=harmless)


S.append(
    Scenario(
        "rt9e_retry_other_error_core",
        "tool_errors",
        "core",
        [Tool("read", _flaky_read, check=lambda w, key: True), Tool("act", act_tool_body, check=T)],
        _flaky_policy,
        [_fl_run(["busy"], 10), _fl_run(["busy"], 12), _fl_run([], 11)],
        [_fl_run(["busy"], 11, harmless=True), _fl_run(["denied"], 11), _fl_run(["denied", "busy"], 11)],
        doc="read raises busy once and the agent retries; probe: it raises denied, the agent stops",
    )
)


# 13. the eu host's load against a quota: two eu hosts in the probe ---------------------------------------


def _hosts(w, fleet: str):
    return [dict(h) for h in w["hosts"]]


def _certify(w, fleet: str) -> str:
    w["log"].append(("certify", fleet))
    return "certified"


def _eu_policy(text, ctx, h):
    f = word(text, "fleet")
    if not done(h, "list_hosts"):
        return Call("list_hosts", {"fleet": f})
    if any(x["zone"] == "eu" and x["load"] > 50 for x in out(h, "list_hosts")):
        return Answer("eu over quota")
    if not done(h, "certify"):
        return Call("certify", {"fleet": f})
    return Answer("certified")


def _eu_run(hosts, harmless=False):
    f = _id("fl")
    return Run(
        f"certify fleet {f} if no eu host is over 50",
        {"hosts": [{"zone": z, "load": n} for z, n in hosts], "log": []},
        {"fleet": f},
        harmless=harmless,
    )


S.append(
    Scenario(
        "rt9e_category_shared_in_probe_core",
        "lists",
        "core",
        [Tool("list_hosts", _hosts, check=T), Tool("certify", _certify, check=T)],
        _eu_policy,
        [
            _eu_run([("us", 70), ("eu", 30)]),
            _eu_run([("eu", 20), ("us", 80), ("us", 60)]),
            _eu_run([("us", 65), ("us", 75), ("eu", 40)]),
        ],
        [
            _eu_run([("us", 66), ("eu", 35)], harmless=True),
            _eu_run([("eu", 70), ("eu", 30), ("us", 60)]),
            _eu_run([("eu", 25), ("eu", 75)]),
        ],
        doc="certify unless an eu host's load is over 50; one eu host per run, at moving places; probe two eu "
        "hosts, one over 50, each load within its position's range",
    )
)

# 14. the newest reading ([-1]) against a limit; the probe's list grew at the front ----------------------


def _readings(w, meter: str):
    return {"limit": w["limit"], "readings": list(w["r"])}


def _ok(w, meter: str) -> str:
    w["log"].append(("ok", meter))
    return "ok"


def _first_policy(text, ctx, h):
    m = word(text, "meter")
    if not done(h, "readings"):
        return Call("readings", {"meter": m})
    o = out(h, "readings")
    if o["readings"][0] > o["limit"]:  # the oldest reading decides (a baseline)
        return Answer("baseline over")
    if not done(h, "approve"):
        return Call("approve", {"meter": m})
    return Answer("approved")


def _m_run(limit, r, harmless=False):
    m = _id("m")
    return Run(f"approve meter {m}", {"limit": limit, "r": r, "log": []}, {"meter": m}, harmless=harmless)


S.append(
    Scenario(
        "rt9e_first_reading_list_grew_core",
        "lists",
        "core",
        [Tool("readings", _readings, check=T), Tool("approve", _ok, check=T)],
        _first_policy,
        [_m_run(50, [10, 60]), _m_run(55, [20, 30, 70]), _m_run(40, [30, 20]), _m_run(60, [5, 70, 10, 40])],
        [
            _m_run(50, [12, 58], harmless=True),
            _m_run(50, [45, 30, 20, 10], harmless=True),
            _m_run(45, [52, 10]),
        ],
        doc="approve when the oldest reading is under the limit; lists of 2-4 readings; probes harmless with "
        "the newest under the limit (never seen with [-1]), and one with the oldest over",
    )
)

# 15. the same cheapest pick out of a list (not a JSON text): the control of 7 ---------------------------
S.append(
    _flow_sc(
        "rt9e_list_cheapest_plain_core",
        lambda o: min(o, key=lambda x: x["price"])["id"],
        [
            flow_run([{"id": _id("of"), "price": 10}, {"id": _id("of"), "price": 20}]),
            flow_run([{"id": _id("of"), "price": 5}, {"id": _id("of"), "price": 30}]),
        ],
        [
            flow_run([{"id": _id("of"), "price": 7}, {"id": _id("of"), "price": 25}], harmless=True),
            flow_run([{"id": _id("of"), "price": 25}, {"id": _id("of"), "price": 7}]),
        ],
        "act(id of the cheapest) out of a list; probe cheapest second (the control of the JSON text)",
        cls="choices",
    )
)


# 16. three declared params: approve when a + b is within the budget c -------------------------------------


def _approve(w, order: str) -> str:
    w["log"].append(("approve", order))
    return "approved"


def _sum_policy(text, ctx, h):
    import re

    o = word(text, "order")
    a, b, c = (int(x) for x in re.findall(r"(\d+)", text.split("order")[0] + text.split(o)[1])[:3])
    if a + b <= c and not done(h, "approve"):
        return Call("approve", {"order": o})
    return Answer("approved" if done(h, "approve") else "over budget")


def _sum_run(a, b, c, harmless=False):
    o = _id("or")
    return Run(
        f"costs {a} and {b}, budget {c}: approve order {o} if within",
        {"log": []},
        {"a": a, "b": b, "c": c, "order": o},
        harmless=harmless,
    )


S.append(
    Scenario(
        "rt9e_three_params_sum_core",
        "params",
        "core",
        [Tool("approve", _approve, check=T)],
        _sum_policy,
        [
            _sum_run(10, 20, 100),
            _sum_run(40, 30, 90),
            _sum_run(25, 45, 80),
            _sum_run(15, 35, 70),
            _sum_run(33, 12, 60),
        ],
        [_sum_run(21, 31, 95, harmless=True), _sum_run(44, 43, 85)],
        doc="approve when a + b <= c, three declared params, each pair's order the same in every run; "
        "probe each pair in order, the sum over",
    )
)


# 17. a name copied whole: runs title case, probe mixed case (a cost of keeping case in the shape) --------
S.append(
    _flow_sc(
        "rt9e_name_copied_mixed_case_core",
        lambda o: o["name"],
        [flow_run({"name": "Maria"}), flow_run({"name": "Jose"}), flow_run({"name": "Lucia"})],
        [flow_run({"name": "Pedro"}, harmless=True), flow_run({"name": "McDonald"}, harmless=True)],
        "act(value=name) copied whole; a mixed-case name where runs saw title case is harmless",
        cls="identities",
    )
)

# 18. the eu host's load: a harmless probe whose us host is alone in its zone (one run had that) ----------
S.append(
    Scenario(
        "rt9e_category_place_one_run_core",
        "lists",
        "core",
        [Tool("list_hosts", _hosts, check=T), Tool("certify", _certify, check=T)],
        _eu_policy,
        [
            _eu_run([("us", 70), ("eu", 30)]),
            _eu_run([("eu", 20), ("us", 80), ("us", 60)]),
            _eu_run([("us", 65), ("us", 75), ("eu", 40)]),
            _eu_run([("us", 62), ("eu", 25)]),
        ],
        [_eu_run([("us", 66), ("eu", 35)], harmless=True), _eu_run([("us", 64), ("eu", 28)], harmless=True)],
        doc="certify unless an eu host is over 50; the us host's load (not weighed) is judged at "
        "[=zone:us] by the two runs where it stood alone in its zone",
        tradeoff=None,
    )
)

for _name, _f in (
    ("rt9e_email_lowered_core", "mcp_proxy"),
    ("rt9e_email_lowered_core", "langchain"),
    ("rt9e_inner_blanks_collapsed_core", "pydantic_ai"),
    ("rt9e_inner_blanks_collapsed_core", "mcp_proxy"),
    ("rt9e_na_email_fallback_core", "smolagents"),
):
    S.append(_front(next(s for s in S if s.name == _name), _f))


# 19. rounded to the nearest half: every run's kg was on the half grid, the probe's has as many decimals ---
S.append(
    _flow_sc(
        "rt9e_round_to_half_core",
        lambda o: round(o["kg"] * 2) / 2,
        [flow_run({"kg": 2.5}), flow_run({"kg": 3.5}), flow_run({"kg": 4.0}), flow_run({"kg": 1.5})],
        [flow_run({"kg": 3.0}, harmless=True), flow_run({"kg": 3.2})],
        "act(value=kg rounded to the nearest half); every run's kg was a half already; probe 3.2 (one "
        "decimal, as the runs had) -> agent 3.0",
        cls="value_kinds",
    )
)
