"""Stored records: format 2 round-trips the provenance model; format 1 records load and replay."""

from __future__ import annotations

import copy
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from muscle_mem import Engine, MissReason
from muscle_mem.model._forms import Form
from muscle_mem.model._leaf_kinds import KINDS
from muscle_mem.model._observations import Observation
from muscle_mem.model.provenance import Agree, Const, Guarded, Output, Param, Pick, Struct, Template, Text
from muscle_mem.model.trajectory import (
    FORMAT_VERSION,
    RecordError,
    Step,
    Trajectory,
    from_record,
    observation_record,
    to_record,
)
from muscle_mem.stores import steps

FORMAT_1 = json.loads(
    """{"format": 1, "id": "35d72bf2600b44da913746eb7c50e2c9", "task_key": "task:5d0350ceecb863a404abe69eb9dba46d",
    "task": "open a ticket for, {email}", "tags": [],
    "steps": [{"tool": "create_ticket", "version": "81780e75028cde9a", "args": [{"param": "email"}], "kwargs": [],
               "pre": null, "post": null, "seconds": 4.0e-06},
              {"tool": "notify", "version": "c04820ef02e63cf2",
               "args": [{"output": 0, "path": [["key", "id"]]},
                        {"template": [["text", "Hi "], ["param", "email"], ["text", ", ticket "],
                                      ["output", "[0,[[\\"key\\",\\"id\\"]]]"], ["text", " is "],
                                      ["output", "[0,[[\\"key\\",\\"status\\"]],\\"open\\"]"]]},
                        {"struct": "dict", "items": [["to", {"param": "email"}], ["n", {"static": 3}]]}],
               "kwargs": [], "pre": null, "post": null, "seconds": 1.2e-06}],
    "result": {"output": 0, "path": [["key", "id"]]}, "agent_seconds": 0.00025, "tokens": 0,
    "created_at": 1796106315.390915}"""
)
"""A record written by muscle-mem 0.2.0 (format 1), as its ``to_record`` wrote it."""

TICKET_ID = Output(0, (("key", "id"),))


def test_a_format_1_record_is_read_as_the_provenance_model() -> None:
    trajectory = from_record(FORMAT_1)
    assert trajectory.steps[0].args == (Param("email"),)
    assert trajectory.steps[1].args == (
        TICKET_ID,
        Template(
            (
                Text("Hi "),
                Param("email"),
                Text(", ticket "),
                TICKET_ID,
                Text(" is "),
                Agree((Output(0, (("key", "status"),)), Const("open"))),  # a guarded word
            )
        ),
        Struct("dict", (("to", Param("email")), ("n", Const(3)))),
    )
    assert trajectory.result == TICKET_ID


def test_a_migrated_record_is_written_back_in_the_current_format() -> None:
    record = to_record(from_record(FORMAT_1))
    assert record["format"] == FORMAT_VERSION == 3
    assert from_record(record) == from_record(FORMAT_1)


def test_every_kind_of_value_round_trips() -> None:
    picked = Output(1, (("item", 2), ("attr", "name")), Form("upper"), (Pick(0, "abc"),))
    values = (
        Param("amount", Form("number", grouped=True, decimals=2)),
        Param("n", Form("number", width=3)),
        Agree((Param("qty"), Output(0, (("key", "n"),), Form("int")))),
        Guarded(picked, (("ext", "digest"),), ((0, (("key", "listing"),), "d2"),)),
        Template((Text("room "), Param("room", Form("number", width=2)), Text("!"))),
        Struct("tuple", ((0, Output(0, (), Form("tuple"))),)),
        Template((Text("token="), Output(1, (("key", "body"),), Form("secret", width=1)))),
    )
    trajectory = Trajectory(task_key="k", steps=(Step("a", "1"), Step("b", "1"), Step("c", "1", args=values)))
    assert from_record(json.loads(json.dumps(to_record(trajectory)))) == trajectory


@pytest.mark.parametrize(
    "path",
    [[["attr", "__class__"]], [["attr", "_secret"]], [["attr", "a.b"]], [["item", "0"]], [["call", "x"]]],
)
def test_an_output_path_may_walk_only_keys_items_and_public_fields(path: list[Any]) -> None:
    record = copy.deepcopy(FORMAT_1)
    record["result"] = {"output": 0, "path": path}
    with pytest.raises(RecordError):
        from_record(record)


def test_an_unknown_form_or_an_agreement_of_one_is_refused() -> None:
    record = to_record(from_record(FORMAT_1))
    bad_form = copy.deepcopy(record)
    bad_form["result"] = {"param": "email", "form": ["eval", False, None, 0]}
    lonely = copy.deepcopy(record)
    lonely["result"] = {"agree": [{"param": "email"}]}
    for broken in (bad_form, lonely):
        with pytest.raises(RecordError):
            from_record(broken)


