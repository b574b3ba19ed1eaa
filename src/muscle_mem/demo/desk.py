"""A small support-desk CRM on one SQLite file: the environment the demo agent acts on.

:class:`Desk` is the application's client. Its public methods without a leading underscore fall in
three groups: the API an agent uses (the tools), observations the Checks read, and operations other
people do to the desk between tasks (a suspension, a policy change, a colleague closing a ticket).
Every value is deterministic (ids come from counters, there are no timestamps), so two copies of a
desk given the same requests end in the same :meth:`Desk.state`.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

PLANS = {"Starter": 2_500, "Growth": 10_000, "Enterprise": 50_000}
"""Each plan's refund limit in cents: a refund above it needs the billing team."""

SCHEMA = """
CREATE TABLE plans (name TEXT PRIMARY KEY, refund_limit_cents INTEGER NOT NULL);
CREATE TABLE customers (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    plan TEXT NOT NULL REFERENCES plans(name),
    status TEXT NOT NULL CHECK (status IN ('active', 'suspended'))
);
CREATE TABLE tickets (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(id),
    subject TEXT NOT NULL,
    amount_cents INTEGER,
    status TEXT NOT NULL CHECK (status IN ('open', 'escalated', 'closed')),
    team TEXT
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    ticket_id TEXT NOT NULL REFERENCES tickets(id),
    body TEXT NOT NULL
);
CREATE TABLE refunds (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(id),
    ticket_id TEXT NOT NULL REFERENCES tickets(id),
    amount_cents INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('issued', 'held'))
);
CREATE TABLE processor_reviews (customer_id TEXT PRIMARY KEY REFERENCES customers(id));
CREATE TABLE counters (prefix TEXT PRIMARY KEY, next INTEGER NOT NULL);
"""

_TABLES = ("plans", "customers", "tickets", "notes", "refunds", "processor_reviews", "counters")
_FIRST_IDS = {"CUS": 1001, "TCK": 5001, "RFD": 9001}

FIRST_NAMES = (
    "Ada", "Alan", "Grace", "Linus", "Barbara", "Dennis", "Margaret", "Ken", "Frances", "Edsger",
    "Radia", "Donald", "Hedy", "John", "Karen", "Niklaus", "Sophie", "Tim", "Shafi", "Leslie",
)  # fmt: skip
LAST_NAMES = (
    "Lovelace", "Turing", "Hopper", "Torvalds", "Liskov", "Ritchie", "Hamilton", "Thompson", "Allen",
    "Dijkstra", "Perlman", "Knuth", "Lamarr", "Backus", "Jones", "Wirth", "Wilson", "Berners", "Goldwasser",
    "Lamport",
)  # fmt: skip
DOMAINS = ("example.com", "example.org", "mail.example.net", "corp.example.io")
_SEED_SUBJECTS = (
    "Cannot log in",
    "Invoice address is wrong",
    "Export to CSV fails",
    "Two-factor codes not arriving",
)


class DeskError(Exception):
    """A request the CRM refuses: an unknown id, a closed ticket, a suspended account."""


def to_cents(amount: str) -> int:
    """``"42.50"`` -> ``4250``; raises :class:`DeskError` on anything that is not a positive amount."""
    try:
        value = Decimal(amount)
    except (InvalidOperation, TypeError) as exc:
        raise DeskError(f"not an amount: {amount!r}") from exc
    if value <= 0 or value != value.quantize(Decimal("0.01")):
        raise DeskError(f"not a positive amount in cents: {amount!r}")
    return int(value * 100)


def to_dollars(cents: int) -> str:
    """``4250`` -> ``"42.50"``."""
    return f"{cents // 100}.{cents % 100:02d}"


