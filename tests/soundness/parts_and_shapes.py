"""Red-team scenarios: data flow, computed values and the shape of outputs.

Values copied out of part of a string (a split, a slice, a case change), values built from two origins,
computed values that equal an operand, outputs whose shape changes, multi-step dependencies and errors.
"""

from __future__ import annotations

import copy
import json
import re

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import count, done, out, word

S: list[Scenario] = []
_N = [0]


def _id(prefix: str) -> str:
    _N[0] += 1
    return f"{prefix}-{_N[0]}x"


# A generic two-step shape: read(key) -> output; act(key, **args) writes what it got into the world.


def _read(w, key: str):
    v = w["v"]
    if isinstance(v, Exception):
        raise v
    return copy.deepcopy(v)


def act_tool_body(w, key: str, value=None):
    w["acts"].append(value)
    return "ok"


def flow_tools():
    return [
        Tool("read", _read, check=lambda w, key: True),
        Tool("act", act_tool_body, check=lambda w, key, value=None: True),
    ]


def flow(compute):
    """read(key) then act(key, value=compute(output)); compute may return None to answer without acting."""

    def policy(text: str, ctx: str, h: list[Step]):
        k = word(text, "key")
        if not done(h, "read"):
            return Call("read", {"key": k})
        v = compute(out(h, "read"))
        if v is not None and not done(h, "act"):
            return Call("act", {"key": k, "value": v})
        return Answer(f"done {v}")

    return policy


def flow_run(v, harmless=False, text="handle key {k}"):
    k = _id("k")
    return Run(text.format(k=k), {"v": v, "acts": []}, {"key": k}, harmless=harmless)


def _flow_sc(name, compute, recs, probes, doc, front="core", cls="computed"):
    return Scenario(name, cls, front, flow_tools(), flow(compute), recs, probes, doc=doc)


# 1. capitalize() taken for title(): the engine picks the title form for "maria" -> "Maria" -------------------
for front in ("core", "langchain"):
    S.append(
        _flow_sc(
            f"rt7b_capitalize_vs_title_{front}",
            lambda o: o["name"].capitalize(),
            [flow_run({"name": "maria"}), flow_run({"name": "jose"})],
            [
                flow_run({"name": "lucia"}, harmless=True),
                flow_run({"name": "mary ann"}),
                flow_run({"name": "o'neil"}),
            ],
            "act(value=name.capitalize()); one-word names make capitalize() and title() agree; "
            "'mary ann' -> 'Mary ann' (agent) vs 'Mary Ann' (title form)",
            front=front,
        )
    )

# 2. the first word of a name, one-word names in the runs -----------------------------------------------------
S.append(
    _flow_sc(
        "rt7b_first_name_split_core",
        lambda o: o["name"].split()[0],
        [flow_run({"name": "Maria"}), flow_run({"name": "Jose"})],
        [flow_run({"name": "Lucia"}, harmless=True), flow_run({"name": "Mary Ann"})],
        "act(value=name.split()[0]); the runs' names are one word, so the value is the whole name",
    )
)

# 3. an id truncated to 8 characters, the runs' ids shorter -----------------------------------------------------
S.append(
    _flow_sc(
        "rt7b_sku_truncated_core",
        lambda o: o["sku"][:8],
        [flow_run({"sku": "AB1234"}), flow_run({"sku": "CX9911"})],
        [flow_run({"sku": "QZ5566"}, harmless=True), flow_run({"sku": "AB12345678X"})],
        "act(value=sku[:8]); the runs' skus are 6 characters, the value is the whole sku",
    )
)

# 4. an id stripped of surrounding blanks ----------------------------------------------------------------------
S.append(
    _flow_sc(
        "rt7b_id_stripped_core",
        lambda o: o["account"].strip(),
        [flow_run({"account": "acc-1001"}), flow_run({"account": "acc-2002"})],
        [flow_run({"account": "acc-3003"}, harmless=True), flow_run({"account": " acc-4004 "})],
        "act(value=account.strip()); the runs' accounts had no blanks around them",
    )
)

