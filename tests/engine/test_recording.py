"""Recording: params and data flow (point 4), only successes cached (5), concurrency (7), quiet (9)."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine, NotStoredReason, Secret, current_run
from muscle_mem.model import codec
from muscle_mem.model.provenance import (
    Agree,
    Const,
    Output,
    Param,
    Pick,
    Template,
    all_args,
    element_identity,
)
from muscle_mem.model.trajectory import Trajectory, to_record


def stored(engine: Engine, trajectory_id: str | None) -> Trajectory:
    assert trajectory_id is not None
    trajectory = engine.store.get(trajectory_id)
    assert trajectory is not None
    return trajectory


# point 4: params and data flow


class Users:
    """A tiny service whose ids change from one run to the next."""

    def __init__(self, first_id: int = 1) -> None:
        self.next_id = first_id
        self.welcomed: list[tuple[int, str]] = []


def user_engine(users: Users) -> Engine:
    engine = Engine()

    @engine.tool(name="create_user")
    def create_user(name: str) -> int:
        users.next_id += 1
        return users.next_id

    @engine.tool(name="send_welcome")
    def send_welcome(user_id: int, text: str) -> str:
        users.welcomed.append((user_id, text))
        return f"sent to {user_id}"

    def agent(task: str) -> int:
        name = task.split()[-1]
        user_id = create_user(name)
        send_welcome(user_id, f"welcome, {name}!")
        return user_id

    engine.set_agent(agent)
    return engine


def test_an_id_returned_by_one_tool_flows_into_the_next_on_replay() -> None:
    users = Users(first_id=1)
    engine = user_engine(users)
    first = engine("sign up Ada", params={"name": "Ada"})
    assert first.output == 2 and users.welcomed == [(2, "welcome, Ada!")]
    steps = stored(engine, first.trajectory_id).steps
    assert steps[0].args == (Param("name"),)
    assert steps[1].args[0] == Output(0)  # an id of any size is data flow
    assert isinstance(steps[1].args[1], Template)

    users.next_id = 500
    second = engine("sign up Bob", params={"name": "Bob"})
    assert second.hit, second.reason
    assert users.welcomed[-1] == (501, "welcome, Bob!")  # the fresh id, not the recorded 2
    assert second.output == 501  # point 8: the answer is the fresh id too


@dataclass
class Account:
    account_id: str
    owner: str


def test_values_inside_dict_attribute_and_list_outputs_are_references() -> None:
    engine = Engine()
    counter = {"n": 0}
    received: list[tuple[Any, ...]] = []

    @engine.tool(name="make")
    def make(owner: str) -> dict[str, Any]:
        counter["n"] += 1
        n = counter["n"]
        return {
            "order": {"id": f"ord-{n:04d}"},
            "account": Account(f"acc-{n:04d}", owner),
            "items": [f"sku-{n:04d}", f"sku-{n + 100:04d}"],
        }

    @engine.tool(name="use")
    def use(order_id: str, account_id: str, sku: str, note: str) -> None:
        received.append((order_id, account_id, sku, note))

    def agent() -> str:
        made = make("ada")
        use(made["order"]["id"], made["account"].account_id, made["items"][1], "gift")
        return str(made["account"].account_id)

    engine.set_agent(agent)
    first = engine()
    args = stored(engine, first.trajectory_id).steps[1].args
    assert args[0] == Output(0, (("key", "order"), ("key", "id")))
    assert args[1] == Output(0, (("key", "account"), ("attr", "account_id")))
    chosen = Pick(1, element_identity("sku-0101", ()))  # a text from a list: known by its value
    assert args[2] == Output(0, (("key", "items"), ("item", 1)), picks=(chosen,))
    assert args[3] == Const("gift")

    second = engine()  # the list holds other skus now: the choice cannot be confirmed
    assert not second.hit and second.steps_replayed == 1
    assert received == [
        ("ord-0001", "acc-0001", "sku-0101", "gift"),
        ("ord-0003", "acc-0003", "sku-0103", "gift"),  # the agent resumed and made its own order
    ]
    assert second.output == "acc-0003"


def test_booleans_none_and_values_the_task_states_are_constants_of_the_agent_too() -> None:
    """Booleans and None are constants; a value an output returned that the task text also states
    is bound to both, so the replay goes on only while the output still agrees with the task."""
    engine = Engine()
    calls: list[tuple[Any, ...]] = []
    outputs = {"count": 1}

    @engine.tool(name="count")
    def count() -> int:
        return outputs["count"]

    @engine.tool(name="flags")
    def flags() -> dict[str, Any]:
        return {"ok": True, "missing": None, "ratio": 0.5, "code": "ab", "id": 7, "size": 3}

    @engine.tool(name="act")
    def act(retries: int, enabled: bool, default: Any, ratio: float, code: str, size: int, n: int) -> None:
        calls.append((retries, enabled, default, ratio, code, size, n))

    def agent(task: str) -> None:
        count()
        flags()
        act(1, True, None, 0.5, "ab", 3, 7)

    engine.set_agent(agent)
    task = "act 1 time at ratio 0.5 with code ab, size 3 and n 7"
    first = engine(task)
    args = stored(engine, first.trajectory_id).steps[2].args
    assert args[1:3] == (Const(True), Const(None))
    assert all(
        isinstance(a, Agree) and Const(v) in a.options
        for a, v in zip(args[:1] + args[3:], (1, 0.5, "ab", 3, 7), strict=True)
    )
    assert engine(task).hit
    outputs["count"] = 2
    changed = engine(task)
    assert not changed.hit and changed.steps_replayed == 2 and "disagree" in str(changed.reason)
    assert calls[-1] == (1, True, None, 0.5, "ab", 3, 7)  # the agent passed its constants


def test_a_constant_equal_to_a_fresh_id_replays_only_while_they_agree() -> None:
    engine = Engine()
    ids = {"next": 5}
    got: list[tuple[int, int]] = []

    @engine.tool(name="open_ticket")
    def open_ticket() -> dict[str, int]:
        ids["next"] += 1
        return {"ticketId": ids["next"], "priority": 6}

    @engine.tool(name="close")
    def close(ticket_id: int, level: int) -> None:
        got.append((ticket_id, level))

    def agent() -> None:
        ticket = open_ticket()
        close(ticket["ticketId"], 6)  # 6 is the ticket id and the priority alike

    engine.set_agent(agent)
    first = engine()
    both = Agree((Output(0, (("key", "ticketId"),)), Output(0, (("key", "priority"),))))
    assert stored(engine, first.trajectory_id).steps[1].args == (both, both)
    second = engine()
    assert not second.hit and second.steps_replayed == 1
    assert "ticketId']: now a value new to the run, recorded equal to step 0's output['priority']" in str(
        second.reason
    )
    assert got == [(6, 6), (8, 6)]  # never (7, 7) nor (6, 6) for ticket 7: the agent resumed


def test_values_of_a_returned_tuple_are_data_flow() -> None:
    engine = Engine()
    seq = {"n": 0}
    got: list[Any] = []

    @engine.tool(name="new")
    def new() -> tuple[int, str]:
        seq["n"] += 1
        return 40000 + seq["n"], f"token-{seq['n']}"

    @engine.tool(name="use")
    def use(count: int, value: str) -> None:
        got.append((count, value))

    def agent() -> None:
        number, token = new()
        use(number, token)

    engine.set_agent(agent)
    engine()
    assert engine().hit
    assert got == [(40001, "token-1"), (40002, "token-2")]


def test_structured_values_are_data_flow_unless_they_hold_only_booleans_and_none() -> None:
    engine = Engine()
    seq = {"n": 0}
    got: list[Any] = []

    @engine.tool(name="find")
    def find() -> dict[str, Any]:
        seq["n"] += 1
        return {
            "customer": {"id": f"cus_{seq['n']:04d}", "plan": "pro"},
            "flags": {"ok": True},
            "page_ids": [1, 2],
        }

    @engine.tool(name="bill")
    def bill(
        customer: dict[str, str], options: dict[str, bool], levels: list[int], page_ids: list[int]
    ) -> None:
        got.append((customer, options, levels, page_ids))

    def agent() -> None:
        found = find()
        bill(found["customer"], {"ok": True}, [1, 2], [1, 2])

    engine.set_agent(agent)
    first = engine()
    args = stored(engine, first.trajectory_id).steps[1].args
    assert args[0] == Output(0, (("key", "customer"),))
    assert args[1] == Const({"ok": True})  # booleans only: a constant
    assert args[2] == args[3] == Output(0, (("key", "page_ids"),))
    assert engine().hit
    assert got[-1] == ({"id": "cus_0002", "plan": "pro"}, {"ok": True}, [1, 2], [1, 2])


def test_a_param_echoed_by_an_output_is_bound_to_both() -> None:
    engine = Engine()
    got: list[str] = []

    @engine.tool(name="lookup")
    def lookup(email: str) -> str:
        return email  # echoes the param

    @engine.tool(name="send")
    def send(to: str) -> None:
        got.append(to)

    def agent(task: str) -> None:
        send(lookup(task.split()[-1]))

    engine.set_agent(agent)
    first = engine("mail ada@x.io", params={"email": "ada@x.io"})
    assert stored(engine, first.trajectory_id).steps[1].args == (Agree((Param("email"), Output(0))),)
    assert engine("mail bob@x.io", params={"email": "bob@x.io"}).hit
    assert got == ["ada@x.io", "bob@x.io"]


def test_params_inside_list_and_dict_arguments() -> None:
    engine = Engine()
    got: list[Any] = []

    @engine.tool(name="fill")
    def fill(fields: dict[str, Any], recipients: list[str]) -> None:
        got.append((fields, recipients))

    def agent(task: str, name: str, email: str) -> None:
        fill({"name": name, "country": "FR"}, [email, "audit@corp.io"])

    engine.set_agent(agent)
    engine("register", "Ada", "ada@x.io", params={"name": "Ada", "email": "ada@x.io"})
    assert engine("register", "Bob", "bob@x.io", params={"name": "Bob", "email": "bob@x.io"}).hit
    assert got[-1] == ({"name": "Bob", "country": "FR"}, ["bob@x.io", "audit@corp.io"])


def test_two_params_with_equal_values_never_bind_to_the_wrong_one() -> None:
    """Two params equal at recording (a requester who assigns the ticket to herself) never make a replay pass
    one param's value for the other: the assignee gets the assignee's address."""
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


def test_a_value_equal_to_two_params_is_bound_to_both() -> None:
    """When two params have one value at recording, the argument is bound to both: it replays while they agree,
    and a run where they differ is another task."""
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


def test_a_param_inside_a_dataclass_argument_is_replayed_fresh() -> None:
    """A param inside a dataclass argument (a typed tool input) is a reference like one inside a list or dict:
    the invoice for Jane is sent to Jane."""
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


def test_an_output_inside_a_dataclass_argument_is_replayed_fresh() -> None:
    """An id an earlier tool returned, passed inside a dataclass argument, is a reference: the replay gives the
    role to the user it just created."""
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


# what was recorded is what was passed at the time


def test_a_snapshot_of_live_state_is_taken_at_capture_time() -> None:
    """A capture returning a live dict that the tool then changes: the snapshot is the state before."""
    engine = Engine()
    form: dict[str, str | None] = {"name": None}

    @engine.tool(name="type_name", pre_check=Check.equal(lambda text: form))
    def type_name(text: str) -> None:
        form["name"] = text

    engine.set_agent(lambda task: type_name(task))
    first = engine("Ada", params={"name": "Ada"})
    step = stored(engine, first.trajectory_id).steps[0]
    assert step.pre is not None and step.pre.key == codec.fingerprint({"name": None})
    form["name"] = None
    assert engine("Bob", params={"name": "Bob"}).hit and form == {"name": "Bob"}


def test_an_argument_changed_after_the_call_is_recorded_as_it_was_passed() -> None:
    engine = Engine()
    sent: list[list[str]] = []

    @engine.tool(name="send")
    def send(messages: list[str]) -> None:
        sent.append(list(messages))

    @engine.tool(name="normalize")
    def normalize(rows: list[str]) -> int:
        rows[:] = [r.strip() for r in rows]  # the tool changes its own argument
        return len(rows)

    def agent() -> None:
        messages = ["hello there"]
        send(messages)
        messages.append("second message")
        send(messages)
        normalize(["  a  ", " b"])

    engine.set_agent(agent)
    first = engine()
    steps = stored(engine, first.trajectory_id).steps
    assert steps[0].args[0].value == ["hello there"]
    assert steps[2].args[0].value == ["  a  ", " b"]
    sent.clear()
    assert engine().hit
    assert sent == [["hello there"], ["hello there", "second message"]]


def test_an_output_the_agent_reorders_keeps_its_references_right() -> None:
    engine = Engine()
    opened: list[str] = []
    pages = {"results": ["https://b.example/2", "https://a.example/1"]}

    @engine.tool(name="search")
    def search(query: str) -> list[str]:
        return list(pages["results"])

    @engine.tool(name="open_page")
    def open_page(url: str) -> None:
        opened.append(url)

    def agent(query: str) -> None:
        results = search(query)
        results.sort()  # in place, after the call
        open_page(results[0])

    engine.set_agent(agent)
    first = engine("docs")
    assert opened == ["https://a.example/1"]
    chosen = Pick(0, element_identity("https://a.example/1", ()))
    assert stored(engine, first.trajectory_id).steps[1].args[0] == Output(0, (("item", 1),), picks=(chosen,))
    assert engine("docs").hit
    assert opened == ["https://a.example/1", "https://a.example/1"]
    pages["results"].reverse()  # the same page, elsewhere in the list: the position no longer holds it
    moved = engine("docs")
    assert not moved.hit and moved.steps_replayed == 1 and opened[-1] == "https://a.example/1"


async def test_an_async_capture_that_raises_does_not_reach_the_agent() -> None:
    engine = Engine()

    async def capture() -> str:
        raise ConnectionError("screen unavailable")

    @engine.tool(name="fetch", pre_check=Check.equal(capture))
    async def fetch() -> str:
        return "page"

    async def agent() -> str:
        return await fetch()

    engine.set_agent(agent)
    result = await engine.arun()
    assert result.output == "page" and not result.stored


def test_a_list_nested_in_an_output_stays_a_reference_when_the_agent_changes_it() -> None:
    """A list two levels inside an output, passed on and then changed by the agent, is recorded as the
    reference it was when passed: the replay notifies the team get_org returns now."""
    engine = Engine()
    orgs = iter(
        [{"team": {"members": ["usr_a1b2", "usr_c3d4"]}}, {"team": {"members": ["usr_e5f6", "usr_g7h8"]}}]
    )
    notified: list[list[str]] = []

    @engine.tool()
    def get_org() -> dict[str, Any]:
        return next(orgs)

    @engine.tool()
    def notify(user_ids: list[str]) -> None:
        notified.append(list(user_ids))

    def agent(task: str) -> str:
        members = get_org()["team"]["members"]
        notify(members)
        members.append("usr_new1")  # the agent goes on working with the list it was given
        return "done"

    engine.set_agent(agent)
    engine("notify the team")
    engine("notify the team")
    assert notified[-1] == ["usr_e5f6", "usr_g7h8"], (
        f"the replay notified {notified[-1]}, not the team of now"
    )


# point 5: only successes are cached


def test_an_agent_that_raises_stores_nothing_and_the_exception_propagates_unchanged() -> None:
    engine = Engine()
    boom = RuntimeError("the LLM quota is exhausted")

    @engine.tool(name="step")
    def step() -> None:
        pass

    def agent() -> None:
        step()
        raise boom

    engine.set_agent(agent)
    with pytest.raises(RuntimeError) as info:
        engine()
    assert info.value is boom
    assert len(engine.store) == 0
    assert engine.metrics.misses == 1 and engine.metrics.stored == 0
    assert current_run() is None


def test_a_full_hit_stores_no_duplicate_and_updates_the_use_statistics() -> None:
    engine = Engine()

    @engine.tool(name="step")
    def step() -> int:
        return 1

    engine.set_agent(lambda: step())
    first = engine()
    tid = first.trajectory_id
    assert tid is not None
    usage = engine.store.usage(tid)
    assert usage is not None and usage.hits == 0
    for expected in (1, 2, 3):
        hit = engine()
        assert hit and hit.trajectory_id == tid
        assert len(engine.store) == 1
        engine.flush()  # hits are written behind
        usage = engine.store.usage(tid)
        assert usage is not None and usage.hits == expected and usage.last_used > 0


# point 7: concurrency


def test_threads_each_record_only_their_own_calls() -> None:
    engine = Engine()
    barrier = threading.Barrier(4)

    @engine.tool(name="note")
    def note(who: str, i: int) -> str:
        if i == 0 and not engine.metrics.stored:
            barrier.wait(timeout=10)  # all four runs are inside the agent at once
        return f"{who}{i}"

    def agent(task: str, who: str) -> str:
        for i in range(20):
            note(who, i)
        return who

    engine.set_agent(agent)
    results: dict[str, Any] = {}

    def work(who: str) -> None:
        results[who] = engine("note for", who)

    threads = [threading.Thread(target=work, args=(who,)) for who in ("a", "b", "c", "d")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(engine.store) == 4
    for who, result in results.items():
        steps = stored(engine, result.trajectory_id).steps
        assert [s.args[0].value for s in steps] == [who] * 20
        assert [s.args[1].value for s in steps] == list(range(20))
    assert all(engine("note for", who).hit for who in "abcd")


async def test_asyncio_tasks_each_record_only_their_own_calls() -> None:
    engine = Engine()

    @engine.tool(name="fetch")
    async def fetch(who: str, i: int) -> str:
        await asyncio.sleep(0)  # let the other tasks run between calls
        return f"{who}{i}"

    @engine.tool(name="tally")
    def tally(who: str) -> str:
        return who

    async def agent(task: str, who: str) -> str:
        for i in range(10):
            await fetch(who, i)
            tally(who)
        return who

    engine.set_agent(agent)
    results = await asyncio.gather(*(engine.arun("fetch for", who) for who in ("a", "b", "c")))
    for who, result in zip("abc", results, strict=True):
        assert result.output == who
        steps = stored(engine, result.trajectory_id).steps
        assert [s.tool for s in steps] == ["fetch", "tally"] * 10
        assert {a.value for s in steps for a in all_args(s.args[0]) if isinstance(a, Const)} == {who}
    hits = await asyncio.gather(*(engine.arun("fetch for", who) for who in "abc"))
    assert all(hits) and [h.output for h in hits] == ["a", "b", "c"]


def test_threads_replaying_and_recording_one_task_at_once() -> None:
    """Eight threads share one task; each run's answer matches its own environment state."""
    engine = Engine()
    local = threading.local()
    problems: list[str] = []

    @engine.tool(name="step", pre_check=Check.equal(lambda i: local.state))
    def step(i: int) -> str:
        return f"{local.state}:{i}"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        for i in range(len(run.steps), 3):
            step(i)
        return f"done {local.state}"

    engine.set_agent(agent)

    def work(seed: int) -> None:
        try:
            for n in range(60):
                local.state = (seed * 7 + n) % 12
                result = engine("same task")
                if result.output != f"done {local.state}":
                    problems.append(f"{result!r} in state {local.state}")
        except Exception as exc:
            problems.append(repr(exc))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert problems == []
    assert engine.metrics.hits + engine.metrics.misses == 480
    # threads that miss one new state at once each store their run: at most one per thread and state
    assert 12 <= len(engine.store) <= 12 * 8


