"""Red-team scenarios: lists, loops and choices by a criterion, multi-step decisions (positions that
move, a min of a list length and a bound, joins across steps, maps keyed by ids, pagination, ties,
de-duplication, grouping, majority votes), and some through the LangChain, pydantic-ai and MCP fronts."""

from __future__ import annotations

import dataclasses

from .harness import Answer, Call, Run, Tool
from .kit import count, done, num, out, sc, word

S = []
_N = [0]
T = lambda *a, **k: True  # noqa: E731


def _id(prefix: str) -> str:
    _N[0] += 1
    return f"{prefix}-{_N[0]}x"


def _log(key, *names):
    """A tool that logs its call, with a signature of ``names`` (all str)."""
    import inspect

    def act(w, **kw):
        w["log"].append((key, *kw.values()))
        return "ok"

    params = [inspect.Parameter("w", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str) for n in names
    ]
    act.__signature__ = inspect.Signature(params, return_annotation=str)
    act.__annotations__ = {n: str for n in names} | {"return": str}
    act.__name__ = key
    return act


def _front(s, front, suffix=None):
    name = s.name.rsplit("_", 1)[0] + "_" + (suffix or front)
    return dataclasses.replace(s, name=name, front=front)


# 1. cheapest of a list, at a position only the longer runs had -------------------------------------------


def _offers(w, route: str):
    return [dict(o) for o in w["offers"]]


def _book(w, offer: str) -> str:
    w["log"].append(("book", offer))
    return "booked"


OFFER_TOOLS = [Tool("search_offers", _offers, check=T), Tool("book_offer", _book, check=T)]


def _cheapest_policy(text, ctx, h):
    r = word(text, "route")
    if not done(h, "search_offers"):
        return Call("search_offers", {"route": r})
    best = min(out(h, "search_offers"), key=lambda o: o["price"])
    if not done(h, "book_offer"):
        return Call("book_offer", {"offer": best["id"]})
    return Answer("Booked.")


def _offer_run(prices, harmless=False):
    r = _id("rt")
    return Run(
        f"book the cheapest offer for route {r}",
        {"offers": [{"id": _id("of"), "price": p} for p in prices], "log": []},
        {"route": r},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_cheapest_at_new_position_core",
        "choices",
        OFFER_TOOLS,
        _cheapest_policy,
        [_offer_run([10, 20]), _offer_run([5, 30, 40])],
        [_offer_run([12, 25, 35], harmless=True), _offer_run([10, 20, 7])],
        "book the cheapest offer; every run's cheapest was first; runs of 2 and 3 offers; probe 3 offers "
        "whose third (a place only the 3-offer run had) is cheapest, each price in range",
    )
)

# 2. loop count min(list length, a declared param) ----------------------------------------------------------


def _waitlist(w, event: str):
    return [{"customer": c} for c in w["wait"]]


def _notify(w, customer: str) -> str:
    w["log"].append(("notify", customer))
    return "sent"


WAIT_TOOLS = [Tool("waitlist", _waitlist, check=T), Tool("notify", _notify, check=T)]


def _min_policy(limit_of):
    def policy(text, ctx, h):
        e = word(text, "event")
        if not done(h, "waitlist"):
            return Call("waitlist", {"event": e})
        n = limit_of(text, h)
        if n is None:
            return n_call(h, e)
        wl = out(h, "waitlist")
        k = count(h, "notify")
        if k < min(n, len(wl)):
            return Call("notify", {"customer": wl[k]["customer"]})
        return Answer("Done.")

    return policy


def n_call(h, e):
    return Call("seat_policy", {"event": e})


def _wait_run(n, length, harmless=False):
    e = _id("ev")
    return Run(
        f"for event {e} notify up to {n} people on the waitlist",
        {"wait": [_id("cu") for _ in range(length)], "log": [], "cap": n},
        {"event": e, "n": n},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_loop_min_len_param_core",
        "loops",
        WAIT_TOOLS,
        _min_policy(lambda t, h: num(t, "to")),
        [_wait_run(2, 3), _wait_run(3, 2)],
        [_wait_run(2, 3, harmless=True), _wait_run(3, 3)],
        "notify the first min(n, len) people; n a declared param (not copied on); runs n=2/len 3 and "
        "n=3/len 2 both stop after 2; probe n=3, len 3 (each seen, their order unlike either run)",
    )
)