# 5. round to one decimal, the runs' values already had one --------------------------------------------------
for front in ("core", "pydantic_ai"):
    S.append(
        _flow_sc(
            f"rt7b_round_one_decimal_{front}",
            lambda o: round(o["kg"], 1),
            [flow_run({"kg": 2.5}), flow_run({"kg": 3.0}), flow_run({"kg": 4.2})],
            [flow_run({"kg": 3.5}, harmless=True), flow_run({"kg": 2.75}), flow_run({"kg": 3.14159})],
            "act(value=round(kg, 1)); every recorded kg had at most one decimal, so the value is kg itself",
            front=front,
        )
    )

# 6. amount + fee, fee zero in the runs that copied amount, nonzero in another ---------------------------------
S.append(
    _flow_sc(
        "rt7b_fee_zero_some_runs_core",
        lambda o: o["amount"] + o["fee"],
        [
            flow_run({"amount": 100, "fee": 0}),
            flow_run({"amount": 80, "fee": 0}),
            flow_run({"amount": 70, "fee": 5}),
        ],
        [
            flow_run({"amount": 90, "fee": 0}, harmless=True),
            flow_run({"amount": 90, "fee": 5}),
            flow_run({"amount": 70, "fee": 3}),
        ],
        "act(value=amount+fee): with fee 0 the value is bound to amount; a third run with fee 5 shows fee varies",
    )
)

# 7. a sum written in a message: the same total in every run, operands varying ------------------------------
S.append(
    _flow_sc(
        "rt7b_sum_in_message_core",
        lambda o: f"Charged {o['a'] + o['b']} in total for {o['who']}",
        [flow_run({"a": 10, "b": 20, "who": "u-17a"}), flow_run({"a": 12, "b": 18, "who": "u-29b"})],
        [
            flow_run({"a": 11, "b": 19, "who": "u-33c"}, harmless=True),
            flow_run({"a": 11, "b": 20, "who": "u-41d"}),
        ],
        "act(value=f'Charged {a+b} ... {who}'): a+b is 30 in both runs, a literal piece of a template",
    )
)

# 8. a sum inside a message beside a copied number: only one operand has an origin --------------------------
S.append(
    _flow_sc(
        "rt7b_sum_beside_operand_core",
        lambda o: f"net {o['net']} gross {o['net'] + o['tax']}",
        [flow_run({"net": 100, "tax": 0}), flow_run({"net": 80, "tax": 0})],
        [flow_run({"net": 90, "tax": 0}, harmless=True), flow_run({"net": 90, "tax": 9})],
        "act(value=f'net {net} gross {net+tax}'): tax 0 in the runs, so gross is bound to net too",
    )
)

# 9. a number read out of prose that equals a param --------------------------------------------------------


def _refund_policy(text, ctx, h):
    k = word(text, "key")
    if not done(h, "read"):
        return Call("read", {"key": k})
    found = re.search(r"refund (\d+)", out(h, "read")["note"])
    amount = int(found.group(1)) if found else 0
    if not done(h, "act"):
        return Call("act", {"key": k, "value": amount})
    return Answer(f"refunded {amount}")


def _refund_run(note, limit, harmless=False):
    k = _id("k")
    return Run(
        f"handle key {k} refunding at most {limit}",
        {"v": {"note": note}, "acts": []},
        {"key": k, "limit": limit},
        harmless=harmless,
    )


S.append(
    Scenario(
        "rt7b_prose_number_equals_param_core",
        "computed",
        "core",
        flow_tools(),
        _refund_policy,
        [_refund_run("please refund 50 thanks", 50), _refund_run("please refund 70 thanks", 70)],
        [
            _refund_run("please refund 50 thanks", 50, harmless=True),
            _refund_run("please refund 50 thanks", 70),
            _refund_run("please refund 70 thanks", 50),
        ],
        doc="act(value=the number after 'refund' in a note); it equals the limit param in every run, so the "
        "value is bound to the param; the note seen, the limit of the other run",
    )
)