def test_a_tool_called_outside_any_run_just_runs() -> None:
    engine = Engine()
    calls: list[int] = []

    @engine.tool(name="work")
    def work(n: int) -> int:
        calls.append(n)
        return n * 2

    engine.set_agent(lambda: work(1))
    assert work(5) == 10
    assert calls == [5] and len(engine.store) == 0
    result = engine()
    assert stored(engine, result.trajectory_id).steps[0].args == (Const(1),)


def test_a_tool_of_another_engine_is_not_recorded() -> None:
    outer, inner = Engine(), Engine()

    @inner.tool(name="helper")
    def helper() -> int:
        return 1

    @outer.tool(name="main")
    def main() -> int:
        return helper() + 1

    outer.set_agent(lambda: (helper(), main()))
    inner.set_agent(lambda: helper())
    result = outer()
    assert [s.tool for s in stored(outer, result.trajectory_id).steps] == ["main"]


def test_a_tool_called_by_another_tool_is_recorded_once() -> None:
    engine = Engine()
    inner_calls: list[int] = []

    @engine.tool(name="inner")
    def inner(n: int) -> int:
        inner_calls.append(n)
        return n

    @engine.tool(name="outer")
    def outer(n: int) -> int:
        return inner(n) + 1

    engine.set_agent(lambda: outer(3))
    result = engine()
    assert [s.tool for s in stored(engine, result.trajectory_id).steps] == ["outer"]
    assert engine().hit and inner_calls == [3, 3]  # the replay of outer calls inner itself


