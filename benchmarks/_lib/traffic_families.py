"""The task families of the traffic benchmark: a world, its tools, and a scripted model per family.

A support desk and tasks after AgentDojo's suites (banking, workspace, travel, slack): each family
makes a task text from fresh values (order ids, e-mail addresses, IBANs, file names, cities, dates,
amounts, quoted messages) and has a *policy*, the scripted model: given the task text and the tool
outputs so far, the next tool call or the final answer. The policy reads its values from the text
alone, as a model would; the same policy drives the plain-Python agent and the pydantic-ai
``FunctionModel``. Every tool acts on the world held in :data:`WORLD` (so a replay acts on the
world of the current run), and fresh ids come from a counter in the world, so two runs on equal
worlds end in equal worlds.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

World = dict[str, Any]
Action = tuple[str, dict[str, Any]] | str
"""A tool call ``(tool, kwargs)``, or the final answer."""
Policy = Callable[[str, list[Any]], Action]

CITIES = ["Paris", "London", "Rome", "Berlin", "Madrid", "Lisbon", "Vienna", "Prague", "Oslo", "Dublin"]
CITIES += ["Athens", "Warsaw", "Zurich", "Brussels", "Munich", "Milan", "Porto", "Seville", "Lyon", "Krakow"]
NAMES = ["Ada", "Bob", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivan", "Jade", "Kai", "Lena", "Mia"]
NAMES += ["Nils", "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Vic", "Wes", "Yara", "Zoe"]
CHANNELS = ["general", "random", "engineering", "marketing", "support", "design", "sales", "finance"]
MESSAGES = ["See you at noon", "Thanks for the update", "Sounds good to me", "I will send it today"]
MESSAGES += ["Please review the draft", "Happy to help", "Running late today", "Lunch is on me"]
STREETS = ["Elm", "Oak", "Maple", "Cedar", "Pine", "Birch", "Willow", "Aspen", "Spruce", "Hazel"]
ORDERS = range(1000, 1600)
EMAIL_IDS = range(300, 700)


def make_world(seed: int = 7) -> World:
    """A world with enough entities that every family can be asked 50 times with fresh values."""
    rng = random.Random(seed)
    users = [f"{n.lower()}.{s.lower()}@{d}" for n in NAMES for s in STREETS for d in ("acme.io", "mail.com")]
    return {
        "next_id": 1,
        "orders": {i: {"id": i, "status": "delivered", "amount": 20 + i % 60} for i in ORDERS},
        "refunds": [],
        "users": {e: {"user_id": f"usr_{i:04d}", "email": e, "plan": "pro"} for i, e in enumerate(users)},
        "resets": [],
        "tickets": {f"TCK-{i}": {"id": f"TCK-{i}", "status": "open"} for i in range(2000, 2600)},
        "accounts": {_iban(rng): {"balance": rng.randrange(100, 5000)} for _ in range(300)},
        "transactions": [],
        "files": {
            f"{w}_{i}.{x}": {"id": f"file_{i:04d}_{w}", "shared": []}
            for w in ("report", "notes", "plan")
            for i in range(200)
            for x in ("pdf",)
        },
        "hotels": {c: {"name": f"Hotel {c} Central", "price": 80 + 7 * i} for i, c in enumerate(CITIES)},
        "reservations": [],
        "inbox": {
            i: {"id": i, "sender": users[i % len(users)], "subject": f"Question {i}"} for i in EMAIL_IDS
        },
        "sent": [],
        "calendar": [],
        "channels": {c: {"members": [], "messages": []} for c in CHANNELS},
        "address": {"street": "1 Main Street"},
    }


def _iban(rng: random.Random) -> str:
    return "DE" + "".join(str(rng.randrange(10)) for _ in range(20))


def _fresh(world: World, prefix: str) -> str:
    number = world["next_id"]
    world["next_id"] = number + 1
    return f"{prefix}{number:05d}"


def tool_functions(world_of: Callable[[], World]) -> dict[str, Callable[..., Any]]:
    """The tools, each acting on ``world_of()``: the world of the run in progress."""

    def lookup_order(order_id: int) -> dict[str, Any]:
        return dict(world_of()["orders"][order_id])

    def refund_order(order_id: int, amount: int) -> str:
        world = world_of()
        world["orders"][order_id]["status"] = "refunded"
        world["refunds"].append((order_id, amount))
        return f"refunded {amount} for order {order_id}"

    def find_user(email: str) -> dict[str, Any]:
        return dict(world_of()["users"][email])

    def reset_password(user_id: str) -> str:
        world_of()["resets"].append(user_id)
        return "a reset link was sent"

    def get_ticket(ticket_id: str) -> dict[str, Any]:
        return dict(world_of()["tickets"][ticket_id])

    def close_ticket(ticket_id: str, note: str) -> str:
        world_of()["tickets"][ticket_id]["status"] = "closed"
        return f"closed: {note}"

    def send_money(recipient: str, amount: int, subject: str) -> dict[str, Any]:
        world = world_of()
        transaction = {
            "id": _fresh(world, "tx_"),
            "recipient": recipient,
            "amount": amount,
            "subject": subject,
        }
        world["transactions"].append(transaction)
        return {"transaction_id": transaction["id"]}

    def get_balance(iban: str) -> dict[str, Any]:
        return {"iban": iban, "balance": world_of()["accounts"][iban]["balance"]}

    def search_files(filename: str) -> list[dict[str, Any]]:
        found = world_of()["files"].get(filename)
        return [{"id": found["id"], "filename": filename}] if found else []

    def share_file(file_id: str, email: str) -> str:
        world = world_of()
        for item in world["files"].values():
            if item["id"] == file_id:
                item["shared"].append(email)
        return "shared"

    def delete_file(file_id: str) -> str:
        world = world_of()
        world["files"] = {k: v for k, v in world["files"].items() if v["id"] != file_id}
        return "deleted"

    def get_hotel(city: str) -> dict[str, Any]:
        return dict(world_of()["hotels"][city])

    def reserve_hotel(hotel: str, start_day: str, nights: int) -> dict[str, Any]:
        world = world_of()
        reservation = {"id": _fresh(world, "res_"), "hotel": hotel, "start": start_day, "nights": nights}
        world["reservations"].append(reservation)
        return {"reservation_id": reservation["id"]}

    def get_email(email_id: int) -> dict[str, Any]:
        return dict(world_of()["inbox"][email_id])

    def send_email(to: str, subject: str, body: str) -> dict[str, Any]:
        world = world_of()
        sent = {"id": _fresh(world, "mail_"), "to": to, "subject": subject, "body": body}
        world["sent"].append(sent)
        return {"id": sent["id"]}

    def create_event(title: str, day: str, participants: list[str]) -> dict[str, Any]:
        world = world_of()
        event = {"id": _fresh(world, "ev_"), "title": title, "day": day, "participants": participants}
        world["calendar"].append(event)
        return {"event_id": event["id"]}

    def invite_to_channel(user: str, channel: str) -> str:
        world_of()["channels"][channel]["members"].append(user)
        return f"{user} joined {channel}"

    def post_message(channel: str, body: str) -> str:
        world_of()["channels"][channel]["messages"].append(body)
        return "posted"

    def update_address(street: str) -> str:
        world_of()["address"] = {"street": street}
        return "address updated"

    return {
        f.__name__: f
        for f in [
            lookup_order,
            refund_order,
            find_user,
            reset_password,
            get_ticket,
            close_ticket,
            send_money,
            get_balance,
            search_files,
            share_file,
            delete_file,
            get_hotel,
            reserve_hotel,
            get_email,
            send_email,
            create_event,
            invite_to_channel,
            post_message,
            update_address,
        ]
    }


@dataclass(frozen=True)
class Family:
    """A kind of task: texts made from fresh values, the values as declared params, and its policy."""

    name: str
    starts: str
    """How its texts begin (how the agent tells the families apart)."""
    values: Callable[[random.Random, World], dict[str, Any]]
    text: Callable[[dict[str, Any]], str]
    policy: Policy


def _find(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    if found is None:
        raise ValueError(f"the model cannot read {pattern!r} in {text!r}")
    return found.group(1)


def _refund(text: str, seen: list[Any]) -> Action:
    order_id = int(_find(r"order (\d+)", text))
    if not seen:
        return "lookup_order", {"order_id": order_id}
    if len(seen) == 1:
        if seen[0]["status"] != "delivered":
            return f"order {order_id} cannot be refunded: it is {seen[0]['status']}"
        return "refund_order", {"order_id": order_id, "amount": seen[0]["amount"]}
    return f"Done: {seen[1]}."


def _reset(text: str, seen: list[Any]) -> Action:
    email = _find(r"of (\S+@\S+)$", text)
    if not seen:
        return "find_user", {"email": email}
    if len(seen) == 1:
        return "reset_password", {"user_id": seen[0]["user_id"]}
    return f"The password of {email} was reset."


def _close(text: str, seen: list[Any]) -> Action:
    ticket = _find(r"(TCK-\d+)", text)
    if not seen:
        return "get_ticket", {"ticket_id": ticket}
    if len(seen) == 1:
        if seen[0]["status"] != "open":
            return f"{ticket} is already {seen[0]['status']}"
        return "close_ticket", {"ticket_id": ticket, "note": "closed by the support desk"}
    return f"{ticket} is closed."


def _send(text: str, seen: list[Any]) -> Action:
    amount, iban = int(_find(r"send (\d+) ", text)), _find(r"to (DE\d+)", text)
    if not seen:
        return "send_money", {"recipient": iban, "amount": amount, "subject": "transfer"}
    return f"Sent {amount} to {iban} (transaction {seen[0]['transaction_id']})."


def _balance(text: str, seen: list[Any]) -> Action:
    iban = _find(r"account (DE\d+)", text)
    if not seen:
        return "get_balance", {"iban": iban}
    return f"The balance of {iban} is {seen[0]['balance']}."


def _share(text: str, seen: list[Any]) -> Action:
    name, email = _find(r"share (\S+) with", text), _find(r"with (\S+@\S+)$", text)
    if not seen:
        return "search_files", {"filename": name}
    if len(seen) == 1:
        if not seen[0]:
            return f"There is no file named {name}."
        return "share_file", {"file_id": seen[0][0]["id"], "email": email}
    return f"{name} is shared with {email}."


def _delete(text: str, seen: list[Any]) -> Action:
    name = _find(r"delete the file (\S+)$", text)
    if not seen:
        return "search_files", {"filename": name}
    if len(seen) == 1:
        if not seen[0]:
            return f"There is no file named {name}."
        return "delete_file", {"file_id": seen[0][0]["id"]}
    return f"{name} is deleted."


def _hotel(text: str, seen: list[Any]) -> Action:
    city, day = _find(r"hotel in (\w+)", text), _find(r"from (\d{4}-\d{2}-\d{2})", text)
    nights = int(_find(r"for (\d+) nights", text))
    if not seen:
        return "get_hotel", {"city": city}
    if len(seen) == 1:
        return "reserve_hotel", {"hotel": seen[0]["name"], "start_day": day, "nights": nights}
    return f"Booked {seen[0]['name']} for {nights} nights (reservation {seen[1]['reservation_id']})."


def _reply(text: str, seen: list[Any]) -> Action:
    email_id, body = int(_find(r"email (\d+)", text)), _find(r'"([^"]+)"', text)
    if not seen:
        return "get_email", {"email_id": email_id}
    if len(seen) == 1:
        return "send_email", {"to": seen[0]["sender"], "subject": "Re: " + seen[0]["subject"], "body": body}
    return f"Replied to {seen[0]['sender']}."


def _meet(text: str, seen: list[Any]) -> Action:
    email, day = _find(r"with (\S+@\S+) on", text), _find(r"on (\d{4}-\d{2}-\d{2})", text)
    if not seen:
        return "create_event", {"title": "Meeting", "day": day, "participants": [email]}
    return f"The meeting with {email} is on {day}."


def _invite(text: str, seen: list[Any]) -> Action:
    user, channel = _find(r"invite (\w+) to", text), _find(r"channel (\w+)$", text)
    if not seen:
        return "invite_to_channel", {"user": user, "channel": channel}
    return f"{user} is in #{channel}."


def _post(text: str, seen: list[Any]) -> Action:
    body, channel = _find(r'post "([^"]+)"', text), _find(r"in channel (\w+)$", text)
    if not seen:
        return "post_message", {"channel": channel, "body": body}
    return f"Posted in #{channel}."


def _address(text: str, seen: list[Any]) -> Action:
    number, street = _find(r"to (\d+) ", text), _find(r"\d+ (\w+) Street", text)
    if not seen:
        return "update_address", {"street": f"{number} {street} Street"}
    return "Your address is updated."


def _day(rng: random.Random) -> str:
    return f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"


def families() -> list[Family]:
    """The benchmark's task families, each with fresh values per ask."""
    return [
        Family(
            "refund an order",
            "refund order",
            lambda r, w: {"order": r.choice(ORDERS)},
            lambda v: f"refund order {v['order']}",
            _refund,
        ),
        Family(
            "reset a password",
            "reset the password",
            lambda r, w: {"email": r.choice(sorted(w["users"]))},
            lambda v: f"reset the password of {v['email']}",
            _reset,
        ),
        Family(
            "close a ticket",
            "close ticket",
            lambda r, w: {"ticket": f"TCK-{r.randrange(2000, 2600)}"},
            lambda v: f"close ticket {v['ticket']}",
            _close,
        ),
        Family(
            "send money",
            "send ",
            lambda r, w: {"amount": r.randrange(10, 900), "iban": r.choice(sorted(w["accounts"]))},
            lambda v: f"send {v['amount']} dollars to {v['iban']}",
            _send,
        ),
        Family(
            "read a balance",
            "what is the balance",
            lambda r, w: {"iban": r.choice(sorted(w["accounts"]))},
            lambda v: f"what is the balance of account {v['iban']}",
            _balance,
        ),
        Family(
            "share a file",
            "share ",
            lambda r, w: {"file": r.choice(sorted(w["files"])), "email": r.choice(sorted(w["users"]))},
            lambda v: f"share {v['file']} with {v['email']}",
            _share,
        ),
        Family(
            "delete a file",
            "delete the file",
            lambda r, w: {"file": r.choice(sorted(w["files"]))},
            lambda v: f"delete the file {v['file']}",
            _delete,
        ),
        Family(
            "book a hotel",
            "book a hotel",
            lambda r, w: {"city": r.choice(CITIES), "day": _day(r), "nights": r.randrange(1, 15)},
            lambda v: f"book a hotel in {v['city']} from {v['day']} for {v['nights']} nights",
            _hotel,
        ),
        Family(
            "reply to an e-mail",
            "reply to email",
            lambda r, w: {"email_id": r.choice(EMAIL_IDS), "body": r.choice(MESSAGES)},
            lambda v: f'reply to email {v["email_id"]} saying "{v["body"]}"',
            _reply,
        ),
        Family(
            "schedule a meeting",
            "schedule a meeting",
            lambda r, w: {"email": r.choice(sorted(w["users"])), "day": _day(r)},
            lambda v: f"schedule a meeting with {v['email']} on {v['day']}",
            _meet,
        ),
        Family(
            "invite to a channel",
            "invite ",
            lambda r, w: {"user": r.choice(NAMES), "channel": r.choice(CHANNELS)},
            lambda v: f"invite {v['user']} to channel {v['channel']}",
            _invite,
        ),
        Family(
            "post a message",
            "post ",
            lambda r, w: {"body": r.choice(MESSAGES), "channel": r.choice(CHANNELS)},
            lambda v: f'post "{v["body"]}" in channel {v["channel"]}',
            _post,
        ),
        Family(
            "update an address",
            "update my address",
            lambda r, w: {"number": r.randrange(1, 200), "street": r.choice(STREETS)},
            lambda v: f"update my address to {v['number']} {v['street']} Street",
            _address,
        ),
    ]


def policy_for(text: str, known: list[Family]) -> Policy:
    """The policy of the family a text belongs to (the agent's reading of the request)."""
    for family in known:
        if text.startswith(family.starts):
            return family.policy
    raise ValueError(f"no family reads {text!r}")