def test_a_format_1_row_in_a_sqlite_store_is_read_and_the_agent_serves_until_it_is_recorded_anew(
    tmp_path: Path,
) -> None:
    """An old record kept no observations, of its params either: the agent serves, and its run is stored."""
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    numbers = itertools.count(1042)
    sent: list[tuple[str, str, dict[str, Any]]] = []

    def make() -> Engine:
        engine = Engine(url)

        @engine.tool(name="create_ticket")
        def create_ticket(email: str) -> dict[str, str]:
            return {"id": f"TCK-{next(numbers)}", "status": "open"}

        @engine.tool(name="notify")
        def notify(ticket: str, body: str, meta: dict[str, Any]) -> str:
            sent.append((ticket, body, meta))
            return "sent"

        def agent(task: str, email: str) -> str:
            ticket = create_ticket(email)
            notify(
                ticket["id"],
                f"Hi {email}, ticket {ticket['id']} is {ticket['status']}",
                {"to": email, "n": 3},
            )
            return str(ticket["id"])

        return engine.set_agent(agent)

    engine = make()
    first = engine("open a ticket for", "ann@example.com", params={"email": "ann@example.com"})
    current = to_record(engine.store.get(str(first.trajectory_id)))  # type: ignore[arg-type]
    engine.close()
    old = copy.deepcopy(FORMAT_1)  # the same trajectory as 0.2.0 stored it, under this run's keys
    old.update(id=current["id"], task_key=current["task_key"])
    for step, now in zip(old["steps"], current["steps"], strict=True):
        step["version"] = now["version"]
    with sqlite3.connect(tmp_path / "cache.db") as db:
        db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(old), current["id"]))
        db.execute("DELETE FROM steps WHERE trajectory_id = ?", (current["id"],))
        rows = steps.step_rows(from_record(old))  # as the release that wrote it indexed it
        db.executemany("INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?)", [r.values() for r in rows])

    replayed = make()("open a ticket for", "bob@example.com", params={"email": "bob@example.com"})
    assert not replayed.hit and replayed.steps_replayed == 0 and replayed.output == "TCK-1043"
    assert replayed.miss_reason is MissReason.OBSERVATION_CHANGED
    assert replayed.reason == "the params: the recorded runs did not keep what they saw here"
    assert sent[-1] == (
        "TCK-1043",
        "Hi bob@example.com, ticket TCK-1043 is open",
        {"to": "bob@example.com", "n": 3},
    )
    again = make()("open a ticket for", "cy@example.com", params={"email": "cy@example.com"})
    assert again.hit and again.output == "TCK-1044"  # the agent's run was stored in the current format


def test_a_step_signature_from_its_record_is_the_steps_own() -> None:
    """The signature the stores index a step by, computed from the step's record, is ``Step.signature``."""
    from muscle_mem.model.trajectory import record_signature, step_record

    values = (
        Const({"nested": [1, 2.5, None]}),
        Param("amount", Form("number", grouped=True, decimals=2)),
        Agree((Param("qty"), Output(0, (("key", "n"),), Form("int")))),
        Template((Text("room "), Param("room", Form("number", width=2)), Text("!"))),
    )
    steps = (Step("a", "1"), Step("b", "2", args=values), Step("c", "1", kwargs=(("to", Param("email")),)))
    for step in steps:
        assert record_signature(step_record(step)) == step.signature
    assert len({s.signature for s in steps}) == 3


def test_the_record_text_is_the_json_of_the_record_and_its_signatures_the_steps_own() -> None:
    """``record_text`` writes what ``json.dumps`` writes of the record, and each step's signature."""
    from muscle_mem.model.trajectory import Snapshot, record_text

    picked = Output(1, (("item", 2), ("attr", "name")), Form("upper"), (Pick(0, "abc"),))
    values = (
        Const(7),
        Const(2**60),
        Const(-0.0),
        Const(float("nan")),
        Const('naïve \u2028 "quoted" \ud800'),
        Const(None),
        Const(True),
        Const(b"raw"),
        Const({"nested": [1, 2.5, None], "$t": "x"}),
        Param("amount"),
        Param("amount", Form("number", grouped=True, decimals=2)),
        Output(0),
        Output(0, (("key", "n"), ("item", 3), ("attr", "é"))),
        Output(0, (("key", 2**60),)),
        Output(0, (), Form("int")),
        picked,
        Agree((Param("qty"), Output(0, (("key", "n"),), Form("int")))),
        Guarded(picked, (("ext", "digest"),), ((0, (("key", "listing"),), "d2"),)),
        Template((Text("room "), Param("room", Form("number", width=2)), Text("!"))),
        Struct("tuple", ((0, Output(0, (), Form("tuple"))),)),
        Template((Text("token="), Output(1, (("key", "body"),), Form("secret", width=1)))),
    )
    steps = (
        Step("a", "1", pre=Snapshot.digest(1), post=Snapshot.capture({"b": [1, 2]}), seconds=1e-7),
        Step("b", "2", args=values, kwargs=(("to", Param("email")), ("ü", Const([1, "x"]))), seconds=3),
        Step("c", "1", args=(Output(1),), pre=Snapshot.capture(b"\x00")),
        Step("d", "1", args=(Const("long " * 200),), seconds=float("inf")),  # a signature not remembered
    )
    trajectories = [
        Trajectory(task_key="k", steps=steps, task="ünïcode {x}", tags=("t", "ü"), result=Const((1, 2))),
        Trajectory(task_key="k", steps=steps[:1], result=Output(0), agent_seconds=2, tokens=12),
        Trajectory(task_key="k", steps=steps[:1], result=Param("x")),
    ]
    for trajectory in trajectories * 2:  # the second time, with the signatures remembered
        text, signatures = record_text(trajectory)
        assert text == json.dumps(to_record(trajectory), separators=(",", ":"))
        assert signatures == [step.signature for step in trajectory.steps]


