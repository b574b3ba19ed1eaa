"""The engine end to end: muscle-mem 0.1.0's greeter fault, SQLite files and restarts, store failures."""

from __future__ import annotations

import gc
import logging
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine, current_run

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Seen:
    """A pre-check snapshot: what the screen showed (a dataclass, so it goes through the codec)."""

    title: str
    count: int


def test_greeter_of_0_1_0_does_not_replay_john_for_erik() -> None:
    engine = Engine()
    greeted: list[str] = []

    def capture(name: str) -> float:
        return time.time()

    def compare(current: float, candidate: float) -> bool:
        return current - candidate <= 60

    @engine.tool(pre_check=Check(capture, compare))
    def hello(name: str) -> None:
        greeted.append(name)

    def agent(name: str) -> None:
        for i in range(9):
            hello(name + " + " + str(i))

    engine.set_agent(agent)
    assert not engine("john")
    erik = engine("erik")
    assert not erik and erik.steps_replayed == 0 and erik.fallback
    assert greeted == [f"john + {i}" for i in range(9)] + [f"erik + {i}" for i in range(9)]
    greeted.clear()
    assert engine("erik") and engine("john")
    assert greeted == [f"erik + {i}" for i in range(9)] + [f"john + {i}" for i in range(9)]


class Shop:
    def __init__(self) -> None:
        self.next_order = 70000
        self.screen = Seen("cart", 1)
        self.shipped: list[tuple[int, str]] = []


def shop_engine(store: str, shop: Shop, version: str = "1") -> Engine:
    engine = Engine(store)

    @engine.tool(name="order", version=version, pre_check=Check(lambda item: shop.screen, _same_title))
    def order(item: str) -> dict[str, Any]:
        shop.next_order += 1
        return {"order_id": shop.next_order, "item": item}

    @engine.tool(name="ship", pre_check=Check.equal(lambda order_id, address: shop.screen.count))
    def ship(order_id: int, address: str) -> str:
        shop.shipped.append((order_id, address))
        return f"shipped {order_id}"

    def agent(task: str, item: str, address: str) -> str:
        placed = order(item)
        return ship(placed["order_id"], address)

    engine.set_agent(agent)
    return engine


def _same_title(current: Seen, candidate: Seen) -> bool:
    assert isinstance(candidate, Seen), f"the snapshot decodes as a Seen, not {type(candidate).__name__}"
    return current.title == candidate.title


def buy(engine: Engine, item: str, address: str) -> Any:
    return engine("buy", item, address, params={"item": item, "address": address})


