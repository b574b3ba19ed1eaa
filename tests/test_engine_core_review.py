"""The engine core (numbers of params and outputs inside strings, generator tools, outputs changed
after their call, tools of one engine called inside another's run, the hit path's cost), found in a
last review: each test failed before its fix (the docstrings say what went wrong)."""

from __future__ import annotations

import dataclasses
import itertools
import tracemalloc
from collections.abc import Iterator
from typing import Any

from muscle_mem import Check, Engine
from muscle_mem.provenance import Const


def test_an_int_param_given_to_the_agent_is_never_replayed_stale_inside_a_tool_string() -> None:
    """keys.py ``task_key`` templates a param that *is* an agent argument out of the key
    (``engine(order_id=4471, params={"order_id": 4471})`` and the same for 5000 are one task), but
    dataflow.py ``_ArgBuilder.build`` only makes templates of str params (keys.split_template): an
    int param used inside a tool's string is stored as the constant "... order 4471 ...". The call
    for order 5000 is a full hit that sends the message about order 4471: a wrong argument on a full
    hit. (The earlier fix, tests/test_false_replays.py, covered an int param *outside* the agent's
    arguments only, which is keyed by value.) Suggested fix: template whole-number ints/floats of
    params inside strings (keys.whole_number, as for secret numbers), or refuse the run
    (Unreplayable) when a static string contains a non-str param's text."""
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


def test_a_str_param_the_agent_converts_to_an_int_is_never_replayed_stale() -> None:
    """Params usually arrive as strings (a form, a URL) while tools take ints: the agent calls
    ``refund(int(order))``. keys.py templates the str param out of the task text
    (``refund order {order}``), but dataflow.py ``params_equal_to`` requires the same type, so the
    tool's int 4471 is stored as a constant. ``engine("refund order 5000", params={"order": "5000"})``
    is then a full hit that refunds order 4471 a second time. Suggested fix: treat an int/float whose
    text equals a str param (and a str equal to an int param's text) as that param (a conversion), or
    refuse the run as unreplayable."""
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


def test_an_earlier_output_inside_a_string_argument_is_never_replayed_stale() -> None:
    """dataflow.py makes an output reference only for an argument *equal* to an earlier output (or a
    value inside it); an id returned by a tool and formatted into a string (a message body, a
    comment, the agent's answer) is stored as a constant, and ``_hidden_reference`` looks for outputs
    only inside structures, not inside strings. The next call creates ticket TCK-1043 and then emails
    the user about TCK-1042 (and the hit's answer says "created TCK-1042"): the replay repeats a
    stale id. README: a run is not stored when "an earlier output inside a value it cannot rebuild".
    Suggested fix: output templates (split strings on earlier string outputs of referable length, as
    params are), or refuse such a run as Unreplayable."""
    engine = Engine()
    numbers = itertools.count(1042)
    mails: list[str] = []

    @engine.tool()
    def create_ticket(title: str) -> str:
        return f"TCK-{next(numbers)}"

    @engine.tool()
    def email(to: str, body: str) -> None:
        mails.append(body)

    def agent(task: str) -> str:
        ticket = create_ticket("printer broken")
        email("it@corp.com", f"Your ticket {ticket} was created")
        return f"created {ticket}"

    engine.set_agent(agent)
    engine("open a ticket for the broken printer")
    second = engine("open a ticket for the broken printer")
    assert mails[-1] == "Your ticket TCK-1043 was created", (
        f"ticket TCK-1043 was created but the replay emailed {mails[-1]!r} (answer {second.output!r})"
    )


def test_a_generator_tool_replayed_runs_its_body() -> None:
    """tools.py ``Tool``/``instrument`` accept a generator function as a tool. At recording the agent
    iterates the generator (the body sends the mails); replay.py calls ``tool.fn(...)``, gets a fresh
    generator and drops it, so the body never runs. The next call is a full hit whose replayed step
    did nothing: no mail is sent, and the answer (2) says two were. Suggested fix: refuse generator
    and async-generator functions at registration (inspect.isgeneratorfunction /
    isasyncgenfunction), or exhaust the generator at replay as the recorded run did."""
    engine = Engine()
    sent: list[str] = []

    def send_all(addresses: list[str]) -> Iterator[str]:
        for address in addresses:
            sent.append(address)
            yield address

    try:
        tool = engine.register(send_all)
        engine.set_agent(lambda task: len(list(tool(["ada@corp.com", "bob@corp.com"]))))
        engine("send the newsletter")
    except (TypeError, ValueError):
        return  # refused: fine
    before = len(sent)
    second = engine("send the newsletter")
    assert len(sent) == before + 2, (
        f"hit={second.hit}, answer {second.output!r}, but {len(sent) - before} mails were sent by the replay"
    )


