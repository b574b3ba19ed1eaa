"""False replays and corrupted values found in review: each test failed before its fix (the docstrings
say what went wrong)."""

from __future__ import annotations

import asyncio
from typing import Any

from muscle_mem import Engine, current_run
from muscle_mem.provenance import Agree, Param


def test_a_bool_param_outside_the_task_text_is_part_of_the_task() -> None:
    """A bool param is never turned into a reference (recording.py ``_ArgBuilder.build`` skips bools),
    and params that do not occur in the agent's arguments are not part of the task key (keys.py
    ``task_key``). So ``params={"force": True}`` and ``params={"force": False}`` are one task and the
    recorded ``delete(force=True)`` is replayed, as a full hit, for a caller that said force=False."""
    engine = Engine()
    calls: list[Any] = []

    @engine.tool()
    def delete_branch(name: str, force: bool) -> str:
        calls.append((name, force))
        return "deleted"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        return delete_branch("feature-login", force=run.params["force"])

    engine.set_agent(agent)
    engine("clean up the feature branch", params={"force": True})
    calls.clear()
    result = engine("clean up the feature branch", params={"force": False})
    # the caller asked for force=False: either the agent runs, or a replay passes force=False
    assert calls == [("feature-login", False)], (result.hit, calls)


def test_an_int_param_inside_a_tool_string_is_never_replayed_stale() -> None:
    """Templates are only made for str params (keys.py ``split_template``); an int param used inside a
    tool's string argument is stored as a constant, and since the param is not in the agent's
    arguments the next call with another value is the same task: the old number is replayed."""
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


def test_two_params_with_equal_values_never_bind_to_the_wrong_one() -> None:
    """When two params have the same value at recording (a requester who assigns the ticket to
    herself), every argument equal to that value becomes a reference to the *first* param
    (recording.py ``_ArgBuilder.build``). Replayed with different values, the assignee receives the
    requester's address: a wrong argument on a full hit."""
    engine = Engine()
    assigned: list[tuple[str, str]] = []

    @engine.tool()
    def open_ticket(requester: str, assignee: str) -> str:
        assigned.append((requester, assignee))
        return "TCK-1001"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        return open_ticket(run.params["requester"], run.params["assignee"])

    engine.set_agent(agent)
    engine("open the ticket", params={"requester": "ann@example.com", "assignee": "ann@example.com"})
    assigned.clear()
    engine("open the ticket", params={"requester": "ann@example.com", "assignee": "bob@example.com"})
    assert assigned == [("ann@example.com", "bob@example.com")], assigned


def test_concurrent_async_tool_calls_are_each_recorded() -> None:
    """``Run.depth`` (recording.py) is meant to skip tool calls made *inside* a tool, but it is shared
    by every asyncio task of the run: when an async agent runs two tools with ``asyncio.gather`` (the
    usual way to serve parallel tool calls), the second call sees depth 1 and is not recorded. The
    trajectory stored lacks it, and the next call is a full hit that never runs that tool."""
    engine = Engine()
    done: list[str] = []

    @engine.tool()
    async def charge_card(order_id: str) -> str:
        await asyncio.sleep(0.01)
        done.append("charge")
        return "charged"

    @engine.tool()
    async def send_receipt(order_id: str) -> str:
        await asyncio.sleep(0.01)
        done.append("receipt")
        return "sent"

    async def agent(task: str) -> str:
        await asyncio.gather(charge_card("ord_12345"), send_receipt("ord_12345"))
        return "order complete"

    engine.set_agent(agent)

    async def main() -> None:
        first = await engine.arun("complete order ord_12345")
        assert sorted(done) == ["charge", "receipt"]
        done.clear()
        second = await engine.arun("complete order ord_12345")
        assert sorted(done) == ["charge", "receipt"], (first.stored, second.hit, done)

    asyncio.run(main())


def test_a_stored_tuple_argument_is_copied_for_each_replay() -> None:
    """``replay.resolve`` hands a static value to the tool as is when it is a tuple (listed in
    ``_IMMUTABLE``), but a tuple may hold lists or dicts: a tool that changes them changes the stored
    trajectory itself, and every later replay passes the corrupted argument."""
    engine = Engine()
    seen: list[list[str]] = []

    @engine.tool()
    def send_batch(batch: tuple[list[str], str]) -> str:
        recipients, _subject = batch
        seen.append(list(recipients))
        recipients.append("audit@example.com")  # the tool adds its audit copy to the list it got
        return "sent"

    def agent(task: str) -> str:
        return send_batch((["ann@example.com"], "weekly report"))

    engine.set_agent(agent)
    engine("send the weekly report")
    for _ in range(2):
        assert engine("send the weekly report").hit
    assert seen == [["ann@example.com"]] * 3, seen


