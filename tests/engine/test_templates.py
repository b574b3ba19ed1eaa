"""Templates learned from plain-text tasks: proven by two runs before they serve a new value, and
only for the values their runs showed."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

import pytest

from muscle_mem import Engine, MissReason
from muscle_mem.cli import main
from muscle_mem.stores import Store


class Desk:
    """A support desk: orders to look up and refund, files to share; the agent reads its task's text."""

    def __init__(self, engine: Engine) -> None:
        self.orders = {i: {"id": i, "status": "delivered"} for i in range(-5, 10_000)}
        self.refunds: list[int] = []
        self.shares: list[tuple[str, str]] = []
        self.agent_runs: list[str] = []

        @engine.tool()
        def lookup(order_id: int) -> dict[str, Any]:
            return dict(self.orders[order_id])

        @engine.tool()
        def refund(order_id: int) -> str:
            self.orders[order_id]["status"] = "refunded"
            self.refunds.append(order_id)
            return "ok"

        @engine.tool()
        def share(file: str, person: str) -> str:
            self.shares.append((file, person))
            return "shared"

        def agent(task: str) -> str:
            self.agent_runs.append(task)
            words = task.split()
            if words[0] == "share":
                share(words[1], words[3])
                return f"shared {words[1]}"
            order_id = int(next(w for w in words if w.lstrip("-").isdigit()))
            lookup(order_id)
            refund(order_id)
            return f"refunded order {order_id}"

        engine.set_agent(agent)


def desk_engine(store: Store | None = None) -> tuple[Engine, Desk]:
    engine = Engine(store, templates=True)
    return engine, Desk(engine)


def test_a_template_serves_a_new_value_only_after_two_runs_with_different_values(store: Store) -> None:
    engine, desk = desk_engine(store)
    first, second = engine("refund order 100"), engine("refund order 200")
    assert not first.hit and not second.hit and first.template is None and second.template is None
    third = engine("refund order 150")
    assert third.hit and third.template == "refund order {1}" and third.slots == {"1": 150}
    assert third.output == "refunded order 150"
    assert desk.refunds == [100, 200, 150] and desk.agent_runs == ["refund order 100", "refund order 200"]


def test_two_runs_with_the_same_value_prove_nothing_for_a_new_one() -> None:
    engine, desk = desk_engine()
    engine("refund order 100")
    again = engine("refund order 100")  # the order is refunded now: the replay stops, the agent goes on
    assert not again.hit and desk.agent_runs == ["refund order 100"] * 2
    result = engine("refund order 101")
    assert not result.hit and result.template is None
    assert desk.agent_runs[-1] == "refund order 101"


def test_a_number_slot_takes_only_the_range_its_runs_showed() -> None:
    engine, desk = desk_engine()
    engine("refund order 100")
    engine("refund order 200")
    for outside in (99, 201, 5000):
        result = engine(f"refund order {outside}")
        assert not result.hit and result.template is None, outside
    assert engine("refund order 5000").hit is False  # now exact: its own run is stored, the order refunded
    assert engine("refund order 4000").hit  # 100..5000 shown by the runs since
    assert desk.refunds[-1] == 4000


@pytest.mark.parametrize(
    "text",
    [
        "refund order four",
        "refund order 4471 and 4472",
        "refund order -1",
        "refund order 150.5",
        "refund order 0150",
    ],
)
def test_a_slot_never_takes_a_value_of_another_look(text: str) -> None:
    engine, desk = desk_engine()
    engine("refund order 100")
    engine("refund order 200")
    try:
        result = engine(text)
    except StopIteration:  # no number for the agent either
        assert desk.agent_runs[-1] == text
        return
    assert not result.hit and result.template is None
    assert desk.agent_runs[-1] == text


def test_a_literal_that_did_not_flow_stays_fixed_text() -> None:
    engine, desk = desk_engine()
    engine("refund order 100 quickly")
    engine("refund order 200 quickly")
    assert engine("refund order 150 quickly").template == "refund order {1} quickly"
    slowly = engine("refund order 160 slowly")
    assert not slowly.hit and slowly.template is None
    assert desk.agent_runs[-1] == "refund order 160 slowly"


def test_a_negation_or_an_extra_word_is_another_template() -> None:
    engine, desk = desk_engine()
    engine("refund order 100")
    engine("refund order 200")
    for text in ("do not refund order 150", "refund order 150 twice", "refund the order 150"):
        result = engine(text)
        assert not result.hit and result.template is None, text
        assert desk.agent_runs[-1] == text


def test_every_slot_flows_as_its_runs_showed() -> None:
    engine, desk = desk_engine()
    engine("share plan.pdf with ada@example.com")
    engine("share notes.pdf with bob@example.com")
    result = engine("share draft.pdf with cy@example.com")
    assert result.hit and result.template == "share {1} with {2}"
    assert result.slots == {"1": "draft.pdf", "2": "cy@example.com"}
    assert desk.shares[-1] == ("draft.pdf", "cy@example.com") and len(desk.agent_runs) == 2
    other_look = engine("share draft.docx.bak with di@example.com")
    assert other_look.template is None


