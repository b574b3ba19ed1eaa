"""A refund desk for the mode tests: the agent looks an order up, then refunds or denies it."""

from __future__ import annotations

from typing import Any

from muscle_mem import Engine, Result, current_run

AGENT_TOKENS = (1000, 100)
"""What the desk's agent reports spending on each run (input, output tokens)."""


def refund_desk(store: Any = None, **options: Any) -> Engine:
    """An engine whose agent refunds a delivered order, or denies it when the desk's policy says so.

    ``engine.desk`` holds the world: each order's status (``delivered`` unless set), and ``refunds``,
    the policy the agent reads itself (no tool shows it to a replay).
    """
    engine = Engine(store, **options)
    desk: dict[str, Any] = {"refunds": True, "status": {}}

    @engine.tool()
    def lookup(order_id: int) -> dict[str, Any]:
        return {"id": order_id, "status": desk["status"].get(order_id, "delivered")}

    @engine.tool()
    def refund(order_id: int) -> str:
        return f"refunded {order_id}"

    @engine.tool()
    def deny(order_id: int) -> str:
        return f"denied {order_id}"

    def agent(task: str) -> str:
        order_id = int(task.split()[-1])
        order = lookup(order_id)
        run = current_run()
        assert run is not None
        run.add_usage(*AGENT_TOKENS, model="desk-model")
        if desk["refunds"] and order["status"] == "delivered":
            return refund(order_id)
        return deny(order_id)

    engine.set_agent(agent)
    engine.desk = desk  # type: ignore[attr-defined]
    return engine


def ask(engine: Engine, order_id: int) -> Result:
    """Ask the desk to refund one order (its id a declared param: one task family for every order)."""
    return engine(f"refund order {order_id}", params={"order_id": order_id})