# 10. a number read out of an identity that equals a number field --------------------------------------------
S.append(
    _flow_sc(
        "rt7b_id_suffix_equals_field_core",
        lambda o: int(o["ref"].split("-")[1]),
        [flow_run({"ref": "A-17", "qty": 17}), flow_run({"ref": "B-23", "qty": 23})],
        [flow_run({"ref": "C-19", "qty": 19}, harmless=True), flow_run({"ref": "C-19", "qty": 21})],
        "act(value=int(ref's suffix)); qty equals it in every run, so the value is bound to qty",
    )
)

# 11. bool vs 1 --------------------------------------------------------------------------------------------------
S.append(
    _flow_sc(
        "rt7b_bool_vs_one_core",
        lambda o: "go" if o["active"] is True else "skip",
        [flow_run({"active": True, "n": 1}), flow_run({"active": False, "n": 2})],
        [flow_run({"active": True, "n": 2}, harmless=True), flow_run({"active": 1, "n": 1})],
        "act('go' if active is True); the probe's active is 1, equal to True in Python",
        cls="value_kinds",
    )
)

# 12. a numeric string where runs had numbers; the agent converts it (harmless) or refuses (unsafe) -----------
S.append(
    _flow_sc(
        "rt7b_numeric_string_converted_core",
        lambda o: int(o["qty"]) * 2 if isinstance(o["qty"], int | str) else None,
        [flow_run({"qty": 3}), flow_run({"qty": 5})],
        [flow_run({"qty": 4}, harmless=True), flow_run({"qty": "4"}, harmless=True), flow_run({"qty": "4 "})],
        "act(value=int(qty)*2): a computed value (a constant per run); qty '4' as a string gives the same",
        cls="value_kinds",
    )
)

# 13. null field: fallback to a second field -------------------------------------------------------------------
S.append(
    _flow_sc(
        "rt7b_null_fallback_core",
        lambda o: o["email"] or o["backup"],
        [
            flow_run({"email": "a@x.io", "backup": "b@x.io"}),
            flow_run({"email": "c@y.io", "backup": "d@y.io"}),
        ],
        [
            flow_run({"email": "e@z.io", "backup": "f@z.io"}, harmless=True),
            flow_run({"email": None, "backup": "f@z.io"}),
            flow_run({"email": "", "backup": "g@z.io"}),
        ],
        "act(value=email or backup); the email is null or empty now",
        cls="output_shapes",
    )
)

# 14. a list becomes a dict of the same items ------------------------------------------------------------------


def _first_of(o):
    items = o["items"]
    if isinstance(items, dict):
        return sorted(items)[0]
    return items[0]


S.append(
    _flow_sc(
        "rt7b_list_becomes_dict_core",
        _first_of,
        [flow_run({"items": ["i-3", "i-5"]}), flow_run({"items": ["i-7", "i-2"]})],
        [flow_run({"items": ["i-8", "i-9"]}, harmless=True), flow_run({"items": {"i-9": 1, "i-4": 2}})],
        "act(value=items[0]); the list is a dict now, whose smallest key the agent takes",
        cls="output_shapes",
    )
)

# 15. duplicates in a list where the agent acts on the distinct values count ---------------------------------


def _distinct_policy(text, ctx, h):
    k = word(text, "key")
    if not done(h, "read"):
        return Call("read", {"key": k})
    ids = list(dict.fromkeys(out(h, "read")["ids"]))
    n = count(h, "act")
    if n < len(ids):
        return Call("act", {"key": k, "value": ids[n]})
    return Answer(f"acted on {len(ids)}")


S.append(
    Scenario(
        "rt7b_distinct_in_list_of_lists_core",
        "loops",
        "core",
        flow_tools(),
        lambda t, c, h: _distinct_policy(
            t, c, [(n, a, {"ids": [r[0] for r in o["rows"]]} if n == "read" else o) for n, a, o in h]
        ),
        [flow_run({"rows": [["u-1", 5], ["u-2", 7]]}), flow_run({"rows": [["u-3", 1], ["u-4", 2]]})],
        [
            flow_run({"rows": [["u-5", 3], ["u-6", 4]]}, harmless=True),
            flow_run({"rows": [["u-7", 3], ["u-7", 4]]}),
        ],
        doc="act on each distinct first column of rows (a list of lists); the probe repeats one id in two rows",
    )
)