# 3. the same with the bound read from another step


def _seat_policy(w, event: str):
    return {"event": event, "max_notices": w["cap"]}


WAIT_TOOLS2 = [*WAIT_TOOLS, Tool("seat_policy", _seat_policy, check=T)]


def _cap_of(text, h):
    p = out(h, "seat_policy")
    return None if p is None else p["max_notices"]


S.append(
    sc(
        "rt8c_loop_min_len_output_core",
        "loops",
        WAIT_TOOLS2,
        _min_policy(_cap_of),
        [_wait_run(2, 3), _wait_run(3, 2)],
        [_wait_run(2, 3, harmless=True), _wait_run(3, 3)],
        "as rt8c_loop_min_len_param_core with the bound read from a seat_policy step after the list",
    )
)

# 4. a map keyed by ids (step 1) looked up for each id of a list (step 0), keys reordered


def _tickets(w, queue: str):
    return list(w["tickets"])


def _assignees(w, queue: str):
    return dict(w["owners"])


def _ping(w, user: str, ticket: str) -> str:
    w["log"].append(("ping", user, ticket))
    return "pinged"


MAP_TOOLS = [
    Tool("list_tickets", _tickets, check=T),
    Tool("assignees", _assignees, check=T),
    Tool("ping", _ping, check=T),
]


def _map_policy(text, ctx, h):
    q = word(text, "queue")
    if not done(h, "list_tickets"):
        return Call("list_tickets", {"queue": q})
    if not done(h, "assignees"):
        return Call("assignees", {"queue": q})
    ts, owners = out(h, "list_tickets"), out(h, "assignees")
    k = count(h, "ping")
    if k < len(ts):
        return Call("ping", {"user": owners[ts[k]], "ticket": ts[k]})
    return Answer("Pinged.")


def _map_run(order, harmless=False):
    q = _id("q")
    ts = [_id("T"), _id("T")]
    us = [_id("usr"), _id("usr")]
    owners = {ts[i]: us[i] for i in order}
    return Run(
        f"ping the owners of queue {q}",
        {"tickets": ts, "owners": owners, "log": []},
        {"queue": q},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_map_keyed_by_ids_reordered_core",
        "identities",
        MAP_TOOLS,
        _map_policy,
        [_map_run([0, 1]), _map_run([0, 1])],
        [_map_run([0, 1], harmless=True), _map_run([1, 0], harmless=True)],
        "ping owners[t] for each ticket t; the owners map (step 1) keyed by the tickets (step 0); probe the "
        "map's keys in the other order: a replay must look the owner up by key, not by position",
    )
)

# 5. the seat whose type matches a preference read in another step


def _pref(w, guest: str):
    return {"guest": guest, "prefer": w["prefer"]}


def _seats(w, flight: str):
    return [dict(s) for s in w["seats"]]


def _reserve(w, seat: str) -> str:
    w["log"].append(("reserve", seat))
    return "reserved"


SEAT_TOOLS = [
    Tool("get_preference", _pref, check=T),
    Tool("list_seats", _seats, check=T),
    Tool("reserve", _reserve, check=T),
]


def _seat_policy2(text, ctx, h):
    g, f = word(text, "guest"), word(text, "flight")
    if not done(h, "get_preference"):
        return Call("get_preference", {"guest": g})
    if not done(h, "list_seats"):
        return Call("list_seats", {"flight": f})
    pref = out(h, "get_preference")["prefer"]
    seats = out(h, "list_seats")
    pick = next((s for s in seats if s["type"] == pref), seats[0])
    if not done(h, "reserve"):
        return Call("reserve", {"seat": pick["seat"]})
    return Answer("Reserved.")


