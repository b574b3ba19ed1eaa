"""What the scripted "LLM" decides from the request and transcript: a tool call or the answer.

The policy reads the request as text (as a model would) and looks only at the transcript of the
tool calls made so far, so an agent resumed after a partial replay carries on from where the
replay stopped. Every string it writes into the desk is built from the request alone: an agent
that copied a tool's output into a note (a name, a refund id) would make a trajectory that is only
safe to replay for that one customer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.demo.desk import to_cents

_PATTERNS = {
    "refund": re.compile(r"Refund \$(?P<amount>\d+\.\d\d) to (?P<email>\S+@\S+): (?P<reason>.+)"),
    "plan": re.compile(r"Move (?P<email>\S+@\S+) to the (?P<plan>\w+) plan"),
    "signup": re.compile(r"Sign up (?P<name>.+) <(?P<email>\S+@\S+)>"),
    "close": re.compile(r"(?P<email>\S+@\S+) confirms that ticket (?P<ticket>TCK-\d+) is resolved"),
}


class UnknownRequest(ValueError):
    """A request the agent does not know how to handle."""


@dataclass(frozen=True, slots=True)
class Request:
    """A customer request understood: its kind and the fields named in it."""

    kind: str
    fields: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> Request:
        for kind, pattern in _PATTERNS.items():
            match = pattern.fullmatch(text.strip())
            if match:
                return cls(kind, match.groupdict())
        raise UnknownRequest(f"cannot handle request {text!r}")

    def __getattr__(self, name: str) -> str:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the agent has seen, with its output."""

    tool: str
    args: tuple[Any, ...]
    output: Any


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The decision to call a tool."""

    tool: str
    args: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """The decision to stop, with the agent's answer."""

    value: dict[str, Any]


Action = ToolCall | Answer


@dataclass(slots=True)
class Transcript:
    """The tool calls made so far for one request, replayed ones included."""

    calls: list[Call] = field(default_factory=list)

    @classmethod
    def of(cls, calls: Iterable[Any]) -> Transcript:
        """A transcript from an engine run's steps.

        Each step has ``tool``, ``args``, ``kwargs`` and ``output``.
        """
        return cls([Call(c.tool, (*c.args, *c.kwargs.values()), c.output) for c in calls])

    def add(self, tool: str, args: tuple[Any, ...], output: Any) -> None:
        self.calls.append(Call(tool, args, output))

    def last(self, tool: str, *args: Any) -> Call | None:
        """The latest call of ``tool`` (whose arguments start with ``args``), or None."""
        for call in reversed(self.calls):
            if call.tool == tool and call.args[: len(args)] == args:
                return call
        return None

    def __len__(self) -> int:
        return len(self.calls)


def decide(request: Request, transcript: Transcript) -> Action:
    """The next action for a request, given what has been done."""
    return _POLICIES[request.kind](request, transcript)


def _finish(t: Transcript, ticket: str, steps: list[ToolCall], answer: dict[str, Any]) -> Action:
    """The first of ``steps`` (on ``ticket``) not done yet, else the answer."""
    for step in steps:
        if t.last(step.tool, *step.args) is None:
            return step
    return Answer({"ticket": ticket, **answer})


def _escalate(t: Transcript, ticket: str, note: str, team: str, **answer: Any) -> Action:
    steps = [ToolCall("add_note", (ticket, note)), ToolCall("escalate_ticket", (ticket, team))]
    return _finish(t, ticket, steps, {"outcome": "escalated", "team": team, **answer})