@pytest.mark.parametrize(
    "leaf",
    [["", "z", 1, ""], ["", "n", float("inf"), ""], ["", "n", [1], ""], [1, "n", 1, ""], ["", "n", 1]],
    ids=["unknown kind", "infinite number", "a list for a value", "a number for a path", "three fields"],
)
def test_a_malformed_observation_refuses_its_record(leaf: list[Any]) -> None:
    """What a step saw is read as strictly as its arguments: a malformed leaf refuses the record."""
    trajectory = Trajectory(task_key="k", steps=(Step("a", "1"),))
    record = json.loads(json.dumps(to_record(trajectory)))
    record["steps"][0]["observed"] = {"key": "k", "ids": [], "leaves": [leaf]}
    with pytest.raises(RecordError, match="observed leaf"):
        from_record(record)


_LEAF_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([2**60, -(2**70), -0.0, 1e300, 'naïve \u2028 "quoted" \ud800'])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
_SEEN = st.builds(
    Observation,
    st.text(max_size=8),
    st.frozensets(st.text(max_size=4), max_size=3),
    st.lists(
        st.tuples(st.text(max_size=6), st.sampled_from(sorted(KINDS)), _LEAF_VALUES, st.text(max_size=4)),
        max_size=4,
    ).map(tuple),
)


@given(st.lists(st.tuples(st.none() | _SEEN, st.none() | _SEEN), min_size=1, max_size=3))
def test_the_record_text_of_what_steps_saw_is_the_json_of_their_records(
    seen: list[tuple[Observation | None, Observation | None]],
) -> None:
    """``record_text`` writes each step's observations as ``json.dumps`` writes their records."""
    from muscle_mem.model.trajectory import record_text

    steps = tuple(Step("a", "1", observed=observed, given=given) for observed, given in seen)
    trajectory = Trajectory(task_key="k", steps=steps)
    text, _ = record_text(trajectory)
    assert text == json.dumps(to_record(trajectory), separators=(",", ":"))
    assert from_record(json.loads(text)) == trajectory


def test_observations_equal_in_value_are_written_by_their_own_values() -> None:
    """An observation shared by runs is written as its record is, and one equal to it (1, 1.0, True) as its own is."""
    from muscle_mem.model.trajectory import record_text

    shared = Observation("k", frozenset(), (("", "n", 1, ""),))
    equal = [
        shared,
        Observation("k", frozenset(), (("", "n", 1.0, ""),)),
        Observation("k", frozenset(), (("", "n", True, ""),)),
    ]
    assert len(set(equal)) == 1
    for observed in [*equal, *equal, shared]:
        trajectory = Trajectory(task_key="k", steps=(Step("a", "1", observed=observed),))
        assert record_text(trajectory)[0] == json.dumps(to_record(trajectory), separators=(",", ":"))


def test_one_leaf_observations_are_written_alike_past_the_bound_of_kept_texts() -> None:
    """The texts of one-leaf observations are kept, bounded: each is written as its record is, before and after."""
    from muscle_mem.model import trajectory as trajectory_module

    made = [
        Observation(f"k{n}", frozenset(), (("", "n", n, ""),))
        for n in range(trajectory_module._SCALAR_OBSERVATION_TEXTS_KEPT + 2)
    ]
    for observation in [*made, made[0], made[-1]]:
        written = trajectory_module._observation_text(observation)
        assert written == json.dumps(observation_record(observation), separators=(",", ":"))
    assert (
        len(trajectory_module._SCALAR_OBSERVATION_TEXTS) <= trajectory_module._SCALAR_OBSERVATION_TEXTS_KEPT
    )