def _seat_run(pref, types, harmless=False):
    g, f = _id("g"), _id("fl")
    return Run(
        f"reserve a seat for guest {g} on flight {f}",
        {"prefer": pref, "seats": [{"seat": _id("s"), "type": t} for t in types], "log": []},
        {"guest": g, "flight": f},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_pick_matching_pref_core",
        "choices",
        SEAT_TOOLS,
        _seat_policy2,
        [_seat_run("window", ["aisle", "window"]), _seat_run("aisle", ["window", "aisle"])],
        [_seat_run("window", ["aisle", "window"], harmless=True), _seat_run("window", ["window", "aisle"])],
        "reserve the first seat of the preferred type (read at step 0); every run's match was second; "
        "probe pref window with the seat list of the aisle run (match now first)",
    )
)

# 6. majority vote, a tie going to the first vote's choice


def _votes(w, motion: str):
    return [dict(v) for v in w["votes"]]


def _adopt(w, option: str) -> str:
    w["log"].append(("adopt", option))
    return "adopted"


VOTE_TOOLS = [Tool("list_votes", _votes, check=T), Tool("adopt", _adopt, check=T)]


def _vote_policy(text, ctx, h):
    m = word(text, "motion")
    if not done(h, "list_votes"):
        return Call("list_votes", {"motion": m})
    vs = out(h, "list_votes")
    tally: dict[str, int] = {}
    for v in vs:
        tally[v["choice"]] = tally.get(v["choice"], 0) + 1
    best = max(tally, key=lambda c: (tally[c], c == vs[0]["choice"]))
    if not done(h, "adopt"):
        return Call("adopt", {"option": best})
    return Answer("Adopted.")


def _vote_run(choices, harmless=False):
    m = _id("mo")
    return Run(
        f"settle motion {m}",
        {"votes": [{"voter": _id("v"), "choice": c} for c in choices], "log": []},
        {"motion": m},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_majority_vs_first_core",
        "choices",
        VOTE_TOOLS,
        _vote_policy,
        [
            _vote_run(["plan_a", "plan_b"]),
            _vote_run(["plan_a", "plan_a", "plan_b", "plan_b"]),
            _vote_run(["plan_a", "plan_a", "plan_b"]),
        ],
        [_vote_run(["plan_a", "plan_a", "plan_b"], harmless=True), _vote_run(["plan_a", "plan_b", "plan_b"])],
        "adopt the majority choice, a tie going to the first vote's; every run adopted the first vote's; "
        "probe [a, b, b]: first, last, order, length and each count seen, the counts' order not",
    )
)

# 7. pagination: a third page appears (has_more a bool)


def _page(w, folder: str, page: int):
    items = w["pages"][page - 1]
    return {"items": [{"id": i} for i in items], "has_more": page < len(w["pages"])}


def _archive(w, item: str) -> str:
    w["log"].append(("archive", item))
    return "archived"


PAGE_TOOLS = [Tool("list_page", _page, check=T), Tool("archive", _archive, check=T)]


def _page_policy(text, ctx, h):
    f = word(text, "folder")
    pages = [o for name, _a, o in h if name == "list_page"]
    if not pages:
        return Call("list_page", {"folder": f, "page": 1})
    done_ids = {a["item"] for name, a, _o in h if name == "archive"}
    for p in pages:
        for it in p["items"]:
            if it["id"] not in done_ids:
                return Call("archive", {"item": it["id"]})
    if pages[-1]["has_more"]:
        return Call("list_page", {"folder": f, "page": len(pages) + 1})
    return Answer("Archived.")


def _page_run(sizes, harmless=False):
    f = _id("fo")
    return Run(
        f"archive everything in folder {f}",
        {"pages": [[_id("m") for _ in range(n)] for n in sizes], "log": []},
        {"folder": f},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_pagination_third_page_core",
        "loops",
        PAGE_TOOLS,
        _page_policy,
        [_page_run([2]), _page_run([2, 1])],
        [_page_run([2, 1], harmless=True), _page_run([2, 1, 1])],
        "archive every item page by page while has_more; runs of 1 and 2 pages; probe a third page",
    )
)

