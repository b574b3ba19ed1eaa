"""Choices by a criterion: a better element appended to the list must change the choice."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Policy, Run, Scenario, Step, Tool
from .kit import done, out, word


def _ch(
    name: str,
    front: Front,
    tools: list[Tool],
    policy: Policy,
    text: str,
    records: list[dict[str, Any]],
    probes: list[dict[str, Any]],
    doc: str,
) -> Scenario:
    return Scenario(
        name,
        "choices",
        front,
        tools,
        policy,
        [Run(text, w) for w in records],
        [Run(text, w) for w in probes],
        doc=doc,
    )


# ---- the cheapest flight ----------------------------------------------------------------------------------


def search_flights(w: dict[str, Any], dest: str) -> list[dict[str, Any]]:
    return [dict(f) for f in w["flights"]]


def book_flight(w: dict[str, Any], flight_id: str) -> str:
    w["booked"].append(flight_id)
    return f"booked {flight_id}"


FLIGHT_TOOLS = [
    Tool("search_flights", search_flights, check=lambda w, dest: True),
    Tool(
        "book_flight",
        book_flight,
        check=lambda w, flight_id: any(f["id"] == flight_id for f in w["flights"]),
    ),
]


def flight_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    dest = word(text, "to")
    if not done(h, "search_flights"):
        return Call("search_flights", {"dest": dest})
    best = min(out(h, "search_flights"), key=lambda f: f["price"])
    if not done(h, "book_flight"):
        return Call("book_flight", {"flight_id": best["id"]})
    return Answer(f"Booked {best['id']} at {best['price']}.")


def flights(*offers: tuple[str, int]) -> dict[str, Any]:
    return {"flights": [{"id": i, "price": p} for i, p in offers], "booked": []}


# ---- the highest bid --------------------------------------------------------------------------------------


def list_bids(w: dict[str, Any], lot: str) -> list[dict[str, Any]]:
    return [dict(b) for b in w["bids"]]


def accept_bid(w: dict[str, Any], bidder: str, amount: int) -> str:
    w["accepted"].append((bidder, amount))
    return "accepted"


BID_TOOLS = [
    Tool("list_bids", list_bids, check=lambda w, lot: True),
    Tool("accept_bid", accept_bid, check=lambda w, bidder, amount: w["auction_open"]),
]


def bid_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    lot = word(text, "lot")
    if not done(h, "list_bids"):
        return Call("list_bids", {"lot": lot})
    best = max(out(h, "list_bids"), key=lambda b: b["amount"])
    if not done(h, "accept_bid"):
        return Call("accept_bid", {"bidder": best["bidder"], "amount": best["amount"]})
    return Answer(f"Sold to {best['bidder']}.")


def bids(*offers: tuple[str, int]) -> dict[str, Any]:
    return {"bids": [{"bidder": b, "amount": a} for b, a in offers], "accepted": [], "auction_open": True}


# ---- the team with most open tickets ----------------------------------------------------------------------


def team_load(w: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"team": t, "open": n} for t, n in w["load"].items()]


def add_engineer(w: dict[str, Any], team: str) -> str:
    w["staffed"].append(team)
    return f"added to {team}"


TEAM_TOOLS = [
    Tool("team_load", team_load, check=lambda w: True),
    Tool("add_engineer", add_engineer, check=lambda w, team: team in w["load"]),
]


def team_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "team_load"):
        return Call("team_load")
    busiest = max(out(h, "team_load"), key=lambda t: t["open"])["team"]
    if not done(h, "add_engineer"):
        return Call("add_engineer", {"team": busiest})
    return Answer(f"Added an engineer to {busiest}.")


def load(**teams: int) -> dict[str, Any]:
    return {"load": dict(teams), "staffed": []}


# ---- the replica with least lag ---------------------------------------------------------------------------


def replicas(w: dict[str, Any], cluster: str) -> list[dict[str, Any]]:
    return [{"host": h, "lag_ms": lag} for h, lag in w["lag"].items()]


def promote(w: dict[str, Any], host: str) -> str:
    w["promoted"].append(host)
    return f"promoted {host}"


REPLICA_TOOLS = [
    Tool("replicas", replicas, check=lambda w, cluster: True),
    Tool("promote", promote, check=lambda w, host: host in w["lag"]),
]


def replica_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    cluster = word(text, "cluster")
    if not done(h, "replicas"):
        return Call("replicas", {"cluster": cluster})
    best = min(out(h, "replicas"), key=lambda r: r["lag_ms"])["host"]
    if not done(h, "promote"):
        return Call("promote", {"host": best})
    return Answer(f"Promoted {best}.")


def lag(**hosts: int) -> dict[str, Any]:
    return {"lag": dict(hosts), "promoted": []}


SCENARIOS = [
    _ch(
        "cheapest_flight_core",
        "core",
        FLIGHT_TOOLS,
        flight_policy,
        "book the cheapest flight to Oslo",
        [flights(("AF1", 300), ("KL2", 250))],
        [flights(("AF1", 300), ("KL2", 250), ("SK3", 180))],
        "A cheaper flight appended to the search result.",
    ),
    _ch(
        "cheapest_flight_pydantic_ai",
        "pydantic_ai",
        FLIGHT_TOOLS,
        flight_policy,
        "book the cheapest flight to Oslo",
        [flights(("AF1", 300), ("KL2", 250))],
        [flights(("AF1", 200), ("KL2", 250))],
        "The other flight's price dropped below the chosen one's.",
    ),
    _ch(
        "highest_bid_langchain",
        "langchain",
        BID_TOOLS,
        bid_policy,
        "close the auction of lot 12",
        [bids(("ann", 100), ("ben", 140))],
        [bids(("ann", 100), ("ben", 140), ("cat", 175))],
        "A higher bid appended.",
    ),
    _ch(
        "highest_bid_core",
        "core",
        BID_TOOLS,
        bid_policy,
        "close the auction of lot 12",
        [bids(("ann", 100), ("ben", 140))],
        [bids(("ben", 140), ("ann", 160))],
        "The list reordered and another bid is now highest.",
    ),
    _ch(
        "most_open_tickets_pydantic_ai",
        "pydantic_ai",
        TEAM_TOOLS,
        team_policy,
        "staff the busiest team",
        [load(web=12, api=7)],
        [load(web=12, api=7, data=30)],
        "A team with more open tickets appended.",
    ),
    _ch(
        "most_open_tickets_core",
        "core",
        TEAM_TOOLS,
        team_policy,
        "staff the busiest team",
        [load(web=12, api=7)],
        [load(web=5, api=7)],
        "The chosen team's count dropped below the other's.",
    ),
    _ch(
        "least_lag_replica_core",
        "core",
        REPLICA_TOOLS,
        replica_policy,
        "promote a replica of cluster eu1",
        [lag(db1=40, db2=15)],
        [lag(db1=40, db2=15, db3=3)],
        "A replica with less lag appended.",
    ),
    _ch(
        "least_lag_replica_langchain",
        "langchain",
        REPLICA_TOOLS,
        replica_policy,
        "promote a replica of cluster eu1",
        [lag(db1=40, db2=15)],
        [lag(db1=10, db2=15)],
        "The other replica's lag fell below the chosen one's, through LangChain.",
    ),
]