# point 9: quiet, unserializable values, secrets


class Connection:
    """Not serializable: a live resource."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


def test_an_unserializable_argument_is_logged_naming_tool_and_argument(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="muscle_mem")
    engine = Engine()
    conn = Connection()
    broken = {"on": True}

    @engine.tool(name="query")
    def query(connection: Any, sql: str) -> list[int]:
        return [1, 2]

    def agent(sql: str) -> list[int]:
        return query(conn if broken["on"] else "conn-default", sql)

    engine.set_agent(agent)
    result = engine("select 1")
    assert result.output == [1, 2]  # the run still returns the agent's answer
    assert not result.stored and result.trajectory_id is None
    assert len(engine.store) == 0
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    message = errors[0].getMessage()
    assert "'query'" in message and "'connection'" in message
    assert errors[0].name.startswith("muscle_mem")
    assert capsys.readouterr() == ("", "")

    broken["on"] = False  # later runs are fine
    assert not engine("select 1") and len(engine.store) == 1
    assert engine("select 1").hit


def test_a_snapshot_the_codec_cannot_encode_is_kept_as_itself_by_a_memory_store() -> None:
    """The compare gets the captured objects themselves, and the run replays."""
    engine, compared = Engine(), []

    def same(current: Connection, candidate: Connection) -> bool:
        compared.append((current, candidate))
        return isinstance(candidate, Connection)

    @engine.tool(name="click", pre_check=Check(lambda: Connection(), same))
    def click() -> None:
        pass

    engine.set_agent(lambda: click() or "done")
    assert engine().stored and len(engine.store) == 1
    assert engine().hit and len(compared) == 1


def test_a_durable_store_refuses_a_snapshot_it_cannot_keep_and_says_how(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="muscle_mem")
    engine = Engine(f"sqlite:///{tmp_path / 'cache.db'}")

    @engine.tool(name="click", pre_check=Check(lambda: Connection(), lambda a, b: True))
    def click() -> None:
        pass

    engine.set_agent(lambda: click() or "done")
    result = engine()
    assert result.output == "done" and not result.stored and len(engine.store) == 0
    assert result.not_stored_reason is NotStoredReason.UNSTORABLE_VALUE
    assert (
        result.not_stored is not None and "Connection" in result.not_stored and "encode=" in result.not_stored
    )
    assert "cannot keep" in caplog.records[-1].getMessage()


SECRET = "hunter2-Sup3r"


def login_engine(store: str | None = None) -> tuple[Engine, list[tuple[str, str]]]:
    engine = Engine(store)
    logins: list[tuple[str, str]] = []

    @engine.tool(name="login")
    def login(user: str, password: str) -> str:
        logins.append((user, password))
        return f"session-for-{user}"

    @engine.tool(name="header")
    def header(value: str) -> str:
        return value

    def agent(task: str, user: str) -> str:
        run = current_run()
        assert run is not None
        password = run.params["password"].get()
        session = login(user, password)
        header(f"Basic {password}")
        return session

    engine.set_agent(agent)
    return engine, logins


def test_secret_params_never_reach_the_store_or_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    engine, logins = login_engine()
    params = {"user": "ada", "password": Secret(SECRET)}
    first = engine("log in", "ada", params=params)
    assert first.stored, "a secret passed as a param is stored as a reference by name"
    record = to_record(stored(engine, first.trajectory_id))
    text = json.dumps(record)
    assert SECRET not in text
    assert {"param": "password"} in record["steps"][0]["args"]

    hit = engine("log in", "ada", params={"user": "ada", "password": Secret("other-Pa55")})
    assert hit.hit
    assert logins == [("ada", SECRET), ("ada", "other-Pa55")]  # the replay used the live secret
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert SECRET not in logged and "other-Pa55" not in logged


def test_secret_params_never_reach_a_sqlite_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "cache.db"
    engine, _ = login_engine(f"sqlite:///{path}")
    assert engine("log in", "ada", params={"user": "ada", "password": Secret(SECRET)}).stored
    engine.close()
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                assert SECRET not in repr(row)
    for file in tmp_path.iterdir():
        assert SECRET.encode() not in file.read_bytes()
    assert SECRET not in "\n".join(r.getMessage() for r in caplog.records)


def test_a_secret_captured_by_a_check_is_not_stored(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    engine = Engine()

    @engine.tool(name="login", pre_check=Check.equal(lambda password: password))
    def login(password: str) -> bool:
        return True

    def agent(task: str) -> bool:
        run = current_run()
        assert run is not None
        return login(run.params["password"].get())

    engine.set_agent(agent)
    result = engine("log in", params={"password": Secret(SECRET)})
    assert result.output is True and not result.stored
    assert len(engine.store) == 0
    assert any("secret" in r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)
    assert SECRET not in "\n".join(r.getMessage() for r in caplog.records)


def test_current_run_shows_secrets_masked() -> None:
    engine, _ = login_engine()
    seen: list[str] = []

    def agent(task: str, user: str) -> str:
        run = current_run()
        assert run is not None
        seen.append(repr(run.params))
        return "ok"

    engine.set_agent(agent)
    engine("log in", "ada", params={"user": "ada", "password": Secret(SECRET)})
    assert SECRET not in seen[0] and "ada" in seen[0]