# 8. de-duplication: one email per distinct customer of a list of orders


def _orders(w, day: str):
    return [dict(o) for o in w["orders"]]


def _email(w, customer: str) -> str:
    w["log"].append(("email", customer))
    return "emailed"


DEDUP_TOOLS = [Tool("list_orders", _orders, check=T), Tool("email", _email, check=T)]


def _dedup_policy(text, ctx, h):
    d = word(text, "day")
    if not done(h, "list_orders"):
        return Call("list_orders", {"day": d})
    seen = []
    for o in out(h, "list_orders"):
        if o["customer"] not in seen:
            seen.append(o["customer"])
    k = count(h, "email")
    if k < len(seen):
        return Call("email", {"customer": seen[k]})
    return Answer("Emailed.")


def _dedup_run(cust_idx, harmless=False):
    d = _id("day")
    cs = [_id("c") for _ in range(max(cust_idx) + 1)]
    return Run(
        f"thank the customers of day {d}",
        {"orders": [{"order": _id("o"), "customer": cs[i]} for i in cust_idx], "log": []},
        {"day": d},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_dedupe_customers_core",
        "loops",
        DEDUP_TOOLS,
        _dedup_policy,
        [_dedup_run([0, 1]), _dedup_run([0, 1, 2]), _dedup_run([0, 0, 1])],
        [_dedup_run([0, 1, 2], harmless=True), _dedup_run([0, 1, 0])],
        "one email per distinct customer; a run had a repeat in a row; probe a repeat not in a row "
        "([c0, c1, c0]): the 3-order run would email three",
    )
)

# 9. sync: add what the source has and the target lacks, remove the reverse


def _src(w, repo: str):
    return list(w["src"])


def _dst(w, repo: str):
    return list(w["dst"])


SYNC_TOOLS = [
    Tool("source_ids", _src, check=T),
    Tool("target_ids", _dst, check=T),
    Tool("add", _log("add", "item"), check=T),
    Tool("remove", _log("remove", "item"), check=T),
]


def _sync_policy(text, ctx, h):
    r = word(text, "repo")
    if not done(h, "source_ids"):
        return Call("source_ids", {"repo": r})
    if not done(h, "target_ids"):
        return Call("target_ids", {"repo": r})
    s, d = out(h, "source_ids"), out(h, "target_ids")
    did = {a["item"] for name, a, _o in h if name in ("add", "remove")}
    for i in s:
        if i not in d and i not in did:
            return Call("add", {"item": i})
    for i in d:
        if i not in s and i not in did:
            return Call("remove", {"item": i})
    return Answer("Synced.")


def _sync_run(src, dst, harmless=False):
    r = _id("re")
    ids = {k: _id("it") for k in set(src) | set(dst)}
    return Run(
        f"sync repo {r}",
        {"src": [ids[k] for k in src], "dst": [ids[k] for k in dst], "log": []},
        {"repo": r},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_sync_add_vs_remove_core",
        "loops",
        SYNC_TOOLS,
        _sync_policy,
        [_sync_run("ab", "a"), _sync_run("abc", "ab"), _sync_run("ab", "ab")],
        [_sync_run("abc", "ab", harmless=True), _sync_run("ab", "ba"), _sync_run("ab", "ac")],
        "add ids the source has and the target lacks, remove the reverse; probes: the target reordered "
        "(nothing to do), and a target with one id the source lacks (add b, remove c)",
    )
)

# 10. grouping: one batch per distinct category, in first-appearance order


def _items(w, lot: str):
    return [dict(i) for i in w["items"]]


GROUP_TOOLS = [Tool("list_items", _items, check=T), Tool("create_batch", _log("batch", "category"), check=T)]


