"""Proven mode: a family replays only after ``proof`` shadow agreements with no disagreement since."""

from __future__ import annotations

from conftest import StoreSpec, open_spec
from modes_desk import ask, refund_desk
from muscle_mem import MissReason, Verdict


def test_a_family_replays_only_after_three_agreements() -> None:
    """The first run has nothing to compare; three agreements later, the family replays."""
    engine = refund_desk(mode="proven", proof=3)
    results = [ask(engine, n) for n in range(1, 7)]
    assert [r.hit for r in results] == [False, False, False, False, True, True]
    assert [r.shadow.verdict if r.shadow else None for r in results[:4]] == [
        Verdict.MISSED,
        Verdict.AGREED,
        Verdict.AGREED,
        Verdict.AGREED,
    ]
    assert all(r.miss_reason is MissReason.SHADOW for r in results[:4])
    assert results[3].reason is not None and "2 of the 3 shadow agreements" in results[3].reason
    assert results[4].output == "refunded 5" and results[4].shadow is None


def test_a_disagreement_before_the_proof_starts_the_count_again() -> None:
    """Two agreements, a disagreement, then three more agreements are needed."""
    engine = refund_desk(mode="proven", proof=3)
    desk = engine.desk  # type: ignore[attr-defined]
    verdicts = []
    for n in range(1, 10):
        desk["refunds"] = n != 4
        result = ask(engine, n)
        verdicts.append(result.shadow.verdict.value if result.shadow else ("hit" if result.hit else "miss"))
    # run 5: a replay would have denied, as the latest run (4) did, while the agent refunds
    assert verdicts == [
        "missed",
        "agreed",
        "agreed",
        "disagreed",
        "disagreed",
        "agreed",
        "agreed",
        "agreed",
        "hit",
    ]


def test_a_disagreement_another_worker_sees_in_shadow_sends_a_proven_family_back_to_shadow(
    durable: StoreSpec,
) -> None:
    """A worker in shadow mode (a canary) disagrees: the proven worker shadows the family again."""
    proven = refund_desk(open_spec(durable), mode="proven", proof=2, sync_interval=0)
    canary = refund_desk(open_spec(durable), mode="shadow", sync_interval=0)
    try:
        assert [ask(proven, n).hit for n in range(1, 5)] == [False, False, False, True]
        canary.desk["refunds"] = False  # type: ignore[attr-defined]
        shadow = ask(canary, 5).shadow
        assert shadow is not None and shadow.verdict is Verdict.DISAGREED
        canary.flush()
        back = ask(proven, 6)
        assert not back.hit and back.miss_reason is MissReason.SHADOW
        assert back.reason is not None and "0 of the 2 shadow agreements" in back.reason
    finally:
        proven.close()
        canary.close()


def test_a_proven_engine_restarted_remembers_its_families() -> None:
    """The agreements are read from the store's events: a new engine on the store replays at once."""
    first = refund_desk(mode="proven", proof=2)
    for n in range(1, 4):
        ask(first, n)
    first.flush()
    again = refund_desk(first.store, mode="proven", proof=2)
    assert ask(again, 4).hit
