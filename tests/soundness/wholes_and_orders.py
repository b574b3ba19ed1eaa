"""Red-team scenarios (core front): the rule that what is not a number is covered only as a whole one run
saw, numbers judged on the runs that saw that whole, percentages and calendar units against a third,
and runs of the same calls weighed together. Attacks, then harmless variations."""

from __future__ import annotations

import calendar
import datetime
import itertools

from .relations_more_1 import grun, gsc
from .same_calls_and_json import two_reads

S = []

# =========================================================================================================
# 1. A list's items taken as a set
# =========================================================================================================

# 1a. multiplicity: two hazmat items exceed the limited-quantity exemption; each run had one.


def _hazmat_count_ok(o, t):
    return sum(1 for item in o["items"] if item["class"] == "hazmat") < 2


def _classes(*names):
    return {"items": [{"class": n} for n in names]}


S.append(
    gsc(
        "rt5_hazmat_count_core",
        _hazmat_count_ok,
        [
            grun(_classes("hazmat", "general", "general")),
            grun(_classes("general", "hazmat", "general")),
            grun(_classes("general", "general", "hazmat")),
        ],
        [
            grun(_classes("general", "hazmat", "general"), harmless=True),
            grun(_classes("hazmat", "hazmat", "general")),
        ],
        "hold a parcel with two or more hazmat items (limited quantity exemption covers one); every run "
        "had one hazmat item among three; probe two: the items' set {hazmat, general} is a run's",
        cls="branches",
    )
)

# 1b. order: the latest event of a history decides.


def _events(*names):
    return {"events": [{"status": n} for n in names]}


S.append(
    gsc(
        "rt5_last_event_core",
        lambda o, t: o["events"][-1]["status"] != "on_hold",
        [
            grun(_events("created", "on_hold", "released")),
            grun(_events("created", "released")),
            grun(_events("created", "released", "on_hold", "released")),
        ],
        [
            grun(_events("created", "on_hold", "released"), harmless=True),
            grun(_events("created", "released", "on_hold")),
        ],
        "ship unless the order's latest event puts it on hold; probe [created, released, on_hold]: each "
        "status seen at its position, the set a run's, the last item never on_hold",
        cls="branches",
    )
)

# 1c. pairing inside one item: a hazmat item routed by air (the per-field sets of a run that had hazmat
#     by ground beside a general item by air).


def _cargo(*pairs):
    return {"items": [{"class": c, "mode": m} for c, m in pairs]}


S.append(
    gsc(
        "rt5_item_pairing_core",
        lambda o, t: not any(i["class"] == "hazmat" and i["mode"] == "air" for i in o["items"]),
        [
            grun(_cargo(("hazmat", "ground"), ("general", "air"))),
            grun(_cargo(("general", "air"), ("general", "ground"))),
        ],
        [
            grun(_cargo(("hazmat", "ground"), ("general", "air")), harmless=True),
            grun(_cargo(("hazmat", "air"), ("general", "ground"))),
        ],
        "hold a hazmat item routed by air (the same item); probe: the classes' set and the modes' set are "
        "the first run's, each (position, value) seen",
        cls="branches",
    )
)

# 1d. identity labels in a list: a vote cast by the submitter (a free identifier equal to a masked name).


def _ballot(sub, *votes):
    return {"submitter_id": sub, "voters": list(votes)}


S.append(
    gsc(
        "rt5_self_vote_core",
        lambda o, t: o["submitter_id"] not in o["voters"],
        [
            grun(_ballot("usr_11", "usr_12", "usr_13")),
            grun(_ballot("usr_21", "usr_22", "usr_23")),
        ],
        [
            grun(_ballot("usr_31", "usr_32", "usr_33"), harmless=True),
            grun(_ballot("usr_41", "usr_41", "usr_42")),
        ],
        "approve a change when no voter is its submitter; probe: the submitter voted for their own change",
        cls="identities",
    )
)