def test_a_new_engine_on_the_same_sqlite_file_hits(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    shop = Shop()
    with shop_engine(url, shop) as first:
        miss = buy(first, "LMP-100", "1 Main St")
        assert not miss and miss.stored and miss.output == "shipped 70001"

    with shop_engine(url, shop) as second:  # a restart: a new engine on the same file
        hit = buy(second, "DSK-200", "2 Side Rd")
        assert hit.hit, hit.reason
        assert hit.trajectory_id == miss.trajectory_id
        assert shop.shipped == [(70001, "1 Main St"), (70002, "2 Side Rd")]  # a fresh order id flowed
        assert hit.output == "shipped 70002"
        second.flush()  # hits are written behind
        usage = second.store.usage(hit.trajectory_id or "")
        assert usage is not None and usage.hits == 1
        assert len(second.store) == 1

        shop.screen = Seen("error page", 1)
        refused = buy(second, "DSK-200", "2 Side Rd")
        assert not refused and refused.reason == "pre-check of tool 'order' failed at step 0"

    with shop_engine(url, shop, version="2") as third:  # the order tool changed
        changed = buy(third, "DSK-200", "2 Side Rd")
        assert not changed and "'order' changed since it was recorded" in (changed.reason or "")


def test_reading_the_index_pauses_the_garbage_collector_only_while_it_reads(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    shop = Shop()
    with shop_engine(url, shop) as first:
        assert buy(first, "LMP-100", "1 Main St").stored
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with shop_engine(url, shop) as again:
                assert buy(again, "DSK-200", "2 Side Rd").hit
                assert gc.isenabled() is enabled  # restored as it was, even when the user had disabled it
        finally:
            gc.enable()


def test_two_live_engines_on_one_sqlite_file_see_each_others_trajectories(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    shop = Shop()
    with shop_engine(url, shop) as one, shop_engine(url, shop) as two:
        assert not buy(one, "LMP-100", "1 Main St")
        assert buy(two, "DSK-200", "2 Side Rd").hit
        shop.screen = Seen("sale", 1)  # a new screen: two records a new trajectory
        assert not buy(two, "CHR-300", "3 Hill Ave")
        assert buy(one, "RUG-400", "4 Low St").hit
        assert len(one.store) == len(two.store) == 2


def test_a_restarted_process_replays_from_a_sqlite_file(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            from muscle_mem import Check, Engine

            engine = Engine("sqlite:///{tmp_path / "jobs.db"}")
            state = {{"page": "inbox"}}

            @engine.tool(pre_check=Check.equal(lambda folder: state["page"]))
            def open_folder(folder):
                return {{"folder_id": "fld-" + folder}}

            @engine.tool()
            def archive(folder_id, older_than_days):
                return folder_id + ":" + str(older_than_days)

            def agent(task, folder):
                found = open_folder(folder)
                return archive(found["folder_id"], 30)

            engine.set_agent(agent)
            result = engine("archive", sys.argv[1], params={{"folder_name": sys.argv[1]}})
            print(result.hit, result.output, result.steps_replayed)
            """
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

    def run(folder: str) -> str:
        done = subprocess.run(
            [sys.executable, str(script), folder], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        return done.stdout.strip()

    assert run("news") == "False fld-news:30 0"
    assert run("bills") == "True fld-bills:30 2"
    assert run("bills") == "True fld-bills:30 2"


def test_a_store_that_cannot_be_read_hands_the_task_to_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="muscle_mem")
    engine = Engine()

    @engine.tool()
    def step() -> str:
        return "done"

    engine.set_agent(lambda: step())
    assert engine().stored
    engine.store.close()
    result = engine()
    assert not result and result.output == "done" and result.fallback
    assert result.reason is not None and "store" in result.reason
    assert not result.stored
    assert engine.metrics.store_errors >= 1
    assert any(r.name.startswith("muscle_mem") for r in caplog.records)


def test_saved_seconds_counts_the_agent_time_a_hit_avoided() -> None:
    engine = Engine()

    @engine.tool()
    def quick() -> int:
        return 1

    def slow_agent() -> int:
        time.sleep(0.05)  # the LLM thinking
        return quick()

    engine.set_agent(slow_agent)
    engine()
    assert engine.metrics.agent_seconds >= 0.05
    assert engine().hit
    assert engine.metrics.saved_seconds > 0
    assert engine.metrics.hits == 1 and engine.metrics.misses == 1


def test_keyword_arguments_are_recorded_replayed_and_shown_to_a_resuming_agent() -> None:
    engine = Engine()
    screen = {"title": "login", "landing": "welcome"}
    views: list[list[tuple[str, tuple[Any, ...], dict[str, Any], bool]]] = []
    pages: list[str] = []

    @engine.tool(name="sign_in")
    def sign_in(user: str, *, remember: bool = False) -> str:
        screen["title"] = screen["landing"]
        return f"token-{user}"

    @engine.tool(name="go", pre_check=Check.equal(lambda *, page: screen["title"]))
    def go(*, page: str) -> None:
        pages.append(page)
        screen["title"] = page

    def agent(task: str, user: str) -> str:
        run = current_run()
        assert run is not None
        views.append([(s.tool, s.args, s.kwargs, s.replayed) for s in run.steps])
        if not run.steps:
            sign_in(user, remember=True)
        go(page="home")
        return "ok"

    engine.set_agent(agent)
    assert not engine("sign in", "ada", tags=["web"], params={"user": "ada"})
    assert engine("sign in", "bob", tags=["web"], params={"user": "bob"}).hit
    screen["landing"] = "promo"  # after signing in, another page shows: go() is not safe
    result = engine("sign in", "cy", tags=["web"], params={"user": "cy"})
    assert not result and result.steps_replayed == 1
    assert views == [[], [("sign_in", ("cy",), {"remember": True}, True)]]
    assert pages == ["home", "home", "home"]