def _group_policy(text, ctx, h):
    lot = word(text, "lot")
    if not done(h, "list_items"):
        return Call("list_items", {"lot": lot})
    cats = []
    for i in out(h, "list_items"):
        if i["cat"] not in cats:
            cats.append(i["cat"])
    k = count(h, "create_batch")
    if k < len(cats):
        return Call("create_batch", {"category": cats[k]})
    return Answer("Batched.")


def _group_run(cats, harmless=False):
    lot = _id("lot")
    return Run(
        f"batch lot {lot}",
        {"items": [{"sku": _id("sku"), "cat": c} for c in cats], "log": []},
        {"lot": lot},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_group_by_category_core",
        "loops",
        GROUP_TOOLS,
        _group_policy,
        [
            _group_run(["fragile", "bulk"]),
            _group_run(["fragile", "bulk", "bulk"]),
            _group_run(["fragile", "fragile"]),
        ],
        [_group_run(["fragile", "bulk", "bulk"], harmless=True), _group_run(["fragile", "fragile", "bulk"])],
        "one batch per distinct category; runs [f, b], [f, b, b] (2 batches), [f, f] (1); probe [f, f, b]",
    )
)

# 11. the host chosen at step 0 (a category in its list item) and its health at step 1 decide together


def _hosts(w, svc: str):
    return [dict(x) for x in w["hosts"]]


def _health(w, host: str):
    return {"host": host, "state": w["state"]}


HOST_TOOLS = [
    Tool("list_hosts", _hosts, check=T),
    Tool("health", _health, check=T),
    Tool("deploy", _log("deploy", "host"), check=T),
    Tool("page_oncall", _log("page", "host"), check=T),
]


def _host_policy(text, ctx, h):
    s = word(text, "service")
    if not done(h, "list_hosts"):
        return Call("list_hosts", {"svc": s})
    hs = out(h, "list_hosts")
    pick = next((x for x in hs if x["zone"] == "eu"), hs[0])
    if not done(h, "health"):
        return Call("health", {"host": pick["host"]})
    st = out(h, "health")["state"]
    act = "deploy" if (st == "ok" or pick["zone"] == "canary") else "page_oncall"
    if not done(h, act):
        return Call(act, {"host": pick["host"]})
    return Answer(f"{act}.")


def _host_run(zones, state, harmless=False):
    s = _id("svc")
    return Run(
        f"roll out service {s}",
        {"hosts": [{"host": _id("h"), "zone": z} for z in zones], "state": state, "log": []},
        {"service": s},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_chosen_item_then_details_core",
        "branches",
        HOST_TOOLS,
        _host_policy,
        [_host_run(["eu", "us"], "ok"), _host_run(["canary", "us"], "degraded")],
        [_host_run(["eu", "us"], "ok", harmless=True), _host_run(["eu", "us"], "degraded")],
        "deploy to the first eu host (else the first) when healthy or a canary; runs eu+ok, canary+degraded; "
        "probe eu+degraded: the step 0 list of one run, the step 1 state of the other",
    )
)

# 12. a join across steps: members (step 0) and roles (step 1, another order); revoke each admin


def _members(w, team: str):
    return list(w["members"])


def _roles(w, team: str):
    return [{"user": u, "role": r} for u, r in w["roles"]]


JOIN_TOOLS = [
    Tool("list_members", _members, check=T),
    Tool("list_roles", _roles, check=T),
    Tool("revoke", _log("revoke", "user"), check=T),
]


def _join_policy(text, ctx, h):
    t = word(text, "team")
    if not done(h, "list_members"):
        return Call("list_members", {"team": t})
    if not done(h, "list_roles"):
        return Call("list_roles", {"team": t})
    role = {r["user"]: r["role"] for r in out(h, "list_roles")}
    did = [a["user"] for name, a, _o in h if name == "revoke"]
    for m in out(h, "list_members"):
        if role.get(m) == "admin" and m not in did:
            return Call("revoke", {"user": m})
    return Answer("Revoked.")