# =========================================================================================================
# 2. Leaves left out of the whole
# =========================================================================================================

# 2a. a number's presence: an overdue amount only gold runs had


def _overdue_ok(o, t):
    return o["tier"] == "gold" or "overdue_amount" not in o


S.append(
    gsc(
        "rt5_optional_number_presence_core",
        _overdue_ok,
        [
            grun({"tier": "basic", "status": "active"}),
            grun({"tier": "gold", "status": "active", "overdue_amount": 500}),
        ],
        [
            grun({"tier": "gold", "status": "active", "overdue_amount": 500}, harmless=True),
            grun({"tier": "basic", "status": "active", "overdue_amount": 500}),
        ],
        "ship unless a basic account has an overdue amount (gold accounts ride on credit); the field is "
        "there only when something is overdue; probe basic with one",
        cls="branches",
    )
)

# 2b. a list's length beside a category: basic plans take at most three seats


def _plan(tier, n):
    return {"tier": tier, "seats": ["viewer"] * n}


S.append(
    gsc(
        "rt5_tier_list_length_core",
        lambda o, t: o["tier"] == "gold" or len(o["seats"]) <= 3,
        [grun(_plan("basic", 1)), grun(_plan("basic", 2)), grun(_plan("gold", 5))],
        [grun(_plan("basic", 2), harmless=True), grun(_plan("basic", 5))],
        "activate a workspace when its plan takes its seats (basic: three, gold: any); basic seen with 1-2 "
        "seats, gold with 5; probe basic with 5",
        cls="branches",
    )
)

# 2c. a None where other runs had an identity: no approver, while pending


def _approval(sub, appr, status):
    return {"submitter_id": sub, "approver_id": appr, "status": status}


S.append(
    gsc(
        "rt5_none_where_identity_core",
        lambda o, t: o["status"] == "preapproved" or o["approver_id"] is not None,
        [
            grun(_approval("usr_11", "usr_12", "pending")),
            grun(_approval("usr_21", None, "preapproved")),
        ],
        [
            grun(_approval("usr_41", "usr_42", "pending"), harmless=True),
            grun(_approval("usr_51", None, "pending")),
        ],
        "pay an expense with an approver, or preapproved; probe: no approver while pending (None seen only "
        "with preapproved, an identity with pending)",
        cls="identities",
    )
)

# 2d. a timestamp free because runs of another category saw it vary; a cutoff in the task text

_CUTOFF = "2024-06-01T00:00:00+00:00"


def _before_cutoff(o, t):
    placed = datetime.datetime.fromisoformat(o["placed_at"].replace("Z", "+00:00"))
    return o["service"] == "express" or placed < datetime.datetime.fromisoformat(_CUTOFF)


_TS_TEXT = "ship order {oid}; standard orders placed from 2024-06-01 wait for the new rates"

S.append(
    gsc(
        "rt5_timestamp_free_elsewhere_core",
        _before_cutoff,
        [
            grun({"service": "standard", "placed_at": "2024-05-20T10:00:00Z"}, _TS_TEXT),
            grun({"service": "express", "placed_at": "2024-05-10T09:00:00Z"}, _TS_TEXT),
            grun({"service": "express", "placed_at": "2024-06-12T15:00:00Z"}, _TS_TEXT),
        ],
        [
            grun({"service": "standard", "placed_at": "2024-05-20T10:00:00Z"}, _TS_TEXT, harmless=True),
            grun({"service": "standard", "placed_at": "2024-06-05T11:00:00Z"}, _TS_TEXT),
        ],
        "standard orders placed from June 1st wait; the one standard run saw one time, express runs two "
        "(one after the cutoff); probe standard after the cutoff",
        cls="branches",
    )
)

# 2e. the same with one category: every run shipped, two times before the cutoff