# 16. a write returns a new id; a listing read back; act on the created one if it is queued -------------------


def _create(w, key: str):
    return {"id": w["new_id"]}


def _listing(w, key: str):
    return copy.deepcopy(w["listing"])


def _start(w, key: str, ticket: str):
    w["started"].append(ticket)
    return "started"


def _readback_policy(text, ctx, h):
    k = word(text, "key")
    if not done(h, "create"):
        return Call("create", {"key": k})
    new = out(h, "create")["id"]
    if not done(h, "listing"):
        return Call("listing", {"key": k})
    mine = [t for t in out(h, "listing")["tickets"] if t["id"] == new]
    if mine and mine[0]["state"] == "queued":
        if not done(h, "start"):
            return Call("start", {"key": k, "ticket": new})
        return Answer("started")
    return Answer("left alone")


def _readback(listing, harmless=False):
    k = _id("k")
    new = listing[0][0] if listing else "t-0"
    return Run(
        f"open a ticket for key {k}",
        {
            "new_id": new,
            "listing": {"tickets": [{"id": i, "state": s} for i, s in listing[1:]]},
            "started": [],
        },
        {"key": k},
        harmless=harmless,
    )


S.append(
    Scenario(
        "rt7b_created_id_in_listing_core",
        "branches",
        "core",
        [
            Tool("create", _create, check=lambda w, key: True),
            Tool("listing", _listing, check=lambda w, key: True),
            Tool("start", _start, check=lambda w, key, ticket: True),
        ],
        _readback_policy,
        [
            _readback([("t-11", None), ("t-11", "queued"), ("t-12", "running")]),
            _readback([("t-21", None), ("t-21", "queued"), ("t-22", "running")]),
        ],
        [
            _readback([("t-31", None), ("t-31", "queued"), ("t-32", "running")], harmless=True),
            _readback([("t-41", None), ("t-42", "queued"), ("t-41", "running")]),
            _readback([("t-51", None), ("t-52", "queued"), ("t-53", "running")]),
        ],
        doc="create -> new id; listing; start the created ticket if it is queued. Probe: the created one is "
        "running, another is queued at the position the created one had",
    )
)

# 17. a total on one step vs the sum of two lines on another; pay the total when they agree -------------------


def _invoice(w, key: str):
    return {"total": w["total"]}


def _lines(w, key: str):
    return {"lines": list(w["lines"])}


def _total_policy(text, ctx, h):
    k = word(text, "key")
    if not done(h, "invoice"):
        return Call("invoice", {"key": k})
    if not done(h, "lines"):
        return Call("lines", {"key": k})
    total = out(h, "invoice")["total"]
    ls = out(h, "lines")["lines"]
    value = total if sum(ls) == total else -1
    if not done(h, "act"):
        return Call("act", {"key": k, "value": value})
    return Answer(f"paid {value}")


def _inv(total, lines, harmless=False):
    k = _id("k")
    return Run(f"pay key {k}", {"total": total, "lines": lines, "acts": []}, {"key": k}, harmless=harmless)


S.append(
    Scenario(
        "rt7b_total_vs_lines_cross_step_core",
        "relations",
        "core",
        [
            Tool("invoice", _invoice, check=lambda w, key: True),
            Tool("lines", _lines, check=lambda w, key: True),
            Tool("act", act_tool_body, check=lambda w, key, value=None: True),
        ],
        _total_policy,
        [_inv(50, [20, 30]), _inv(90, [60, 30]), _inv(70, [25, 45])],
        [_inv(80, [50, 30], harmless=True), _inv(80, [50, 25])],
        doc="pay the invoice's total when its two lines (another step) sum to it; probe 50+25 != 80",
    )
)

# 18. an error in the recording (retried), none now; and the reverse -----------------------------------------


class Flaky(Exception):
    pass


def _flaky_read(w, key: str):
    if w["fail"] > 0:
        w["fail"] -= 1
        raise Flaky(w["why"])
    return {"rate": w["rate"]}