def test_a_word_in_a_slot_serves_only_the_words_the_runs_showed() -> None:
    """A single word may be a category the agent decides on (a plan, a priority): never a free name."""
    engine, desk = desk_engine()
    engine("share plan.pdf with Ada")
    engine("share notes.pdf with Bob")
    result = engine("share draft.pdf with Cy")
    assert not result.hit and result.miss_reason is MissReason.OBSERVATION_CHANGED
    assert desk.shares[-1] == ("draft.pdf", "Cy") and len(desk.agent_runs) == 3
    assert engine("share draft.pdf with Ada").hit


def test_a_template_replay_stops_on_a_changed_observation() -> None:
    engine, desk = desk_engine()
    engine("refund order 100")
    engine("refund order 200")
    desk.orders[150]["status"] = "refunded"
    result = engine("refund order 150")
    assert not result.hit and result.steps_replayed == 1 and result.template == "refund order {1}"
    assert "status" in (result.reason or "")
    assert desk.agent_runs[-1] == "refund order 150"


def test_an_exact_task_wins_over_a_template() -> None:
    engine, desk = desk_engine()
    engine("refund order 100")
    engine("refund order 200")
    desk.orders[100]["status"] = "delivered"
    again = engine("refund order 100")
    assert again.hit and again.template is None


def test_declared_params_are_live_at_once_and_make_no_template() -> None:
    engine, _ = desk_engine()
    engine("refund order 100", params={"order_id": 100})
    result = engine("refund order 200", params={"order_id": 200})
    assert result.hit and result.template is None and len(engine.store) == 1


def test_templates_survive_a_restart_and_are_shared_by_engines(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    writer, _ = desk_engine(url)  # type: ignore[arg-type]
    writer("refund order 100")
    writer("refund order 200")
    reader, desk = desk_engine(url)  # type: ignore[arg-type]
    result = reader("refund order 150")
    assert result.hit and result.template == "refund order {1}" and desk.agent_runs == []
    writer.close()
    reader.close()


def test_without_templates_a_new_value_is_a_miss() -> None:
    engine = Engine()
    desk = Desk(engine)
    for order_id in (100, 200, 150):
        assert not engine(f"refund order {order_id}").hit
    assert len(desk.agent_runs) == 3 and len(engine.store) == 3


def test_semantic_matching_never_takes_a_templates_runs_for_a_similar_task(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    writer, _ = desk_engine(url)  # type: ignore[arg-type]
    writer("refund order 100")
    writer("refund order 200")
    assert len(_ids(writer, template=True)) == 2
    writer.store.remove(_ids(writer, template=False))  # only the template's runs are left to match
    reader = Engine(url, match="semantic", embedder="hashing", similarity=0.5)
    Desk(reader)
    result = reader("refund order 100 please")
    assert not result.hit and result.miss_reason is MissReason.NO_TRAJECTORY
    writer.close()
    reader.close()


def _ids(engine: Engine, *, template: bool) -> list[str]:
    keys = [k for k in engine.store.tasks() if ("template:" in k) == template]
    return [t.id for k in keys for t in engine.store.changes(k, 0).added]


def test_a_negative_number_slot_takes_only_its_runs_range() -> None:
    engine, _ = desk_engine()
    engine("refund order -2")
    engine("refund order -4")
    assert engine("refund order -3").template == "refund order {1}"
    assert engine("refund order -5").template is None
    assert engine("refund order 3").template is None


def test_a_template_serves_only_its_own_namespace(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    first = Engine(url, templates=True, namespace="team-a")
    Desk(first)
    first("refund order 100")
    first("refund order 200")
    assert first("refund order 150").template == "refund order {1}"
    other = Engine(url, templates=True, namespace="team-b")
    desk = Desk(other)
    assert other("refund order 160").template is None and desk.agent_runs == ["refund order 160"]
    first.close()
    other.close()


def test_a_run_removed_takes_its_template_copy_with_it() -> None:
    """A run removed because a tool was called after it ended is removed under its template too.

    The copy misses the same call: kept, it would serve texts from a run known to be incomplete.
    """
    engine = Engine(templates=True)
    late: list[threading.Thread] = []

    @engine.tool()
    def refund(order_id: int) -> str:
        return "ok"

    def agent(task: str) -> str:
        order_id = int(task.split()[-1])
        context = contextvars.copy_context()  # the run's: a call made in it after the run ended is late
        late.append(threading.Thread(target=lambda: context.run(refund, order_id)))
        return refund(order_id)

    engine.set_agent(agent)
    first = engine("refund order 100")
    assert first.stored and len(engine.store) == 2  # under its text, and under its template
    late[0].start()
    late[0].join()
    assert len(engine.store) == 0


def test_rm_of_a_run_removes_its_template_copy(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``muscle-mem rm ID`` (or a prefix of it) removes the run under its text and its copy under its template."""
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    with Engine(url, templates=True) as engine:
        desk = Desk(engine)
        first = engine("refund order 100")
        engine("refund order 200")
        assert first.trajectory_id is not None and len(engine.store) == 4
    assert main(["rm", first.trajectory_id[:12], "--store", url]) == 0
    assert "Removed 2 trajectories." in capsys.readouterr().out
    with Engine(url, templates=True) as engine:
        desk = Desk(engine)
        result = engine("refund order 150")  # one run of the template is left: it proves nothing
    assert not result.hit and len(desk.agent_runs) == 1
