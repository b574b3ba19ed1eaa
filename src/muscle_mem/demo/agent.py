"""The support agent, and the desk's methods registered as muscle-mem tools with their Checks.

Each Check answers, for one tool, "what in the desk made this call the right one?":

* ``lookup_customer``: whether the email is registered (the agent stops at once if it is not, or,
  for a sign-up, if it is);
* ``get_ticket``: the ticket's status (nothing to do on a closed ticket, only a note on an
  escalated one);
* ``create_customer``: whether the email is already registered;
* ``create_ticket``: whether the account is active (a suspended one gets a different ticket);
* ``change_plan``: the account status, and whether the customer is already on that plan (then the
  agent stops);
* ``issue_refund``: the account status, whether the amount is within the plan's refund limit, and
  the ticket's status; afterwards (post-check) whether the processor issued or held the refund,
  which nobody can know beforehand;
* ``add_note``, ``escalate_ticket``, ``close_ticket``: the ticket's situation (its status, the
  account's status, whether its amount is within the limit, its refund's status).

A trajectory may end right after a read, when what the agent saw left nothing to do: the read's
own Check must then capture what made it stop, or the replay would stop where the agent would
have acted. ``refund_policy`` needs no Check: the refund and escalation steps check the limit.
All Checks compare by equality (:meth:`Check.equal`), so the engine finds snapshots by hash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muscle_mem import Check, Engine, current_run
from muscle_mem.demo.desk import Desk, to_cents
from muscle_mem.demo.llm import ScriptedLLM
from muscle_mem.demo.policy import Answer, Transcript


def email_registered(desk: Desk, *args: str) -> bool:
    """For ``lookup_customer(email)`` and ``create_customer(name, email)``: is the email taken?"""
    return desk.has_customer(args[-1] if len(args) < 3 else args[1])


def ticket_status(desk: Desk, ticket_id: str) -> str | None:
    ticket = desk.ticket(ticket_id)
    return None if ticket is None else str(ticket["status"])


def account_active(desk: Desk, customer_id: str, *_: Any) -> bool:
    customer = desk.customer(customer_id)
    return customer is not None and customer["status"] == "active"


def plan_situation(desk: Desk, customer_id: str, plan: str) -> tuple[str | None, bool]:
    customer = desk.customer(customer_id) or {}
    return customer.get("status"), customer.get("plan") == plan


def refund_situation(desk: Desk, customer_id: str, amount: str, ticket_id: str) -> tuple[Any, ...]:
    customer = desk.customer(customer_id)
    ticket = desk.ticket(ticket_id)
    if customer is None or ticket is None:
        return ("missing",)
    within = to_cents(amount) <= desk.refund_limit(customer["plan"])
    return customer["status"], within, ticket["status"], ticket["customer_id"] == customer_id


def refund_outcome(desk: Desk, customer_id: str, amount: str, ticket_id: str) -> str | None:
    return desk.refund_status(ticket_id)


def ticket_situation(desk: Desk, ticket_id: str, *_: Any) -> tuple[Any, ...]:
    ticket = desk.ticket(ticket_id)
    if ticket is None:
        return ("missing",)
    customer = desk.customer(ticket["customer_id"]) or {}
    cents = ticket["amount_cents"]
    within = None if cents is None else cents <= desk.refund_limit(customer["plan"])
    return ticket["status"], customer.get("status"), within, desk.refund_status(ticket_id)


def instrument(engine: Engine, *, checks: bool = True) -> type[Desk]:
    """A :class:`Desk` subclass whose agent-facing methods are ``engine``'s method tools.

    ``checks=False`` leaves the Checks out, to show what they prevent: use it only with a
    throwaway store, since its trajectories carry no snapshots.
    """

    def tool(name: str, pre: Callable[..., Any] | None = None, post: Callable[..., Any] | None = None) -> Any:
        return engine.method(
            pre_check=Check.equal(pre) if pre is not None and checks else None,
            post_check=Check.equal(post) if post is not None and checks else None,
            name=name,
        )(getattr(Desk, name))

    class ToolDesk(Desk):
        lookup_customer = tool("lookup_customer", pre=email_registered)
        get_ticket = tool("get_ticket", pre=ticket_status)
        refund_policy = tool("refund_policy")
        create_customer = tool("create_customer", pre=email_registered)
        create_ticket = tool("create_ticket", pre=account_active)
        change_plan = tool("change_plan", pre=plan_situation)
        issue_refund = tool("issue_refund", pre=refund_situation, post=refund_outcome)
        add_note = tool("add_note", pre=ticket_situation)
        escalate_ticket = tool("escalate_ticket", pre=ticket_situation)
        close_ticket = tool("close_ticket", pre=ticket_situation)

    return ToolDesk


class SupportAgent:
    """An agent loop: ask the LLM for the next action, call the tool, repeat until it answers.

    Inside an engine run it starts from the run's steps (replayed ones included), so after a
    partial replay it resumes instead of starting over, and it reports the LLM tokens it spends
    (``current_run().add_usage``) so the engine can count the tokens its hits avoid.
    """

    def __init__(self, desk: Desk, llm: ScriptedLLM, *, max_steps: int = 20) -> None:
        self.desk = desk
        self.llm = llm
        self.max_steps = max_steps

    def __call__(self, request: str) -> dict[str, Any]:
        run = current_run()
        transcript = Transcript.of(run.steps) if run is not None else Transcript()
        for _ in range(self.max_steps):
            decision = self.llm.decide(request, transcript)
            if run is not None:
                run.add_usage(decision.usage.prompt_tokens, decision.usage.completion_tokens)
            action = decision.action
            if isinstance(action, Answer):
                return action.value
            output = getattr(self.desk, action.tool)(*action.args)
            transcript.add(action.tool, action.args, output)
        raise RuntimeError(f"no answer after {self.max_steps} steps for {request!r}")