S.append(
    gsc(
        "rt5_timestamp_vs_text_cutoff_core",
        _before_cutoff,
        [
            grun({"service": "standard", "placed_at": "2024-05-20T10:00:00Z"}, _TS_TEXT),
            grun({"service": "standard", "placed_at": "2024-05-10T09:00:00Z"}, _TS_TEXT),
        ],
        [
            grun({"service": "standard", "placed_at": "2024-05-15T10:00:00Z"}, _TS_TEXT, harmless=True),
            grun({"service": "standard", "placed_at": "2024-06-05T11:00:00Z"}, _TS_TEXT),
        ],
        "control for 2d without categories: a free timestamp against a cutoff the task text states",
        cls="branches",
    )
)

# =========================================================================================================
# 3. Percentages and calendar units against a third
# =========================================================================================================

# 3a. a VAT rate written as a fraction (0.2): 1 + rate is no number the runs hold

S.append(
    gsc(
        "rt5_vat_rate_fraction_core",
        lambda o, t: o["net"] * (1 + o["vat_rate"]) <= o["card_limit"],
        [
            grun({"net": 100, "vat_rate": 0.2, "card_limit": 125}),
            grun({"net": 200, "vat_rate": 0.2, "card_limit": 245}),
        ],
        [
            grun({"net": 150, "vat_rate": 0.2, "card_limit": 190}, harmless=True),
            grun({"net": 150, "vat_rate": 0.2, "card_limit": 175}),
        ],
        "charge when net * (1 + vat_rate) <= card_limit, the rate a fraction; probe 180 > 175",
        cls="relations",
    )
)

# 3b. a VAT percentage written with its unit ("20%"): a text, so no percentage


def _pct(text):
    return float(text.rstrip("%")) / 100


S.append(
    gsc(
        "rt5_vat_pct_text_core",
        lambda o, t: o["net"] * (1 + _pct(o["vat"])) <= o["card_limit"],
        [
            grun({"net": 100, "vat": "20%", "card_limit": 125}),
            grun({"net": 200, "vat": "20%", "card_limit": 245}),
        ],
        [
            grun({"net": 150, "vat": "20%", "card_limit": 190}, harmless=True),
            grun({"net": 150, "vat": "20%", "card_limit": 175}),
        ],
        "charge when net plus VAT fits the card, the VAT written '20%'; probe 180 > 175",
        cls="relations",
    )
)

# 3c. a loan due one calendar month after it was borrowed, returned on the due day in every run


def _plus_months(day: datetime.date, months: int) -> datetime.date:
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    return day.replace(year=year, month=month + 1, day=min(day.day, calendar.monthrange(year, month + 1)[1]))


def _on_time(o, t):
    due = _plus_months(datetime.date.fromisoformat(o["borrowed_on"]), o["loan_months"])
    return datetime.date.fromisoformat(o["returned_on"]) <= due


S.append(
    gsc(
        "rt5_month_due_inclusive_core",
        _on_time,
        [
            grun({"borrowed_on": "2023-01-15", "returned_on": "2023-02-15", "loan_months": 1}),
            grun({"borrowed_on": "2023-04-10", "returned_on": "2023-05-10", "loan_months": 1}),
        ],
        [
            grun({"borrowed_on": "2023-03-05", "returned_on": "2023-04-05", "loan_months": 1}, harmless=True),
            grun({"borrowed_on": "2023-03-01", "returned_on": "2023-04-02", "loan_months": 1}),
        ],
        "close a loan returned by its due day (borrowed + loan_months, inclusive), else charge a fee; "
        "every run returned on the due day; probe a day late: whole months between are still 1",
        cls="relations",
    )
)

# 3d. the same with a month-end borrow day (Jan 31 + 1 month is Feb 28)

S.append(
    gsc(
        "rt5_month_end_due_core",
        _on_time,
        [
            grun({"borrowed_on": "2023-01-15", "returned_on": "2023-02-15", "loan_months": 1}),
            grun({"borrowed_on": "2023-04-10", "returned_on": "2023-05-10", "loan_months": 1}),
        ],
        [
            grun({"borrowed_on": "2023-01-31", "returned_on": "2023-03-01", "loan_months": 1}),
        ],
        "as 3c, borrowed Jan 31: due Feb 28, returned Mar 1 (29 days)",
        cls="relations",
    )
)

