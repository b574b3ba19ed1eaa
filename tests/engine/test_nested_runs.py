"""A run that hands work to another run is never stored without that work."""

from __future__ import annotations

from typing import Any

from muscle_mem import Engine


def test_a_tool_called_inside_another_engines_run_is_never_left_out_of_a_hit() -> None:
    """A tool of the first engine, called by a second engine's agent during the first engine's run, is part of
    what the next call does: a full hit charges, or the agent runs again."""
    shop, helper = Engine(), Engine()
    done: list[tuple[str, Any]] = []

    @shop.tool()
    def charge(amount: int) -> None:
        done.append(("charge", amount))

    @shop.tool()
    def ship(order: str) -> None:
        done.append(("ship", order))

    @helper.tool()
    def lookup(query: str) -> str:
        return query

    def helper_agent(task: str) -> str:
        lookup(task)
        charge(2500)  # the sub-agent uses the shop's tool
        return "paid"

    def shop_agent(task: str) -> str:
        helper("take the payment")
        ship("ord_1234")
        return "done"

    helper.set_agent(helper_agent)
    shop.set_agent(shop_agent)
    shop("process order ord_1234")
    recorded = len(done)
    second = shop("process order ord_1234")
    assert not (second.hit and ("charge", 2500) not in done[recorded:]), (
        f"full hit that did {done[recorded:]}: the charge was never replayed"
    )


def test_a_sub_task_handed_to_the_same_engine_is_done_again_by_the_next_call() -> None:
    """A sub-task the agent hands to the same engine is never missing from the outer task's next call: the
    account is created and the welcome mail sent, replayed or not."""
    engine = Engine()
    done: list[str] = []

    @engine.tool()
    def create_account(email: str) -> str:
        done.append("create")
        return "acct_100200"

    @engine.tool()
    def send_welcome(email: str) -> str:
        done.append("welcome")
        return "sent"

    def agent(task: str) -> str:
        if task == "welcome the user":
            return send_welcome("ann@example.com")
        create_account("ann@example.com")
        engine("welcome the user")  # delegate the sub-task
        return "onboarded"

    engine.set_agent(agent)
    engine("onboard the user")
    done.clear()
    result = engine("onboard the user")
    assert sorted(done) == ["create", "welcome"], (result.hit, done)