def _refund(r: Request, t: Transcript) -> Action:
    lookup = t.last("lookup_customer", r.email)
    if lookup is None:
        return ToolCall("lookup_customer", (r.email,))
    customer = lookup.output
    if customer is None:
        return Answer({"outcome": "unknown customer"})
    policy = t.last("refund_policy")
    if policy is None:
        return ToolCall("refund_policy")
    created = t.last("create_ticket", customer["id"])
    if created is None:
        return ToolCall("create_ticket", (customer["id"], f"Refund request: {r.reason}", r.amount))
    ticket = created.output
    if customer["status"] != "active":
        return _escalate(t, ticket, "Account suspended: refund not issued.", "trust-and-safety")
    if to_cents(r.amount) > to_cents(policy.output[customer["plan"]]):
        return _escalate(t, ticket, f"Requested ${r.amount} is above the plan's refund limit.", "billing")
    refund = t.last("issue_refund", customer["id"])
    if refund is None:
        return ToolCall("issue_refund", (customer["id"], r.amount, ticket))
    refund_id = refund.output["refund_id"]
    if refund.output["status"] != "issued":
        note = f"Refund of ${r.amount} is held by the payment processor for review."
        return _escalate(t, ticket, note, "billing", refund=refund_id)
    steps = [
        ToolCall("add_note", (ticket, f"Refunded ${r.amount}: {r.reason}")),
        ToolCall("close_ticket", (ticket,)),
    ]
    return _finish(t, ticket, steps, {"outcome": "refunded", "refund": refund_id})


def _plan(r: Request, t: Transcript) -> Action:
    lookup = t.last("lookup_customer", r.email)
    if lookup is None:
        return ToolCall("lookup_customer", (r.email,))
    customer = lookup.output
    if customer is None:
        return Answer({"outcome": "unknown customer"})
    if customer["status"] != "active":
        created = t.last("create_ticket", customer["id"])
        if created is None:
            subject = f"Move to the {r.plan} plan blocked: account suspended"
            return ToolCall("create_ticket", (customer["id"], subject))
        return _finish(
            t,
            created.output,
            [ToolCall("escalate_ticket", (created.output, "trust-and-safety"))],
            {"outcome": "blocked"},
        )
    changed = t.last("change_plan", customer["id"])
    if changed is None:
        return ToolCall("change_plan", (customer["id"], r.plan))
    if changed.output["previous"] == r.plan:
        return Answer({"customer": customer["id"], "outcome": "unchanged"})
    created = t.last("create_ticket", customer["id"])
    if created is None:
        return ToolCall("create_ticket", (customer["id"], f"Moved to the {r.plan} plan"))
    steps = [ToolCall("close_ticket", (created.output,))]
    return _finish(t, created.output, steps, {"customer": customer["id"], "outcome": "changed"})


def _signup(r: Request, t: Transcript) -> Action:
    lookup = t.last("lookup_customer", r.email)
    if lookup is None:
        return ToolCall("lookup_customer", (r.email,))
    if lookup.output is not None:
        return Answer({"customer": lookup.output["id"], "outcome": "already registered"})
    registered = t.last("create_customer", r.name, r.email)
    if registered is None:
        return ToolCall("create_customer", (r.name, r.email))
    customer = registered.output
    created = t.last("create_ticket", customer)
    if created is None:
        return ToolCall("create_ticket", (customer, f"Welcome {r.name}"))
    steps = [
        ToolCall("add_note", (created.output, "Sent the onboarding checklist.")),
        ToolCall("close_ticket", (created.output,)),
    ]
    return _finish(t, created.output, steps, {"customer": customer, "outcome": "registered"})


def _close(r: Request, t: Transcript) -> Action:
    seen = t.last("get_ticket", r.ticket)
    if seen is None:
        return ToolCall("get_ticket", (r.ticket,))
    ticket = seen.output
    if ticket is None:
        return Answer({"ticket": r.ticket, "outcome": "unknown ticket"})
    if ticket["status"] == "closed":
        return Answer({"ticket": r.ticket, "outcome": "already closed"})
    if ticket["status"] == "escalated":
        note = f"{r.email} reports this resolved; left with the escalation team."
        return _finish(t, r.ticket, [ToolCall("add_note", (r.ticket, note))], {"outcome": "left escalated"})
    steps = [
        ToolCall("add_note", (r.ticket, f"Resolution confirmed by {r.email}.")),
        ToolCall("close_ticket", (r.ticket,)),
    ]
    return _finish(t, r.ticket, steps, {"outcome": "closed"})


_POLICIES: dict[str, Callable[[Request, Transcript], Action]] = {
    "refund": _refund,
    "plan": _plan,
    "signup": _signup,
    "close": _close,
}