def _join_run(roles_order, admin, harmless=False):
    t = _id("tm")
    us = [_id("u"), _id("u")]
    return Run(
        f"revoke admins of team {t}",
        {
            "members": us,
            "roles": [(us[i], "admin" if i == admin else "member") for i in roles_order],
            "log": [],
        },
        {"team": t},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_join_across_steps_core",
        "identities",
        JOIN_TOOLS,
        _join_policy,
        [_join_run([1, 0], 1), _join_run([0, 1], 1)],
        [_join_run([1, 0], 1, harmless=True), _join_run([0, 1], 0)],
        "revoke each member whose role (step 1, its own order) is admin; runs: the second member admin, "
        "listed first or second among roles; probe the first member admin, listed first",
    )
)

# 13. ties: the two cheapest equal, the first listed wins


S.append(
    sc(
        "rt8c_tie_two_cheapest_core",
        "choices",
        OFFER_TOOLS,
        _cheapest_policy,
        [_offer_run([30, 10, 20]), _offer_run([40, 15, 25])],
        [_offer_run([35, 12, 22], harmless=True), _offer_run([30, 20, 20]), _offer_run([10, 20, 10])],
        "cheapest offer, the first of a tie; cheapest was second in every run; probes: second and third tied, "
        "first and third tied",
    )
)

# 14. a list of numbers vs a bound read in another step: every reading under the limit


def _readings(w, sensor: str):
    return {"sensor": sensor, "values": list(w["vals"])}


def _limit(w, sensor: str):
    return {"sensor": sensor, "limit": w["limit"]}


BOUND_TOOLS = [
    Tool("get_limit", _limit, check=T),
    Tool("readings", _readings, check=T),
    Tool("certify", _log("certify", "sensor"), check=T),
    Tool("flag", _log("flag", "sensor"), check=T),
]


def _bound_policy(text, ctx, h):
    s = word(text, "sensor")
    if not done(h, "get_limit"):
        return Call("get_limit", {"sensor": s})
    if not done(h, "readings"):
        return Call("readings", {"sensor": s})
    lim, vals = out(h, "get_limit")["limit"], out(h, "readings")["values"]
    act = "certify" if vals[-1] <= lim else "flag"
    if not done(h, act):
        return Call(act, {"sensor": s})
    return Answer(act)


def _bound_run(lim, vals, harmless=False):
    s = _id("sn")
    return Run(f"check sensor {s}", {"limit": lim, "vals": vals, "log": []}, {"sensor": s}, harmless=harmless)


S.append(
    sc(
        "rt8c_last_reading_vs_limit_core",
        "relations",
        BOUND_TOOLS,
        _bound_policy,
        [
            _bound_run(50, [10, 40]),
            _bound_run(60, [20, 20, 55]),
            _bound_run(45, [30, 20, 10]),
            _bound_run(55, [15, 35]),
        ],
        [_bound_run(50, [20, 20, 40], harmless=True), _bound_run(50, [10, 30, 52])],
        "certify when the latest reading (a list's last number) is within a limit read at step 0; the "
        "list's length varies, so the last reading's place moves; probe the last above the limit",
    )
)

# 15. items gain a field: skip items marked on_hold


def _lines(w, order: str):
    return [dict(x) for x in w["lines"]]


LINE_TOOLS = [Tool("order_lines", _lines, check=T), Tool("pick", _log("pick", "sku"), check=T)]


def _line_policy(text, ctx, h):
    o = word(text, "order")
    if not done(h, "order_lines"):
        return Call("order_lines", {"order": o})
    todo = [x["sku"] for x in out(h, "order_lines") if not x.get("on_hold")]
    k = count(h, "pick")
    if k < len(todo):
        return Call("pick", {"sku": todo[k]})
    return Answer("Picked.")


def _line_run(holds, harmless=False):
    o = _id("or")
    lines = []
    for hv in holds:
        line = {"sku": _id("sku")}
        if hv is not None:
            line["on_hold"] = hv
        lines.append(line)
    return Run(f"pick order {o}", {"lines": lines, "log": []}, {"order": o}, harmless=harmless)


