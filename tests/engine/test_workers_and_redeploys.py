"""What the soundness harness cannot express: two live workers on one SQLite file, a tool redeployed between runs."""

from __future__ import annotations

from pathlib import Path

from muscle_mem import Check, Engine


def _desk(engine: Engine, world: dict) -> None:
    @engine.tool(pre_check=Check.equal(lambda order: True))
    def get_order(order: int) -> dict:
        return {"order": order, "total": world["total"]}

    @engine.tool(pre_check=Check.equal(lambda order: True))
    def refund(order: int) -> str:
        world["refunded"].append(order)
        return "refunded"

    def agent(task: str) -> str:
        o = int(task.split()[-1])
        get_order(o)
        if world["paused"]:
            return "paused"
        refund(o)
        return "refunded"

    engine.set_agent(agent)


def test_a_canary_disagreement_reaches_a_proven_worker_before_its_next_replay(tmp_path: Path) -> None:
    """Two live workers on one SQLite file: a shadow canary disagrees; the proven worker (sync_interval=0)
    must not replay the family at its next call. The canary's events are journaled in batches (a second),
    so a disagreement is written at once, before the next call of any worker reads the store."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    world = {"total": 40, "refunded": [], "paused": False}
    proven = Engine(url, mode="proven", proof=1, sync_interval=0)
    canary = Engine(url, mode="shadow")
    _desk(proven, world)
    _desk(canary, world)
    try:
        for _ in range(2):
            proven("refund order 7", params={"order": 7})  # recorded, then agreed: proven
        world["paused"] = True
        shadow = canary("refund order 7", params={"order": 7}).shadow
        assert shadow is not None and shadow.verdict.value == "disagreed"
        world["refunded"].clear()
        result = proven("refund order 7", params={"order": 7})
        assert not result.hit and world["refunded"] == [], result.reason
    finally:
        canary.close()
        proven.close()


def test_a_tool_default_changed_between_recording_and_replay_misses(tmp_path: Path) -> None:
    """A tool's default argument changed (a new fee rate) between a recording and a restart: no replay."""
    url = f"sqlite:///{tmp_path / 'tools.db'}"
    charged: list[float] = []
    for rate, expect_hit in ((0.1, False), (0.1, True), (0.2, False)):
        engine = Engine(url)
        namespace: dict = {"charged": charged}
        exec(  # a fresh function object each time, as a redeploy makes
            f"def charge(amount: float, rate: float = {rate}) -> float:\n"
            "    charged.append(amount * (1 + rate))\n"
            "    return amount * (1 + rate)\n",
            namespace,
        )
        charge = engine.tool()(namespace["charge"])
        engine.set_agent(lambda task, charge=charge: charge(10.0))
        result = engine("charge ten")
        engine.close()
        assert result.hit is expect_hit, (rate, result.reason)
