"""A seeded stream of support requests, and the changes other people make to the desk between them.

Requests repeat with different customers, amounts and tickets. Some meet a changed desk: the
account was just suspended, finance lowered the plan's refund limit, the payment processor holds
the customer's refunds, a colleague closed the ticket, the customer is already on the plan or
already registered. Those are the cases a replayed trajectory must not be trusted for.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.demo.desk import PLANS, Desk, sample_people, to_dollars

_REASONS = (
    "the parcel arrived damaged",
    "I was charged twice",
    "the order never arrived",
    "I cancelled within the trial",
    "the item is not as described",
)
_MIX = {"refund": 0.5, "close": 0.2, "plan": 0.15, "signup": 0.15}


@dataclass(frozen=True, slots=True)
class Task:
    """One request: the text the agent gets, its params and tags, and what changed just before it."""

    kind: str
    text: str
    params: dict[str, str]
    event: str | None = None
    """What someone else did to the desk right before this request (already applied), if anything."""

    @property
    def tags(self) -> list[str]:
        return [self.kind]


@dataclass(slots=True)
class Workload:
    """Draws requests against the live desk (reading it to pick real customers and tickets)."""

    desk: Desk
    seed: int = 0
    change_rate: float = 0.25
    """How often a request meets a desk changed in a way that matters to it."""
    _rng: random.Random = field(init=False)
    _new_people: Iterator[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        people = sample_people(random.Random(self.seed + 1), 400)
        known = {c["email"] for c in self.desk.customers()}
        self._new_people = iter([(n, e.replace("@", ".new@")) for n, e in people if e not in known])

    def tasks(self, count: int) -> Iterator[Task]:
        """``count`` requests; each one's event is applied to the desk when the request is drawn."""
        kinds, weights = list(_MIX), list(_MIX.values())
        for _ in range(count):
            kind = self._rng.choices(kinds, weights)[0]
            if kind == "close" and not self.desk.tickets("open") and not self.desk.tickets("escalated"):
                kind = "refund"
            yield getattr(self, f"_{kind}")()

    def _changed(self) -> bool:
        return self._rng.random() < self.change_rate

    def _customer(self, **where: Any) -> dict[str, Any]:
        rows = [c for c in self.desk.customers() if all(c[k] == v for k, v in where.items())]
        return self._rng.choice(rows or self.desk.customers())

    def _refund(self) -> Task:
        customer = self._customer(status="active") if self._rng.random() < 0.9 else self._customer()
        limit = self.desk.refund_limit(customer["plan"])
        cents = self._rng.randrange(500, min(limit, 20_000)) + self._rng.choice((0, 49, 99))
        event = None
        if self._changed():
            event = self._rng.choice(("suspend", "policy", "processor"))
            if event == "suspend" and customer["status"] != "active":
                event = "processor"
            if event == "suspend":
                self.desk.set_status(customer["id"], "suspended")
                event = f"trust and safety suspended {customer['email']}"
            elif event == "policy":
                lowered = max(1_000, cents - self._rng.randrange(100, 1_000))
                self.desk.set_refund_limit(customer["plan"], lowered)
                event = f"finance lowered the {customer['plan']} refund limit to ${to_dollars(lowered)}"
            else:
                self.desk.flag_for_review(customer["id"])
                event = f"the payment processor now reviews refunds for {customer['email']}"
        elif self._rng.random() < 0.15:
            self._restore()
        amount, reason = to_dollars(cents), self._rng.choice(_REASONS)
        params = {"amount": amount, "email": customer["email"], "reason": reason}
        return Task("refund", f"Refund ${amount} to {customer['email']}: {reason}", params, event)

    def _restore(self) -> None:
        """Things go back to normal now and then: an account reinstated, a refund limit restored."""
        suspended = [c for c in self.desk.customers() if c["status"] == "suspended"]
        if suspended:
            self.desk.set_status(self._rng.choice(suspended)["id"], "active")
        plan = self._rng.choice(list(PLANS))
        self.desk.set_refund_limit(plan, PLANS[plan])

    def _close(self) -> Task:
        tickets = self.desk.tickets("open") or self.desk.tickets("escalated")
        ticket = self._rng.choice(tickets)
        email = self.desk.customer(ticket["customer_id"])["email"]  # type: ignore[index]
        event = None
        if self._changed():
            self.desk.close_ticket(ticket["id"])
            event = f"a colleague closed {ticket['id']}"
        params = {"email": email, "ticket": ticket["id"]}
        return Task("close", f"{email} confirms that ticket {ticket['id']} is resolved", params, event)

    def _plan(self) -> Task:
        customer = self._customer()
        others = [p for p in PLANS if p != customer["plan"]]
        event = None
        if self._changed():
            plan = customer["plan"]
            event = f"{customer['email']} is already on the {plan} plan"
        else:
            plan = self._rng.choice(others)
        params = {"email": customer["email"], "plan": plan}
        return Task("plan", f"Move {customer['email']} to the {plan} plan", params, event)

    def _signup(self) -> Task:
        name, email = next(self._new_people)
        event = None
        if self._changed():
            existing = self._customer()
            name, email = existing["name"], existing["email"]
            event = f"{email} had already signed up"
        params = {"name": name, "email": email}
        return Task("signup", f"Sign up {name} <{email}>", params, event)