S.append(
    sc(
        "rt8c_item_gains_field_core",
        "loops",
        LINE_TOOLS,
        _line_policy,
        [_line_run([None, True]), _line_run([True, None]), _line_run([False, None])],
        [_line_run([False, None], harmless=True), _line_run([None, None]), _line_run([None, False])],
        "pick the lines not on hold; on_hold present on some items (True or False) and absent on others; "
        "probes: no item has the field (pick two), the field False on the second item",
    )
)

# 16. the min over two lists read in two steps (warehouses' stock), ship from the one with most stock


def _stock_a(w, sku: str):
    return {"site": w["a"][0], "qty": w["a"][1]}


def _stock_b(w, sku: str):
    return {"site": w["b"][0], "qty": w["b"][1]}


STOCK_TOOLS = [
    Tool("stock_north", _stock_a, check=T),
    Tool("stock_south", _stock_b, check=T),
    Tool("ship_from", _log("ship", "site", "sku"), check=T),
]


def _stock_policy(text, ctx, h):
    s = word(text, "sku")
    if not done(h, "stock_north"):
        return Call("stock_north", {"sku": s})
    if not done(h, "stock_south"):
        return Call("stock_south", {"sku": s})
    a, b = out(h, "stock_north"), out(h, "stock_south")
    best = a if a["qty"] >= b["qty"] else b
    if not done(h, "ship_from"):
        return Call("ship_from", {"site": best["site"], "sku": s})
    return Answer("Shipped.")


def _stock_run(qa, qb, harmless=False):
    s = _id("sku")
    return Run(
        f"ship sku {s}",
        {"a": (_id("N"), qa), "b": (_id("S"), qb), "log": []},
        {"sku": s},
        harmless=harmless,
    )


S.append(
    sc(
        "rt8c_max_across_steps_core",
        "choices",
        STOCK_TOOLS,
        _stock_policy,
        [_stock_run(10, 5), _stock_run(30, 20), _stock_run(8, 12)],
        [_stock_run(25, 15, harmless=True), _stock_run(12, 20)],
        "ship from the site with more stock, each site read in its own step; probe south higher in a "
        "north-run's ranges",
    )
)

# 17. a trend: alert when the latest reading rose over the one before (the last two of a list of varying length)


def _trend_policy(text, ctx, h):
    s = word(text, "sensor")
    if not done(h, "readings"):
        return Call("readings", {"sensor": s})
    vals = out(h, "readings")["values"]
    act = "flag" if vals[-1] > vals[-2] else "certify"
    if not done(h, act):
        return Call(act, {"sensor": s})
    return Answer(act)


S.append(
    sc(
        "rt8c_last_two_rising_core",
        "relations",
        BOUND_TOOLS,
        _trend_policy,
        [
            _bound_run(0, [30, 20]),
            _bound_run(0, [10, 40, 25]),
            _bound_run(0, [50, 45, 40]),
            _bound_run(0, [35, 30]),
        ],
        [_bound_run(0, [40, 45, 30], harmless=True), _bound_run(0, [10, 20, 25])],
        "flag when the latest reading rose over the one before; no run rose; the list's length varies so "
        "the last two move; probe [10, 20, 25]: each in its place's range, the total too",
    )
)

# 18. the number of the one item of a category, its position moving among items of another category


def _fleet(w, svc: str):
    return {"hosts": [{"zone": z, "load": n} for z, n in w["hosts"]]}


def _quota(w, svc: str):
    return {"max_load": w["limit"]}


FLEET_TOOLS = [
    Tool("get_quota", _quota, check=T),
    Tool("fleet", _fleet, check=T),
    Tool("scale_up", _log("scale", "svc"), check=T),
]


def _fleet_policy(text, ctx, h):
    s = word(text, "service")
    if not done(h, "get_quota"):
        return Call("get_quota", {"svc": s})
    if not done(h, "fleet"):
        return Call("fleet", {"svc": s})
    lim = out(h, "get_quota")["max_load"]
    eu = next(x for x in out(h, "fleet")["hosts"] if x["zone"] == "eu")
    if eu["load"] > lim:
        if not done(h, "scale_up"):
            return Call("scale_up", {"svc": s})
        return Answer("Scaled.")
    return Answer("Fine.")


