"""Replay: fallback that resumes (point 3), tool versions (6), the answer (8), async runs."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from muscle_mem import Check, Engine, current_run
from muscle_mem.model import codec
from muscle_mem.model.provenance import Output
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.record._run import Run
from muscle_mem.stores import MemoryStore


def stored(engine: Engine, trajectory_id: str | None) -> Trajectory:
    assert trajectory_id is not None
    trajectory = engine.store.get(trajectory_id)
    assert trajectory is not None
    return trajectory


@dataclass
class Form:
    """A web form the agent fills field by field; ``layout`` stands for what the page looks like."""

    layout: dict[str, str] = field(default_factory=lambda: {"name": "v1", "email": "v1", "submit": "v1"})
    values: dict[str, str] = field(default_factory=dict)
    submitted: int = 0
    fail_submit: bool = False
    log: list[str] = field(default_factory=list)


FIELDS = ("name", "email")


def form_engine(form: Form) -> tuple[Engine, list[dict[str, Any]]]:
    engine = Engine()
    seen: list[dict[str, Any]] = []

    @engine.tool(name="type_into", pre_check=Check.equal(lambda field, text: form.layout[field]))
    def type_into(field: str, text: str) -> None:
        form.log.append(f"type {field}")
        form.values[field] = text

    @engine.tool(
        name="submit",
        pre_check=Check.equal(lambda: form.layout["submit"]),
        post_check=Check.equal(lambda: form.submitted > 0),
    )
    def submit() -> str:
        form.log.append("submit")
        if form.fail_submit:
            raise ConnectionError("server down")
        form.submitted += 1
        return "ok"

    def agent(task: str, **kwargs: Any) -> str:
        run = current_run()
        assert run is not None
        seen.append(
            {
                "task": run.task,
                "tags": run.tags,
                "params": dict(run.params),
                "steps": [(s.tool, s.args, s.replayed) for s in run.steps],
            }
        )
        done = {s.args[0] for s in run.steps if s.tool == "type_into"}
        for name in FIELDS:
            if name not in done:
                type_into(name, kwargs[name])
        submit()
        return f"submitted for {kwargs['name']}"

    engine.set_agent(agent)
    return engine, seen


def fill(engine: Engine, name: str, email: str) -> Any:
    return engine(
        "fill the form", name=name, email=email, tags=["forms"], params={"name": name, "email": email}
    )


def test_a_pre_check_failing_mid_trajectory_resumes_with_the_agent() -> None:
    form = Form()
    engine, seen = form_engine(form)
    assert not fill(engine, "Ada", "ada@x.io")
    assert fill(engine, "Bob", "bob@x.io").hit
    form.log.clear()
    form.layout["email"] = "v2"  # the email field changed: step 1 is no longer safe
    result = fill(engine, "Cy", "cy@x.io")
    assert not result and result.fallback
    assert result.steps_replayed == 1
    assert result.reason == "pre-check of tool 'type_into' failed at step 1"
    assert form.log == ["type name", "type email", "submit"]  # the name was not typed twice
    assert form.values == {"name": "Cy", "email": "cy@x.io"}

    # current_run() inside the agent showed the run, replayed steps included
    view = seen[-1]
    assert view["task"] == "fill the form, name={name}, email={email}"
    assert view["tags"] == ("forms",)
    assert view["params"] == {"name": "Cy", "email": "cy@x.io"}
    assert view["steps"] == [("type_into", ("name", "Cy"), True)]

    # the new trajectory is the replayed prefix followed by the agent's steps
    new = stored(engine, result.trajectory_id)
    assert [s.tool for s in new.steps] == ["type_into", "type_into", "submit"]
    assert new.steps[1].pre is not None and new.steps[1].pre.key == codec.fingerprint("v2")
    assert len(engine.store) == 2
    form.log.clear()
    assert fill(engine, "Di", "di@x.io").hit  # the new layout is now known
    assert form.log == ["type name", "type email", "submit"]


def test_a_post_check_failure_hands_over_after_the_step() -> None:
    form = Form()
    engine, seen = form_engine(form)
    fill(engine, "Ada", "ada@x.io")
    form.submitted = -5  # the submission does not register: the post-check sees False
    result = fill(engine, "Bob", "bob@x.io")
    assert not result
    assert result.steps_replayed == 3
    assert result.reason == "post-check of tool 'submit' failed at step 2"
    assert [s[0] for s in seen[-1]["steps"]] == ["type_into", "type_into", "submit"]
    assert all(s[2] for s in seen[-1]["steps"])  # all three were replayed and stay done
    new = stored(engine, result.trajectory_id)
    assert [s.tool for s in new.steps] == ["type_into", "type_into", "submit", "submit"]


def test_a_replayed_tool_that_raises_hands_over_and_earlier_steps_stay_done() -> None:
    form = Form()
    engine, seen = form_engine(form)
    fill(engine, "Ada", "ada@x.io")
    form.fail_submit = True
    form.log.clear()
    with pytest.raises(ConnectionError):
        fill(engine, "Bob", "bob@x.io")  # the agent's submit gets the replayed one's error: nothing stored
    assert form.log == ["type name", "type email", "submit"]  # submitted once, as by the agent alone
    assert [s[0] for s in seen[-1]["steps"]] == ["type_into", "type_into"]
    assert len(engine.store) == 1


def test_a_replayed_tool_raising_reports_why() -> None:
    engine = Engine()
    state = {"fail": False}
    order: list[str] = []

    @engine.tool(name="prepare")
    def prepare() -> str:
        order.append("prepare")
        return "ready"

    @engine.tool(name="send")
    def send() -> str:
        order.append("send")
        if state["fail"]:
            state["fail"] = False  # fails once
            raise TimeoutError("slow network")
        return "sent"

    views: list[list[tuple[str, bool]]] = []

    def agent() -> str:
        run = current_run()
        assert run is not None
        views.append([(s.tool, s.replayed) for s in run.steps])
        if not run.steps:
            prepare()
        try:
            return send()
        except TimeoutError:
            return send()  # the agent retries a slow network once

    engine.set_agent(agent)
    engine()
    state["fail"] = True
    order.clear()
    result = engine()
    assert not result
    assert result.reason == "replayed tool 'send' raised TimeoutError('slow network') at step 1"
    assert result.steps_replayed == 1
    assert views[-1] == [("prepare", True)]
    assert order == ["prepare", "send", "send"]  # prepare stayed done; the agent got the timeout and retried
    assert result.output == "sent"
    new = stored(engine, result.trajectory_id)
    assert [s.tool for s in new.steps] == ["prepare", "send"]


def test_current_run_inside_the_agent_on_a_first_run() -> None:
    engine = Engine()
    views: list[Run | None] = []

    @engine.tool(name="step")
    def step(x: int) -> int:
        return x

    def agent(task: str) -> None:
        run = current_run()
        views.append(run)
        step(2000)
        assert run is not None and [(s.tool, s.args, s.output, s.replayed) for s in run.steps] == [
            ("step", (2000,), 2000, False)
        ]

    engine.set_agent(agent)
    engine("do it for Ada", tags=["t"], params={"who": "Ada"})
    run = views[0]
    assert run is not None
    assert run.task == "do it for {who}" and run.tags == ("t",) and run.params == {"who": "Ada"}
    assert current_run() is None


def test_an_output_of_a_replayed_step_flows_into_the_agents_steps() -> None:
    engine = Engine()
    seq = {"n": 0}
    mode = {"v": "a"}
    used: list[str] = []

    @engine.tool(name="create")
    def create() -> str:
        seq["n"] += 1
        return f"obj-{seq['n']:03d}"

    @engine.tool(name="use", pre_check=Check.equal(lambda obj_id: mode["v"]))
    def use(obj_id: str) -> None:
        used.append(obj_id)

    def agent() -> None:
        run = current_run()
        assert run is not None
        obj_id = run.steps[0].output if run.steps else create()
        use(obj_id)

    engine.set_agent(agent)
    engine()
    mode["v"] = "b"  # use() is not safe: create() is replayed, the agent uses its fresh output
    partial = engine()
    assert not partial and partial.steps_replayed == 1
    assert used == ["obj-001", "obj-002"]
    new = stored(engine, partial.trajectory_id)
    assert new.steps[1].args == (Output(0),)
    assert engine().hit and used[-1] == "obj-003"


def test_a_reference_that_cannot_be_resolved_hands_over() -> None:
    engine = Engine()
    shape = {"ok": True}
    used: list[str] = []

    @engine.tool(name="lookup")
    def lookup() -> dict[str, str] | None:
        return {"user_id": "usr-0001"} if shape["ok"] else None

    @engine.tool(name="greet")
    def greet(user_id: str) -> None:
        used.append(user_id)

    def agent() -> str:
        found = lookup()
        if found is None:
            return "nobody"
        greet(found["user_id"])
        return "greeted"

    engine.set_agent(agent)
    engine()
    shape["ok"] = False
    result = engine()
    assert not result and result.steps_replayed == 1
    assert result.reason == "step 0 lookup output: None, in no recorded run"
    assert used == ["usr-0001"] and result.output == "nobody"
    assert result.output == "nobody"


def test_an_unstorable_answer_is_logged_and_returned(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="muscle_mem")
    engine = Engine()

    @engine.tool(name="connect")
    def connect() -> str:
        return "dsn"

    lock = threading.Lock()
    engine.set_agent(lambda: (connect(), lock)[1])
    result = engine()
    assert result.output is lock and not result.stored and len(engine.store) == 0
    assert "return value" in caplog.text


def test_a_stored_argument_that_no_longer_decodes_is_never_passed_to_the_tool(tmp_path: Any) -> None:
    """A stored argument whose class no longer fits its data (a dataclass gained a field) makes the step
    unsafe: the tool never receives a ``codec.Opaque`` placeholder."""
    import sys
    import types

    from muscle_mem.model import codec

    module = types.ModuleType("released_jobs_mod")
    sys.modules["released_jobs_mod"] = module
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
        del sys.modules["released_jobs_mod"]


def test_a_stored_tuple_argument_is_copied_for_each_replay() -> None:
    """A stored tuple argument holding a list is copied for each replay: a tool that changes the list it got
    never changes what later replays pass."""
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


# point 6: tool versions


def test_a_changed_tool_version_is_never_replayed() -> None:
    store = MemoryStore()
    before = Engine(store)

    @before.tool(name="greet", version="1")
    def greet_v1(who: str) -> str:
        return f"hi {who}"

    before.set_agent(lambda who: greet_v1(who))
    assert not before("ada") and before("ada").hit

    after = Engine(store)

    @after.tool(name="greet", version="2")
    def greet_v2(who: str) -> str:
        return f"hello {who}"

    after.set_agent(lambda who: greet_v2(who))
    result = after("ada")
    assert not result
    assert result.reason is not None
    assert "'greet' changed since it was recorded" in result.reason and "1" in result.reason
    assert result.output == "hello ada"
    assert after("ada").hit  # the trajectory of version 2, just recorded, replays


def test_the_default_version_is_a_fingerprint_of_the_source() -> None:
    store = MemoryStore()
    first, second, third = Engine(store), Engine(store), Engine(store)

    def make_tool(engine: Engine, body: str) -> Any:
        namespace: dict[str, Any] = {}
        exec(f"def greet(who):\n    return {body}\n", namespace)
        return engine.tool(name="greet")(namespace["greet"])

    tool1 = make_tool(first, "'hi ' + who")
    first.set_agent(lambda: tool1("ada"))
    first()
    tool2 = make_tool(second, "'hi ' + who")  # the same source: replayed
    second.set_agent(lambda: tool2("ada"))
    assert second().hit
    tool3 = make_tool(third, "'hello ' + who")  # changed source: never replayed
    third.set_agent(lambda: tool3("ada"))
    changed = third()
    assert not changed and "changed since it was recorded" in (changed.reason or "")


def test_an_unregistered_tool_is_never_replayed() -> None:
    store = MemoryStore()
    first = Engine(store)

    @first.tool(name="old")
    def old() -> None:
        pass

    first.set_agent(lambda: old())
    first()
    second = Engine(store)

    @second.tool(name="new")
    def new() -> None:
        pass

    second.set_agent(lambda: old())
    result = second()
    assert not result and "'old' is not registered" in (result.reason or "")


# point 8: the answer


def test_the_answer_on_a_hit_is_the_recorded_one_with_references_resolved() -> None:
    engine = Engine()
    seq = {"n": 0}

    @dataclass
    class Booking:
        booking_id: str
        room: int

    @engine.tool(name="book")
    def book(guest: str) -> Booking:
        seq["n"] += 1
        return Booking(f"bk-{seq['n']:05d}", 12)

    def agent(task: str, guest: str) -> dict[str, Any]:
        booking = book(guest)
        return {"guest": guest, "booking": booking.booking_id, "status": "confirmed", "room": 12}

    engine.set_agent(agent)
    miss = engine("book", "Ada", params={"name": "Ada"})
    assert miss.output == {"guest": "Ada", "booking": "bk-00001", "status": "confirmed", "room": 12}
    hit = engine("book", "Bob", params={"name": "Bob"})
    assert hit.hit
    assert hit.output == {"guest": "Bob", "booking": "bk-00002", "status": "confirmed", "room": 12}


def test_an_answer_that_is_a_whole_output_is_the_fresh_output() -> None:
    engine = Engine()
    seq = {"n": 0}

    @engine.tool(name="roll")
    def roll() -> list[str]:
        seq["n"] += 1
        return [f"d-{seq['n']}", f"d-{2 * seq['n']}"]

    engine.set_agent(lambda: roll())
    assert engine().output == ["d-1", "d-2"]
    assert engine().output == ["d-2", "d-4"]  # identifiers passed on: the fresh ones


def test_a_mutable_constant_answer_is_not_shared_between_hits() -> None:
    engine = Engine()

    @engine.tool(name="noop")
    def noop() -> None:
        pass

    engine.set_agent(lambda: (noop(), {"items": ["a"]})[1])
    engine()
    first = engine().output
    first["items"].append("mutated")
    assert engine().output == {"items": ["a"]}


def test_a_stored_tuple_answer_is_copied_for_each_hit() -> None:
    """A hit's tuple answer holding a list is a fresh copy: a caller that changes it never changes what later
    hits return."""
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


# a stored trajectory ending where another goes on


@dataclass
class Billing:
    status: dict[str, str]
    invoices: list[str] = field(default_factory=list)


def test_a_shorter_trajectory_does_not_cut_a_later_run_short() -> None:
    """A run that stopped after step 0 (the account was suspended) must not turn every later run
    into a one-step hit: the next step is taken when its pre-check passes."""
    billing = Billing({"ada": "active", "eve": "suspended", "bob": "active"})
    engine = Engine()

    @engine.tool(name="find")
    def find(who: str) -> str:
        return who

    @engine.tool(name="invoice", pre_check=Check.equal(lambda who: billing.status[who]))
    def invoice(who: str) -> str:
        billing.invoices.append(who)
        return f"invoice for {who}"

    def agent(task: str, who: str) -> str | None:
        run = current_run()
        if not run or not run.steps:
            find(who)
        if billing.status[who] != "active":
            return None
        return invoice(who)

    engine.set_agent(agent)
    assert engine("invoice", "ada", params={"user": "ada"}).output == "invoice for ada"
    eve = engine("invoice", "eve", params={"user": "eve"})
    assert not eve and eve.steps_replayed == 1 and eve.output is None
    bob = engine("invoice", "bob", params={"user": "bob"})
    assert bob.hit and bob.steps_replayed == 2 and bob.output == "invoice for bob"
    assert billing.invoices == ["ada", "bob"]
    again = engine("invoice", "eve", params={"user": "eve"})
    assert again.hit and again.steps_replayed == 1 and again.output is None  # eve's own trajectory


# async


async def test_arun_with_an_async_agent_and_async_tools() -> None:
    engine = Engine()
    pages = {"/a": "alpha"}
    fetched: list[str] = []

    async def capture(url: str) -> str:
        await asyncio.sleep(0)
        return pages[url]

    @engine.tool(name="fetch", pre_check=Check.equal(capture))
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        fetched.append(url)
        return pages[url].upper()

    @engine.tool(name="summarize")
    def summarize(text: str) -> str:
        return text[:3]

    async def agent(task: str, url: str) -> str:
        run = current_run()
        assert run is not None and run.task == "read, {url}"
        body = await fetch(url)
        return summarize(body)

    engine.set_agent(agent)
    miss = await engine.arun("read", "/a", params={"url": "/a"})
    assert not miss and miss.output == "ALP"
    hit = await engine.arun("read", "/a", params={"url": "/a"})
    assert hit.hit and hit.output == "ALP" and hit.steps_replayed == 2
    assert fetched == ["/a", "/a"]
    pages["/a"] = "beta"
    changed = await engine.arun("read", "/a", params={"url": "/a"})
    assert not changed and changed.output == "BET"
    assert changed.reason == "pre-check of tool 'fetch' failed at step 0"
    assert current_run() is None


async def test_arun_with_a_sync_agent_and_an_agent_that_raises() -> None:
    engine = Engine()

    @engine.tool(name="add")
    def add(a: int, b: int) -> int:
        return a + b

    engine.set_agent(lambda a: add(a, 1000))
    assert (await engine.arun(1)).output == 1001
    assert (await engine.arun(1)).hit

    error = ValueError("no")

    async def failing(a: int) -> None:
        add(a, 1000)
        raise error

    engine.set_agent(failing)
    with pytest.raises(ValueError) as info:
        await engine.arun(2)
    assert info.value is error
    assert len(engine.store) == 1


def test_an_async_agent_called_without_arun_says_to_use_arun() -> None:
    engine = Engine()

    @engine.tool(name="noop")
    def noop() -> None:
        pass

    async def agent() -> None:
        noop()

    engine.set_agent(agent)
    with pytest.raises(TypeError, match="arun"):
        engine()
    assert len(engine.store) == 0