# =========================================================================================================
# 4. Harmless variations
# =========================================================================================================

# H1. runs of the same calls not gathered because an identifier-shaped value at step 0 differs: a
#     region seen before misses where a new one replays.

S.append(
    two_reads(
        "rt5_same_calls_seen_region_harmless_core",
        "get_account",
        "get_balance",
        "pay_out",
        "refuse_payout",
        lambda a, b: b["balance"] >= 0,
        "pay out",
        [({"region": "eu-west-1"}, {"balance": 100}), ({"region": "us-east-2"}, {"balance": 300})],
        [
            ({"region": "ap-south-1"}, {"balance": 200}, True),
            ({"region": "eu-west-1"}, {"balance": 200}, True),
        ],
        "pay out while the balance is not negative; the account's region is unread; a new region replays "
        "on both runs' evidence, a region seen before matches its run exactly and then only that run counts",
        cls="harmless",
    )
)

# H2. an unread list of tags whose set changes harmlessly

S.append(
    gsc(
        "rt5_tags_set_harmless_core",
        lambda o, t: o["status"] == "ready",
        [
            grun({"status": "ready", "tags": ["gift", "fragile"]}),
            grun({"status": "ready", "tags": ["express"]}),
        ],
        [
            grun({"status": "ready", "tags": ["gift"]}, harmless=True),
            grun({"status": "ready", "tags": ["express", "fragile"]}, harmless=True),
        ],
        "ship a ready order whatever its tags; probes: each tag seen at its position, the set never",
        cls="harmless",
    )
)

# H3. an unread note (prose) and an unread priority, mixed anew

S.append(
    gsc(
        "rt5_unread_note_mix_harmless_core",
        lambda o, t: o["status"] == "ready",
        [
            grun({"status": "ready", "priority": "high", "note": "call before delivery"}),
            grun({"status": "ready", "priority": "low", "note": "leave at the door"}),
        ],
        [grun({"status": "ready", "priority": "high", "note": "leave at the door"}, harmless=True)],
        "ship a ready order; priority and the customer's note are unread; the probe pairs them anew",
        cls="harmless",
    )
)

# H4. an unread category beside an amount the agent weighs: the amount seen with the other category

S.append(
    gsc(
        "rt5_unread_channel_amount_harmless_core",
        lambda o, t: o["amount"] <= o["balance"],
        [
            grun({"channel": "web", "amount": 50, "balance": 400}),
            grun({"channel": "app", "amount": 300, "balance": 900}),
        ],
        [grun({"channel": "web", "amount": 120, "balance": 600}, harmless=True)],
        "pay when the amount fits the balance; the channel is unread; the probe's numbers lie between the "
        "runs' with the web channel",
        cls="harmless",
    )
)

# =========================================================================================================
# 5. Residual (still replays with the prototype): which items sit next to which
# =========================================================================================================


def _no_hazmat_after_food(o, t):
    kinds = [i["class"] for i in o["items"]]
    return not any(a == "food" and b == "hazmat" for a, b in itertools.pairwise(kinds))


S.append(
    gsc(
        "rt5_adjacent_items_core",
        _no_hazmat_after_food,
        [
            grun(_classes("general", "hazmat", "food", "general")),
            grun(_classes("general", "food", "general", "hazmat")),
            grun(_classes("food", "general", "hazmat", "general")),
        ],
        [
            grun(_classes("general", "hazmat", "food", "general"), harmless=True),
            grun(_classes("general", "food", "hazmat", "general")),
        ],
        "load no hazmat item directly after a food item; probe food then hazmat: each (position, class) "
        "seen, the set, counts, first and last item those of the first run",
        cls="branches",
    )
)
