"""A value the agent copied out of a JSON text output is rebuilt from the live text, as out of a dict.

Many tools answer with a JSON text (MCP servers, LangChain and smolagents tools). An id read out of
one and passed on is an identity like an id read out of a dict: the next user's lookup returns
another id, and the replay passes that one. What the text holds is still compared (a changed status
stops the replay), and a live output that no longer holds JSON ends the replay with a reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Engine, MissReason
from muscle_mem.cli import script
from muscle_mem.model.provenance import JSON, Output, Unresolved, evaluate
from muscle_mem.model.trajectory import RecordError, Step, Trajectory, from_record, to_record


class Shop:
    """An order desk whose lookup answers with a JSON text, as an MCP tool does."""

    def __init__(self, engine: Engine) -> None:
        self.order = {"order_id": "ord-A1", "status": "paid", "lines": [{"sku": "sku-1", "qty": 2}]}
        self.refunded: list[tuple[str, str]] = []
        self.lookup = engine.register(self._lookup, name="lookup")
        self.refund = engine.register(self._refund, name="refund")
        engine.set_agent(self.agent)

    def _lookup(self, customer: str) -> str:
        return self.order if isinstance(self.order, str) else json.dumps(self.order)

    def _refund(self, order_id: str, sku: str) -> str:
        self.refunded.append((order_id, sku))
        return "refunded"

    def agent(self, task: str) -> str:
        order = json.loads(self.lookup(task.split()[-1]))
        if order["status"] != "paid":
            return "nothing to refund"
        return self.refund(order["order_id"], order["lines"][0]["sku"])


@pytest.fixture(params=["memory", "sqlite"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    store = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'cache.db'}"
    return Engine(store)


def test_an_id_read_out_of_a_json_text_replays_for_the_next_id(engine: Engine) -> None:
    shop = Shop(engine)
    assert not engine("refund the last order of bob").hit
    shop.order = {"order_id": "ord-B2", "status": "paid", "lines": [{"sku": "sku-9", "qty": 2}]}
    result = engine("refund the last order of bob")
    assert result.hit, result.reason
    assert shop.refunded[-1] == ("ord-B2", "sku-9")


def test_a_changed_value_in_the_json_text_still_stops_the_replay(engine: Engine) -> None:
    shop = Shop(engine)
    engine("refund the last order of bob")
    shop.order = {"order_id": "ord-B2", "status": "refunded", "lines": [{"sku": "sku-9", "qty": 2}]}
    result = engine("refund the last order of bob")
    assert not result.hit
    assert result.miss_reason is MissReason.OBSERVATION_CHANGED
    assert "['status']" in (result.reason or "")
    assert shop.refunded == [("ord-A1", "sku-1")]


def test_a_live_output_that_no_longer_holds_json_ends_the_replay(engine: Engine) -> None:
    shop = Shop(engine)
    engine("refund the last order of bob")
    shop.order = "order ord-B2 is paid"  # type: ignore[assignment]
    with pytest.raises(json.JSONDecodeError):  # the agent alone fails on it too: its own error, unchanged
        engine("refund the last order of bob")
    assert shop.refunded == [("ord-A1", "sku-1")]


def test_a_value_in_a_json_text_is_referenced_through_it() -> None:
    engine = Engine()
    Shop(engine)
    engine("refund the last order of bob")
    [trajectory] = [t for t in engine.store._entries.values()]  # type: ignore[attr-defined]
    order_id, sku = trajectory.trajectory.steps[1].args
    assert order_id == Output(0, (JSON, ("key", "order_id")))
    assert sku.path == (JSON, ("key", "lines"), ("item", 0), ("key", "sku"))


def test_walking_a_json_text_reads_it_as_json_loads_does() -> None:
    text = '{"a": {"b": [1, 2.5]}, "a2": "x"}'
    assert evaluate(Output(0, (JSON, ("key", "a"), ("key", "b"), ("item", 1))), {}, [text]) == 2.5
    for not_json in ["plain words", '"a string"', "[1, 2", {"a": 1}]:
        with pytest.raises(Unresolved):
            evaluate(Output(0, (JSON, ("key", "a"))), {}, [not_json])


def _two_steps(path: list[Any]) -> dict[str, Any]:
    trajectory = Trajectory(task_key="k", steps=(Step("read", "1"), Step("send", "1")))
    record = to_record(trajectory)
    record["steps"][1]["args"] = [{"output": 0, "path": path}]
    return record


def test_a_stored_json_step_is_read_back_and_only_as_written() -> None:
    record = _two_steps([["json", None], ["key", "order_id"]])
    assert from_record(record).steps[1].args == (Output(0, (JSON, ("key", "order_id"))),)
    for hostile in (["json", "os"], ["json", 1], ["JSON", None]):
        with pytest.raises(RecordError, match="may not walk"):
            from_record(_two_steps([hostile, ["key", "order_id"]]))


def test_an_exported_script_reads_the_json_text_as_the_agent_did() -> None:
    expressions = script._Expr({}, {0: "order"}, set())
    code = expressions.of(Output(0, (JSON, ("key", "lines"), ("item", 0), ("key", "sku"))))
    assert code == "json.loads(order)['lines'][0]['sku']"
    assert "json" in expressions.imports
    order = json.dumps({"lines": [{"sku": "sku-3"}]})
    assert eval(code, {"json": json, "order": order}) == "sku-3"  # the code the export writes
