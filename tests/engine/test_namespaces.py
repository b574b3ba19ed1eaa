"""``Engine(namespace=...)`` separates deployments that share one store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Engine
from muscle_mem.model._task_keys import task_key


def shop(url: str, asked: list[str], **options: Any) -> Engine:
    """An engine over the store at ``url`` whose agent notes in ``asked`` each task it is handed."""
    engine = Engine(url, **options)

    @engine.tool(name="refund")
    def refund(order: str) -> str:
        return f"refunded {order}"

    def agent(order: str) -> str:
        asked.append(order)
        return refund(order)

    engine.set_agent(agent)
    return engine


def test_two_namespaces_never_see_each_others_trajectories(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    asked: list[str] = []
    with shop(url, asked, namespace="eu") as eu:
        assert not eu("A-1")
    with shop(url, asked, namespace="us") as us:
        assert not us("A-1")
        assert us("A-1").hit
    with shop(url, asked, namespace="eu") as eu_again:
        assert eu_again("A-1").hit
    assert asked == ["A-1", "A-1"]


def test_no_namespace_keeps_the_keys_stored_before(tmp_path: Path) -> None:
    """Without a namespace the keys are those of muscle-mem 0.2.0; a namespace does not see them."""
    before = "task:0d6f2f34ab7d9fa5260bf176179ed4d4"  # as muscle-mem 0.2.0 computed it
    assert task_key(("refund order A-1",), {}, ("refunds",), {"name": "Ada", "n": 3}) == before
    assert (
        task_key(("refund order A-1",), {}, ("refunds",), {"name": "Ada", "n": 3}, namespace="eu") != before
    )
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    asked: list[str] = []
    with shop(url, asked) as plain:
        assert not plain("A-1")
    with shop(url, asked) as plain_again:
        assert plain_again("A-1").hit
    with shop(url, asked, namespace="eu") as eu:
        assert not eu("A-1")
    assert asked == ["A-1", "A-1"]


@pytest.mark.parametrize("match", ["tags", "semantic"])
def test_tags_and_semantic_matching_stay_inside_the_namespace(tmp_path: Path, match: str) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    asked: list[str] = []
    options: dict[str, Any] = {"match": match}
    if match == "semantic":
        options["embedder"] = "hashing"
    with shop(url, asked, namespace="eu", **options) as eu:
        assert not eu("refund order A-1", tags=["refunds"])
        assert eu("refund order A-1", tags=["refunds"]).hit
    with shop(url, asked, namespace="us", **options) as us:
        assert not us("refund order A-1", tags=["refunds"])
    with shop(url, asked, **options) as plain:
        assert not plain("refund order A-1", tags=["refunds"])
    assert len(asked) == 3


def test_a_namespace_must_be_a_non_empty_string() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        Engine(namespace="")
    with pytest.raises(TypeError, match="namespace must be a string"):
        Engine(namespace=3)  # type: ignore[arg-type]