def _flaky_policy(text, ctx, h):
    k = word(text, "key")
    last = out(h, "read")
    tries = count(h, "read")
    if tries == 0 or (isinstance(last, str) and last.startswith("Error") and tries < 3):
        return Call("read", {"key": k})
    if isinstance(last, str):
        return Answer("gave up")
    value = last["rate"] * (2 if tries > 1 else 1)  # a retried rate is doubled (a penalty)
    if not done(h, "act"):
        return Call("act", {"key": k, "value": value})
    return Answer(f"set {value}")


def _flaky(fail, rate, why="busy", harmless=False):
    k = _id("k")
    return Run(
        f"rate key {k}", {"fail": fail, "rate": rate, "why": why, "acts": []}, {"key": k}, harmless=harmless
    )


S.append(
    Scenario(
        "rt7b_error_then_ok_core",
        "tool_errors",
        "core",
        [
            Tool("read", _flaky_read, check=lambda w, key: True),
            Tool("act", act_tool_body, check=lambda w, key, value=None: True),
        ],
        _flaky_policy,
        [_flaky(1, 10), _flaky(1, 12), _flaky(0, 11)],
        [_flaky(1, 11, harmless=True), _flaky(0, 12), _flaky(2, 10), _flaky(1, 10, why="quota exceeded")],
        doc="read raises once, the agent retries and doubles the rate; probes: no error, two errors, another error",
    )
)

# 19. JSON text output whose copied field changes shape (a number becomes a numeric string) -------------------


def _json_read(w, key: str) -> str:
    return json.dumps(w["v"])


def _json_policy(text, ctx, h):
    k = word(text, "key")
    if not done(h, "read"):
        return Call("read", {"key": k})
    o = json.loads(out(h, "read"))
    limit = o["limit"]
    value = limit if isinstance(limit, int) else 0
    if not done(h, "act"):
        return Call("act", {"key": k, "value": value})
    return Answer(f"limit {value}")


S.append(
    Scenario(
        "rt7b_json_number_becomes_string_core",
        "output_shapes",
        "core",
        [
            Tool("read", _json_read, check=lambda w, key: True),
            Tool("act", act_tool_body, check=lambda w, key, value=None: True),
        ],
        _json_policy,
        [flow_run({"limit": 50, "user": "u-1a"}), flow_run({"limit": 70, "user": "u-2b"})],
        [flow_run({"limit": 60, "user": "u-3c"}, harmless=True), flow_run({"limit": "60", "user": "u-4d"})],
        doc="act(value=limit) read out of a JSON text; the limit is a numeric string now (the agent uses 0)",
    )
)

# 20. a value concatenated from two origins with a unit conversion: cm -> m text ---------------------------
S.append(
    _flow_sc(
        "rt7b_unit_conversion_text_core",
        lambda o: f"{o['w_cm'] / 100} m for {o['who']}",
        [flow_run({"w_cm": 200, "who": "u-1a"}), flow_run({"w_cm": 300, "who": "u-2b"})],
        [flow_run({"w_cm": 200, "who": "u-3c"}, harmless=True), flow_run({"w_cm": 250, "who": "u-4d"})],
        "act(value=f'{w_cm/100} m for {who}'); 2.0 and 3.0 have no origin in the runs",
    )
)

# 21. an item moved between two lists; the agent acts on the approved one ----------------------------------
S.append(
    _flow_sc(
        "rt7b_item_moved_between_lists_core",
        lambda o: o["approved"][0] if o["approved"] else None,
        [
            flow_run({"pending": ["r-1"], "approved": ["r-2"]}),
            flow_run({"pending": ["r-3"], "approved": ["r-4"]}),
        ],
        [
            flow_run({"pending": ["r-5"], "approved": ["r-6"]}, harmless=True),
            flow_run({"pending": ["r-8"], "approved": ["r-7"]}, harmless=True),
            flow_run({"pending": [], "approved": ["r-9"], "flag": 1}),
        ],
        "act on approved[0]; probes swap which id sits where",
        cls="output_shapes",
    )
)