def test_a_stored_tuple_answer_is_copied_for_each_hit() -> None:
    """The answer of a hit is resolved by ``replay.resolve`` without a copy when it is a tuple, so a
    caller that changes a list inside the output it got changes what every later hit returns."""
    engine = Engine()

    @engine.tool()
    def list_open_tickets() -> int:
        return 1

    def agent(task: str) -> tuple[str, list[str]]:
        list_open_tickets()
        return ("ok", ["TCK-1001", "TCK-1002"])

    engine.set_agent(agent)
    engine("summarize the queue")
    first = engine("summarize the queue")
    assert first.hit
    first.output[1].clear()  # the caller consumes its copy
    second = engine("summarize the queue")
    assert second.output == ("ok", ["TCK-1001", "TCK-1002"]), second.output


def test_a_sub_task_handed_to_the_engine_keeps_the_outer_run_from_being_stored() -> None:
    """An agent that hands a sub-task to the same engine (a sub-agent) runs it in a new current run
    (engine.py ``_running`` sets ``CURRENT_RUN``); the outer run neither records the sub-task's tool
    calls nor knows it was skipped, so the outer trajectory is stored without them and its next call
    is a full hit that never does the sub-task."""
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


def test_a_param_inside_a_dataclass_argument_is_never_replayed_as_a_constant() -> None:
    """``_ArgBuilder`` (recording.py) looks for params inside lists, tuples and dicts only
    (``_struct``); a dataclass, named tuple or pydantic model argument holding a param value (the
    usual typed tool input) is stored as a constant. The task key templates the param, so the call
    for Jane is the same task and the replay sends John's record."""
    from dataclasses import dataclass

    @dataclass
    class Customer:
        name: str
        plan: str

    engine = Engine()
    invoiced: list[str] = []

    @engine.tool()
    def send_invoice(customer: Customer) -> str:
        invoiced.append(customer.name)
        return "sent"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        return send_invoice(Customer(name=run.params["name"], plan="pro"))

    engine.set_agent(agent)
    engine("send the invoice to John Smith", params={"name": "John Smith"})
    invoiced.clear()
    result = engine("send the invoice to Jane Doe", params={"name": "Jane Doe"})
    assert invoiced == ["Jane Doe"], (result.hit, invoiced)


def test_an_equal_check_sees_a_nested_pydantic_model_change_type() -> None:
    """``codec._enc_object`` encodes a pydantic model through ``model_dump()``, which turns nested
    models into plain dicts: ``Order(state=Paid(at=d))`` and ``Order(state=Refunded(at=d))`` have one
    fingerprint although they are not equal. ``Check.equal`` is judged by that fingerprint
    (replay.py ``_checked``), so the pre-check passes after the order was refunded and the refund is
    replayed a second time. (Decoding the stored snapshot also gives back ``Paid`` for ``Refunded``.)"""
    from pydantic import BaseModel

    from muscle_mem import Check

    class Paid(BaseModel):
        at: str

    class Refunded(BaseModel):
        at: str

    class Order(BaseModel):
        order_id: str
        state: Paid | Refunded

    orders = {"ord_5521": Order(order_id="ord_5521", state=Paid(at="2024-05-01"))}
    engine = Engine()
    refunds: list[str] = []

    @engine.tool(pre_check=Check.equal(lambda order_id: orders[order_id]))
    def refund(order_id: str) -> str:
        refunds.append(order_id)
        orders[order_id] = Order(order_id=order_id, state=Refunded(at="2024-05-01"))
        return "refunded"

    def agent(task: str) -> str:
        if isinstance(orders["ord_5521"].state, Refunded):
            return "already refunded"
        return refund("ord_5521")

    engine.set_agent(agent)
    engine("refund order ord_5521")
    assert refunds == ["ord_5521"]
    result = engine("refund order ord_5521")  # the order is now Refunded: the pre-check must fail
    assert refunds == ["ord_5521"], (result.hit, result.output, refunds)


def test_worker_thread_tool_calls_are_made_again_by_the_next_call() -> None:
    """Tool calls an agent makes from a thread pool run outside the run's context (``contextvars``
    are not copied by ``ThreadPoolExecutor``); they are part of what the next call of the task does,
    replayed or not (never a trajectory stored without them)."""
    from concurrent.futures import ThreadPoolExecutor

    engine = Engine()
    refunded: list[str] = []

    @engine.tool()
    def list_orders(customer: str) -> list[str]:
        return ["ord_1001", "ord_1002"]

    @engine.tool()
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    def agent(task: str) -> str:
        orders = list_orders("cus_4471")
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(refund, orders))
        return "refunded all"

    engine.set_agent(agent)
    engine("refund every order of cus_4471")
    refunded.clear()
    result = engine("refund every order of cus_4471")
    assert sorted(refunded) == ["ord_1001", "ord_1002"], (result.hit, refunded)