def _fleet_run(lim, hosts, harmless=False):
    s = _id("svc")
    return Run(
        f"check service {s}", {"limit": lim, "hosts": hosts, "log": []}, {"service": s}, harmless=harmless
    )


_U = "us"
S.append(
    sc(
        "rt8c_item_of_category_moves_core",
        "relations",
        FLEET_TOOLS,
        _fleet_policy,
        [
            _fleet_run(60, [(_U, 90), ("eu", 40), (_U, 10)]),
            _fleet_run(50, [(_U, 20), (_U, 30), ("eu", 45), (_U, 80)]),
            _fleet_run(70, [(_U, 70), ("eu", 20), (_U, 60), (_U, 15)]),
            _fleet_run(55, [(_U, 40), (_U, 85), ("eu", 50), (_U, 30)]),
        ],
        [
            _fleet_run(60, [(_U, 90), ("eu", 35), (_U, 20)], harmless=True),
            _fleet_run(55, [(_U, 30), (_U, 40), ("eu", 60), (_U, 50)]),
            _fleet_run(55, [(_U, 30), ("eu", 60), (_U, 50), (_U, 40)]),
        ],
        "scale up when the (one) eu host's load is over a quota read at step 0; the eu host sits second or "
        "third among us hosts (the items' order as wholes the same); probe its load over the quota, each "
        "position's load within what the runs saw there",
    )
)

# 19. the same item of a category against the agent's own bound (80): no relation, only its range


def _fleet_policy80(text, ctx, h):
    s = word(text, "service")
    if not done(h, "fleet"):
        return Call("fleet", {"svc": s})
    eu = next(x for x in out(h, "fleet")["hosts"] if x["zone"] == "eu")
    if eu["load"] > 80:
        if not done(h, "scale_up"):
            return Call("scale_up", {"svc": s})
        return Answer("Scaled.")
    return Answer("Fine.")


S.append(
    sc(
        "rt8c_item_of_category_own_bound_core",
        "branches",
        FLEET_TOOLS,
        _fleet_policy80,
        [
            _fleet_run(0, [(_U, 90), ("eu", 40), (_U, 10)]),
            _fleet_run(0, [(_U, 20), (_U, 95), ("eu", 45), (_U, 80)]),
            _fleet_run(0, [(_U, 70), ("eu", 20), (_U, 60), (_U, 15)]),
            _fleet_run(0, [(_U, 40), (_U, 85), ("eu", 50), (_U, 30)]),
        ],
        [
            _fleet_run(0, [(_U, 90), ("eu", 35), (_U, 20)], harmless=True),
            _fleet_run(0, [(_U, 30), ("eu", 85), (_U, 50), (_U, 40)]),
        ],
        "scale up when the (one) eu host's load is over 80 (the agent's own bound); the eu host sits second "
        "or third; probe eu at second with 85, a load the runs saw at second (a us host's)",
    )
)

# 20-27: fronts


def _by(name):
    return next(s for s in S if s.name == name)


S.append(_front(_by("rt8c_loop_min_len_param_core"), "langchain"))
S.append(_front(_by("rt8c_cheapest_at_new_position_core"), "pydantic_ai"))
S.append(_front(_by("rt8c_pagination_third_page_core"), "mcp_proxy"))
S.append(_front(_by("rt8c_map_keyed_by_ids_reordered_core"), "mcp_proxy"))
S.append(_front(_by("rt8c_join_across_steps_core"), "langchain"))
S.append(_front(_by("rt8c_pick_matching_pref_core"), "pydantic_ai"))
S.append(_front(_by("rt8c_dedupe_customers_core"), "mcp_proxy"))
S.append(_front(_by("rt8c_last_reading_vs_limit_core"), "langchain"))
S.append(_front(_by("rt8c_item_of_category_moves_core"), "mcp_proxy"))