def test_a_list_two_levels_inside_an_output_is_copied_before_the_agent_changes_it() -> None:
    """recording.py ``kept`` copies an output's lists and dicts two levels deep ("the agent sorting a
    list or adding a key later must not move a reference"), but dataflow.py ``_Provenance`` keys
    values one level deeper (depth 2): a list at ``org["team"]["members"]`` is the agent's own object.
    The agent passes it to ``notify`` and then appends to it; when the run is stored, the list no
    longer matches the (frozen) argument, so the argument is stored as a constant and the next call
    notifies the members of the recording, not the ones get_org returns now. Suggested fix: copy
    what provenance visits (one more level), or visit only what ``kept`` copied."""
    engine = Engine()
    orgs = iter([{"team": {"members": ["usr_a1b2", "usr_c3d4"]}}, {"team": {"members": ["usr_e5f6"]}}])
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
    assert notified[-1] == ["usr_e5f6"], f"the replay notified {notified[-1]} instead of the team of now"


def test_a_tool_called_inside_another_engines_run_is_not_silently_left_out() -> None:
    """An agent hands a sub-task to a second engine (a sub-agent with its own memory), whose agent
    calls one of the first engine's tools. tools.py ``_recording`` sees the innermost run (the second
    engine's), whose owner is not the tool's, and runs the call unrecorded with no trace on the
    outer run (engine.py ``_note_sub_task`` only notices the *same* engine). The first engine stores
    its trajectory without ``charge`` and the next call is a full hit that ships without charging.
    Suggested fix: link a run to the run that was current when it started, and in ``_recording`` walk
    up to the tool's owner's recording run (mark it as not storable, or record the call)."""
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


def _engine_with_first_calls(extra: int) -> Engine:
    """One task whose trajectories start with ``extra + 1`` distinct calls (the agent clicked
    elsewhere each time); the one recorded by the engine is the latest success."""
    engine = Engine()
    state = {"page": "home"}

    @engine.tool(pre_check=Check.equal(lambda x: state["page"]))
    def click(x: int) -> None:
        pass

    engine.set_agent(lambda task: click(5))
    recorded = engine.store.get(engine("click the button").trajectory_id)  # type: ignore[arg-type]
    assert recorded is not None
    for i in range(extra):
        step = dataclasses.replace(recorded.steps[0], args=(Const(100_000 + i),))
        engine.store.add(
            dataclasses.replace(recorded, steps=(step,), id=f"other{i}", created_at=recorded.created_at - 1)
        )
    assert engine("click the button").hit  # reads the index; promotes the engine's trajectory
    return engine


def _peak_bytes_of_a_hit(engine: Engine) -> int:
    tracemalloc.start()
    try:
        assert engine("click the button").hit
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_hit_does_not_copy_every_possible_next_call() -> None:
    """README: "a hit costs the same with 10 or 100,000 stored trajectories". replay.py
    ``Replayer.replay`` starts each step with ``list(reversed(node.groups.values()))``: a copy of
    every distinct call stored at that point, although the loop stops after the newest group when
    its candidate passes. With 20,000 distinct first calls under one task, each hit allocates a
    160 KB list (and measured 330 µs instead of 45 µs per hit at 30,000). Suggested fix: walk the
    groups lazily, newest first (as ``index._newest_first`` walks edges)."""
    small = _peak_bytes_of_a_hit(_engine_with_first_calls(10))
    large = _peak_bytes_of_a_hit(_engine_with_first_calls(20_000))
    assert large < 4 * small + 20_000, (
        f"a hit allocated {large:,} bytes with 20,000 calls stored, {small:,} with 10"
    )


def test_a_plain_word_an_earlier_tool_returned_never_changes_a_later_string() -> None:
    """A status ``open`` a tool returned, met in ``open the door`` (a coincidence) and in ``reopen``
    (inside a word): with the same status, a replay sends the recorded text; once it changed, a miss,
    never ``closed the door``."""
    engine = Engine()
    status = {"value": "open"}
    sent: list[str] = []

    @engine.tool()
    def ticket_status(ticket: str) -> str:
        return status["value"]

    @engine.tool()
    def post(text: str) -> str:
        sent.append(text)
        return "posted"

    def agent(task: str) -> str:
        ticket_status("TCK-1042")
        post("please open the door and reopen the window")
        return "done"

    engine.set_agent(agent)
    assert engine("tidy the office").stored
    assert engine("tidy the office").hit
    status["value"] = "closed"
    assert not engine("tidy the office").hit
    assert sent == ["please open the door and reopen the window"] * 3
