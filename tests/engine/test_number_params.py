"""A number param is templated in the task where it stands whole, as a string param is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Engine, MissReason, current_run
from muscle_mem.model._task_keys import task_key, task_text


def key(text: str, **params: Any) -> str:
    return task_key((text,), {}, (), params)


def test_an_int_param_makes_one_task_for_every_value() -> None:
    assert key("refund order 4471", order_id=4471) == key("refund order 5000", order_id=5000)
    assert key("refund order 5", order_id=5) == key("refund order 12", order_id=12)
    assert task_text(("refund order 4471",), {}, {"order_id": 4471}) == "refund order {order_id}"


def test_a_float_param_is_templated_where_it_stands_whole() -> None:
    assert key("scale by 2.5 now", factor=2.5) == key("scale by 3.75 now", factor=3.75)
    assert key("scale by 12.5", factor=2.5) != key("scale by 13.75", factor=3.75)
    assert key("scale by 2.55", factor=2.5) != key("scale by 3.55", factor=3.5)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("refund order 15", "refund order 17"),  # inside a longer number
        ("refund order A5", "refund order A7"),  # inside a word
        ("refund 1.5 units", "refund 1.7 units"),  # the decimals of a number
        ("refund 5.1 units", "refund 7.1 units"),  # the whole part of a decimal
        ("due 2024-5-5", "due 2024-7-7"),  # a date component
        ("due 5/12/2024", "due 7/12/2024"),
        ("at 10:5", "at 10:7"),
        ("refund 5,000 dollars", "refund 7,000 dollars"),  # a thousands separator
    ],
)
def test_a_number_param_inside_a_longer_token_is_not_templated(first: str, second: str) -> None:
    """Where the number is not whole, its value stays part of the task: two values, two tasks."""
    assert key(first, n=5) != key(second, n=7)


def test_a_bool_param_is_not_a_number() -> None:
    assert key("retry 1 time", retry=True) != key("retry 0 time", retry=False)
    assert key("retry True", retry=True) != key("retry False", retry=False)


def test_a_longer_string_param_is_found_before_a_number_inside_it() -> None:
    assert key("ship order 5 to Ada", order="order 5", qty=5) == key(
        "ship order 7 to Ada", order="order 7", qty=5
    )


def test_a_number_in_two_places_keeps_the_text() -> None:
    # the 5 items may be another quantity the agent reads, not the order id: each text is its own task
    assert key("refund 5 items of order 5", order_id=5) != key("refund 7 items of order 7", order_id=7)
    assert key("refund 5 items of order 5", order_id=5) != key("refund 5 items of order 7", order_id=7)
    assert key("refund 5 items of order 5", order_id=5) == key("refund 5 items of order 5", order_id=5)


def test_an_order_id_call_replays_for_another_order_id(tmp_path: Path) -> None:
    refunded: list[int] = []
    url = f"sqlite:///{tmp_path / 'cache.db'}"

    def agent(task: str) -> str:
        order_id = int(task.rsplit(" ", 1)[1])
        return refund(order_id)

    with Engine(url) as engine:

        @engine.tool()
        def refund(order_id: int) -> str:
            refunded.append(order_id)
            return f"refunded {order_id}"

        engine.set_agent(agent)
        first = engine("refund order 4471", params={"order_id": 4471})
    with Engine(url) as engine:
        refund = engine.register(refund.__wrapped__)
        engine.set_agent(agent)
        second = engine("refund order 5000", params={"order_id": 5000})
    assert not first.hit and first.stored
    assert second.hit and second.output == "refunded 5000"
    assert refunded == [4471, 5000]


def test_semantic_matching_sees_the_number_param_as_a_placeholder() -> None:
    """``refund order {order_id}`` finds its rewording for another order as a candidate (run by the
    agent, not replayed); a number that is no param still tells two tasks apart."""
    refunded: list[int] = []
    engine = Engine(match="semantic", embedder="hashing")

    @engine.tool()
    def refund(order_id: int) -> str:
        refunded.append(order_id)
        return f"refunded {order_id}"

    engine.set_agent(lambda task: refund(int(task.rsplit(" ", 1)[1])))
    assert (
        task_text(("please refund order 5000",), {}, {"order_id": 5000}) == "please refund order {order_id}"
    )
    assert not engine("refund order 4471", params={"order_id": 4471})
    candidate = engine("please refund order 5000", params={"order_id": 5000})
    assert candidate.miss_reason is MissReason.SIMILAR_TASK and engine.metrics.similar_agreed == 1
    assert engine("please refund order 5001", params={"order_id": 5001}).hit
    unrelated = engine("please refund order 6000")
    assert not unrelated and unrelated.miss_reason is MissReason.NO_TRAJECTORY
    assert refunded == [4471, 5000, 5001, 6000]


def test_an_int_param_of_the_agent_arguments_is_never_replayed_stale_inside_a_tool_string() -> None:
    """An int param that is also an agent argument makes one task for every value; inside a tool's string it is
    replayed with the caller's value, or the call misses."""
    engine = Engine()
    sent: list[str] = []

    @engine.tool()
    def send(text: str) -> None:
        sent.append(text)

    def agent(order_id: int) -> str:
        send(f"the refund for order {order_id} was issued")
        return "ok"

    engine.set_agent(agent)
    engine(order_id=4471, params={"order_id": 4471})
    second = engine(order_id=5000, params={"order_id": 5000})
    assert not (second.hit and sent[-1] == "the refund for order 4471 was issued"), (
        "order 5000 was answered by replaying the message about order 4471"
    )


