"""A multi-step example: method tools on a client, params, data flow and a post-check.

The agent looks a customer up, creates an invoice and sends it. The second task, for another
customer and amount, replays the same three calls without the agent: the email and the amount are
params, and the invoice id returned by ``create_invoice`` flows into ``send_invoice``. When the
customer's account is suspended, the lookup shows it: the replay stops right after it (the recorded
run saw an active account), before the pre-check on ``create_invoice`` would, and the agent takes over.

Run: python examples/multistep.py
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from muscle_mem import Check, Engine, current_run

engine = Engine()


@dataclass
class Billing:
    """A stand-in for a real billing API client."""

    customers: dict[str, dict[str, object]] = field(default_factory=dict)
    invoices: dict[int, dict[str, object]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1001))

    @engine.method()
    def find_customer(self, email: str) -> dict[str, object]:
        return self.customers[email]

    @engine.method(pre_check=Check.equal(lambda self, customer_id, amount: self.status_of(customer_id)))
    def create_invoice(self, customer_id: str, amount: float) -> int:
        invoice_id = next(self._ids)
        self.invoices[invoice_id] = {"customer": customer_id, "amount": amount, "status": "draft"}
        return invoice_id

    @engine.method(post_check=Check.equal(lambda self, invoice_id: self.invoices[invoice_id]["status"]))
    def send_invoice(self, invoice_id: int) -> None:
        self.invoices[invoice_id]["status"] = "sent"

    def status_of(self, customer_id: str) -> object:
        return next(c["status"] for c in self.customers.values() if c["id"] == customer_id)


def agent(task: str, email: str, amount: float) -> int | None:
    """What an LLM agent would do, scripted. It resumes after the steps the engine already replayed."""
    run = current_run()
    done = {step.tool: step.output for step in run.steps} if run else {}
    customer = done.get("Billing.find_customer") or billing.find_customer(email)
    if customer["status"] != "active":
        return None  # an agent would escalate instead of invoicing a suspended account
    invoice_id = billing.create_invoice(customer["id"], amount)
    billing.send_invoice(invoice_id)
    return invoice_id


billing = Billing(
    customers={
        "ada@example.com": {"id": "cus_ada01", "status": "active"},
        "bob@example.com": {"id": "cus_bob02", "status": "active"},
        "eve@example.com": {"id": "cus_eve03", "status": "suspended"},
    }
)
engine.set_agent(agent).set_context(billing)

if __name__ == "__main__":
    for email, amount in [("ada@example.com", 120.0), ("bob@example.com", 75.5), ("eve@example.com", 10.0)]:
        result = engine("invoice the customer", email, amount, params={"email": email, "amount": amount})
        print(f"{email}: hit={result.hit} invoice={result.output} replayed={result.steps_replayed}")
        if not result.hit:
            print(f"  why: {result.reason}")
    print(engine.metrics)