class Desk:
    """A client of the support-desk database in ``path``.

    It holds one connection, safe to use from one thread at a time.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise DeskError(f"no support desk at {self.path}")
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA synchronous = OFF")  # a demo desk, rebuilt every run: no fsync per write
        self._lock = threading.Lock()

    @classmethod
    def create(cls, path: str | Path, *, seed: int = 0, customers: int = 40) -> Desk:
        """A new desk in ``path`` (replacing any file there) with seeded customers and tickets."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        with sqlite3.connect(path) as db:
            db.executescript(SCHEMA)
            db.executemany("INSERT INTO plans VALUES (?, ?)", PLANS.items())
            db.executemany("INSERT INTO counters VALUES (?, ?)", _FIRST_IDS.items())
        db.close()
        desk = cls(path)
        rng = random.Random(seed)
        for name, email in sample_people(rng, customers):
            plan = rng.choices(list(PLANS), weights=(5, 3, 2))[0]
            customer_id = desk.create_customer(name, email, plan)
            if rng.random() < 0.1:
                desk.set_status(customer_id, "suspended")
            if rng.random() < 0.3:
                desk.create_ticket(customer_id, rng.choice(_SEED_SUBJECTS))
        return desk

    # -- the agent's API (the tools) ---------------------------------------------------------------

    def lookup_customer(self, email: str) -> dict[str, str] | None:
        """The customer with this email: id, name, email, plan and status (active or suspended)."""
        row = self._one("SELECT id, name, email, plan, status FROM customers WHERE email = ?", email)
        return None if row is None else dict(row)

    def create_customer(self, name: str, email: str, plan: str = "Starter") -> str:
        """Register a customer on a plan; returns the new customer id."""
        if plan not in PLANS:
            raise DeskError(f"unknown plan {plan!r}")
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM customers WHERE email = ?", (email,)).fetchone():
                raise DeskError(f"a customer with email {email!r} already exists")
            customer_id = self._next_id(db, "CUS")
            db.execute(
                "INSERT INTO customers VALUES (?, ?, ?, ?, 'active')", (customer_id, email, name, plan)
            )
        return customer_id

    def refund_policy(self) -> dict[str, str]:
        """Each plan's refund limit in dollars; larger refunds must go to the billing team."""
        rows = self._db.execute("SELECT name, refund_limit_cents FROM plans ORDER BY name").fetchall()
        return {row["name"]: to_dollars(row["refund_limit_cents"]) for row in rows}

    def get_ticket(self, ticket_id: str) -> dict[str, Any] | None:
        """A ticket: id, customer id, subject, requested amount, status (open, escalated, closed) and notes."""
        row = self._one("SELECT * FROM tickets WHERE id = ?", ticket_id)
        if row is None:
            return None
        notes = self._db.execute(
            "SELECT body FROM notes WHERE ticket_id = ? ORDER BY id", (ticket_id,)
        ).fetchall()
        ticket = dict(row)
        cents = ticket.pop("amount_cents")
        ticket["amount"] = None if cents is None else to_dollars(cents)
        ticket["notes"] = [n["body"] for n in notes]
        return ticket

    def create_ticket(self, customer_id: str, subject: str, amount: str | None = None) -> str:
        """Open a ticket for a customer, with the amount requested if it is about money; returns its id."""
        cents = None if amount is None else to_cents(amount)
        with self._transaction() as db:
            self._customer(db, customer_id)
            ticket_id = self._next_id(db, "TCK")
            db.execute(
                "INSERT INTO tickets VALUES (?, ?, ?, ?, 'open', NULL)",
                (ticket_id, customer_id, subject, cents),
            )
        return ticket_id

    def add_note(self, ticket_id: str, body: str) -> None:
        """Add an internal note to a ticket."""
        with self._transaction() as db:
            self._ticket(db, ticket_id)
            db.execute("INSERT INTO notes (ticket_id, body) VALUES (?, ?)", (ticket_id, body))

    def issue_refund(self, customer_id: str, amount: str, ticket_id: str) -> dict[str, str]:
        """Refund a customer through the payment processor.

        Returns the refund id and its status: ``issued``, or ``held`` when the processor holds it for review.
        """
        cents = to_cents(amount)
        with self._transaction() as db:
            if self._customer(db, customer_id)["status"] != "active":
                raise DeskError(f"customer {customer_id} is suspended: refunds are blocked")
            if self._ticket(db, ticket_id)["customer_id"] != customer_id:
                raise DeskError(f"ticket {ticket_id} belongs to another customer")
            review = db.execute(
                "SELECT 1 FROM processor_reviews WHERE customer_id = ?", (customer_id,)
            ).fetchone()
            status = "held" if review else "issued"
            refund_id = self._next_id(db, "RFD")
            db.execute(
                "INSERT INTO refunds VALUES (?, ?, ?, ?, ?)",
                (refund_id, customer_id, ticket_id, cents, status),
            )
        return {"refund_id": refund_id, "status": status}

    def escalate_ticket(self, ticket_id: str, team: str) -> None:
        """Hand an open ticket to another team (billing, trust-and-safety)."""
        with self._transaction() as db:
            if self._ticket(db, ticket_id)["status"] != "open":
                raise DeskError(f"ticket {ticket_id} is not open")
            db.execute("UPDATE tickets SET status = 'escalated', team = ? WHERE id = ?", (team, ticket_id))

    def close_ticket(self, ticket_id: str) -> None:
        """Close a ticket that is open or escalated."""
        with self._transaction() as db:
            if self._ticket(db, ticket_id)["status"] == "closed":
                raise DeskError(f"ticket {ticket_id} is already closed")
            db.execute("UPDATE tickets SET status = 'closed' WHERE id = ?", (ticket_id,))

    def change_plan(self, customer_id: str, plan: str) -> dict[str, str]:
        """Move an active customer to a plan; returns the previous plan and the current one."""
        if plan not in PLANS:
            raise DeskError(f"unknown plan {plan!r}")
        with self._transaction() as db:
            customer = self._customer(db, customer_id)
            if customer["status"] != "active":
                raise DeskError(f"customer {customer_id} is suspended")
            db.execute("UPDATE customers SET plan = ? WHERE id = ?", (plan, customer_id))
        return {"previous": customer["plan"], "plan": plan}

    # -- observations (what the Checks read) --------------------------------------------------------

    def customer(self, customer_id: str) -> dict[str, Any] | None:
        """A customer's row, or None."""
        row = self._one("SELECT * FROM customers WHERE id = ?", customer_id)
        return None if row is None else dict(row)

    def ticket(self, ticket_id: str) -> dict[str, Any] | None:
        """A ticket's row, or None."""
        row = self._one("SELECT * FROM tickets WHERE id = ?", ticket_id)
        return None if row is None else dict(row)

    def refund_limit(self, plan: str) -> int:
        """A plan's refund limit in cents."""
        row = self._one("SELECT refund_limit_cents FROM plans WHERE name = ?", plan)
        if row is None:
            raise DeskError(f"unknown plan {plan!r}")
        return int(row[0])

    def refund_status(self, ticket_id: str) -> str | None:
        """The status of the latest refund made for a ticket, or None."""
        row = self._one("SELECT status FROM refunds WHERE ticket_id = ? ORDER BY id DESC LIMIT 1", ticket_id)
        return None if row is None else str(row[0])

    def has_customer(self, email: str) -> bool:
        """Whether a customer with this email exists."""
        return self._one("SELECT 1 FROM customers WHERE email = ?", email) is not None

    def customers(self) -> list[dict[str, Any]]:
        """Every customer's row, by id."""
        return [dict(r) for r in self._db.execute("SELECT * FROM customers ORDER BY id").fetchall()]

    def tickets(self, status: str | None = None) -> list[dict[str, Any]]:
        """Every ticket's row (or those with a status), by id."""
        if status is None:
            rows = self._db.execute("SELECT * FROM tickets ORDER BY id").fetchall()
        else:
            rows = self._db.execute(
                "SELECT * FROM tickets WHERE status = ? ORDER BY id", (status,)
            ).fetchall()
        return [dict(r) for r in rows]

    # -- operations by other people ----------------------------------------------------------------

    def set_status(self, customer_id: str, status: str) -> None:
        """Trust and safety suspends or reactivates an account."""
        with self._transaction() as db:
            self._customer(db, customer_id)
            db.execute("UPDATE customers SET status = ? WHERE id = ?", (status, customer_id))

    def set_refund_limit(self, plan: str, cents: int) -> None:
        """Finance changes a plan's refund limit."""
        with self._transaction() as db:
            if (
                db.execute("UPDATE plans SET refund_limit_cents = ? WHERE name = ?", (cents, plan)).rowcount
                != 1
            ):
                raise DeskError(f"unknown plan {plan!r}")

    def flag_for_review(self, customer_id: str) -> None:
        """The payment processor starts holding this customer's refunds for review (the desk cannot see it)."""
        with self._transaction() as db:
            self._customer(db, customer_id)
            db.execute("INSERT OR IGNORE INTO processor_reviews VALUES (?)", (customer_id,))

    # -- whole-desk helpers ------------------------------------------------------------------------

    def state(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, in a canonical order: equal states mean equal desks."""
        with self._lock:
            return {
                table: [tuple(r) for r in self._db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()]
                for table in _TABLES
            }

    def copy_to(self, path: str | Path) -> Desk:
        """A consistent copy of this desk in another file (SQLite's online backup)."""
        path = Path(path)
        path.unlink(missing_ok=True)
        target = sqlite3.connect(path)
        try:
            with self._lock:
                self._db.backup(target)
        finally:
            target.close()
        return Desk(path)

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> Desk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Desk({str(self.path)!r})"

    # -- internals ---------------------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self._db.execute(sql, args).fetchone()
        return row

    @staticmethod
    def _next_id(db: sqlite3.Connection, prefix: str) -> str:
        number = db.execute("SELECT next FROM counters WHERE prefix = ?", (prefix,)).fetchone()[0]
        db.execute("UPDATE counters SET next = next + 1 WHERE prefix = ?", (prefix,))
        return f"{prefix}-{number}"

    @staticmethod
    def _customer(db: sqlite3.Connection, customer_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = db.execute(
            "SELECT * FROM customers WHERE id = ?", (customer_id,)
        ).fetchone()
        if row is None:
            raise DeskError(f"no customer {customer_id!r}")
        return row

    @staticmethod
    def _ticket(db: sqlite3.Connection, ticket_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = db.execute("SELECT * FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
        if row is None:
            raise DeskError(f"no ticket {ticket_id!r}")
        return row


def sample_people(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """``count`` distinct (name, email) pairs."""
    people: dict[str, str] = {}
    while len(people) < count:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        email = f"{first}.{last}@{rng.choice(DOMAINS)}".lower()
        people.setdefault(email, f"{first} {last}")
    return [(name, email) for email, name in people.items()]