def test_a_str_param_the_agent_converts_to_an_int_is_replayed_converted() -> None:
    """A number a tool receives whose text equals a str param (the agent converted it) follows that param:
    order 5000 is refunded as 5000."""
    engine = Engine()
    refunded: list[int] = []

    @engine.tool()
    def refund(order_id: int) -> None:
        refunded.append(order_id)

    def agent(task: str) -> str:
        refund(int(task.split()[-1]))
        return "ok"

    engine.set_agent(agent)
    engine("refund order 4471", params={"order": "4471"})
    engine("refund order 5000", params={"order": "5000"})
    assert refunded == [4471, 5000], f"order 5000 got the refund of {refunded[-1]}"


def test_an_int_param_outside_the_agent_arguments_is_never_replayed_stale_inside_a_tool_string() -> None:
    """An int param the agent reads from the run, formatted into a tool's string, replays with the caller's
    value: quantity 5000 is never posted as 3000."""
    engine = Engine()
    sent: list[str] = []

    @engine.tool()
    def post_message(channel: str, text: str) -> None:
        sent.append(text)

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        post_message("#ops", f"please restock {run.params['quantity']} units of SKU-1234")
        return "posted"

    engine.set_agent(agent)
    engine("ask ops to restock the item", params={"quantity": 3000})
    sent.clear()
    engine("ask ops to restock the item", params={"quantity": 5000})
    assert sent == ["please restock 5000 units of SKU-1234"], sent


def test_a_small_int_param_does_not_refuse_a_run_whose_text_holds_other_digits() -> None:
    """A small int param (``qty=2``) is looked for in a text as a number, not as a substring: a run whose
    answer also holds the date ``2024-05-12`` is stored."""
    engine = Engine()
    orders: list[int] = []

    @engine.tool()
    def order(qty: int) -> str:
        orders.append(qty)
        return "ok"

    def agent(task: str, qty: int) -> str:
        order(qty)
        return f"Ordered {qty} items on 2024-05-12"

    engine.set_agent(agent)
    first = engine("order", 2, params={"qty": 2})
    assert first.stored, "a run with qty=2 and a date in its answer was refused"


def test_an_int_param_formatted_with_decimals_is_never_replayed_stale() -> None:
    """An int param written with decimals (``1042.00``) is never replayed with the recorded number: the call
    for 5000 charges ``5000.00``."""
    engine = Engine()
    charged: list[str] = []

    @engine.tool()
    def charge(memo: str) -> None:
        charged.append(memo)

    def agent(task: str, amount: int) -> str:
        charge(f"charge {amount:.2f} USD")
        return "ok"

    engine.set_agent(agent)
    engine("charge the customer", 1042, params={"amount": 1042})
    engine("charge the customer", 5000, params={"amount": 5000})
    assert charged[-1] == "charge 5000.00 USD", f"amount 5000 was charged as {charged[-1]!r}"