def test_a_stored_argument_that_no_longer_decodes_is_never_passed_to_the_tool(tmp_path: Any) -> None:
    """When a stored static argument's class no longer fits its data (a dataclass gained a field) the
    codec decodes it as ``codec.Opaque``; replay.py ``resolve`` passes that placeholder to the tool as
    if it were the recorded argument (the tool's own version did not change). A static argument that
    did not decode to its class should make the step unsafe (a miss), not be passed on."""
    import sys
    import types

    from muscle_mem import codec

    module = types.ModuleType("review_jobs_mod")
    sys.modules["review_jobs_mod"] = module
    try:
        exec(
            "from dataclasses import dataclass\n@dataclass\nclass Job:\n    kind: str\n    target: str\n",
            module.__dict__,
        )
        queued: list[Any] = []

        def make_engine() -> Engine:
            engine = Engine(f"sqlite:///{tmp_path}/cache.db")

            @engine.tool(name="enqueue")
            def enqueue(job: Any) -> str:
                queued.append(job)
                return "queued"

            engine.set_agent(lambda task: enqueue(module.Job("reindex", "catalog")))
            return engine

        with make_engine() as first:
            first("reindex the catalog")
        # a new release: Job gained a field; the tool is unchanged
        exec(
            "from dataclasses import dataclass\n"
            "@dataclass\nclass Job:\n    kind: str\n    target: str\n    priority: int = 0\n",
            module.__dict__,
        )
        queued.clear()
        with make_engine() as second:
            second("reindex the catalog")
        assert queued and not isinstance(queued[0], codec.Opaque), queued
    finally:
        del sys.modules["review_jobs_mod"]


def test_an_output_inside_a_dataclass_argument_is_never_replayed_as_a_constant() -> None:
    """Same gap as for params (recording.py ``_ArgBuilder._struct`` only opens lists, tuples and
    dicts): an id returned by an earlier tool and passed inside a dataclass argument is stored as a
    constant, so the replay creates a new user and then gives the role to the user of the recording."""
    import itertools
    from dataclasses import dataclass

    @dataclass
    class Assignment:
        user_id: str
        role: str

    engine = Engine()
    ids = itertools.count(1)
    assigned: list[str] = []

    @engine.tool()
    def create_user(email: str) -> str:
        return f"usr_{next(ids):04d}"

    @engine.tool()
    def assign_role(assignment: Assignment) -> str:
        assigned.append(assignment.user_id)
        return "ok"

    def agent(task: str) -> str:
        user_id = create_user("ann@example.com")
        return assign_role(Assignment(user_id, "admin"))

    engine.set_agent(agent)
    engine("set up ann@example.com as admin")
    result = engine("set up ann@example.com as admin")  # creates usr_0002
    assert assigned == ["usr_0001", "usr_0002"], (result.hit, assigned)


def test_a_value_equal_to_two_params_is_bound_to_both() -> None:
    """When two params have one value at recording, the argument is bound to both: it replays while
    they agree, and a run where they differ is another task."""
    engine = Engine()
    assigned: list[tuple[str, str]] = []

    @engine.tool()
    def open_ticket(requester: str, assignee: str) -> str:
        assigned.append((requester, assignee))
        return "TCK-1001"

    engine.set_agent(lambda task, req, to: open_ticket(req, to))
    params = {"requester": "ann@example.com", "assignee": "ann@example.com"}
    result = engine("open a ticket", "ann@example.com", "ann@example.com", params=params)
    assert result.stored
    both = Agree((Param("requester"), Param("assignee")))
    assert engine.store.get(str(result.trajectory_id)).steps[0].args == (both, both)  # type: ignore[union-attr]
    assert engine("open a ticket", "ann@example.com", "ann@example.com", params=params).hit
    other = {"requester": "ann@example.com", "assignee": "bob@example.com"}
    assert not engine("open a ticket", "ann@example.com", "bob@example.com", params=other).hit
    assert assigned[-1] == ("ann@example.com", "bob@example.com")


def test_worker_thread_calls_in_a_copied_context_are_recorded() -> None:
    """The way out the README gives: submit tool calls with the run's context, and they are steps."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    engine = Engine()
    refunded: list[str] = []

    @engine.tool()
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    def agent(task: str) -> str:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, refund, o) for o in ("ord_1001", "ord_1002")
            ]
            return ", ".join(f.result() for f in futures)

    engine.set_agent(agent)
    assert engine("refund the two orders").stored
    refunded.clear()
    result = engine("refund the two orders")
    assert result.hit and sorted(refunded) == ["ord_1001", "ord_1002"]
