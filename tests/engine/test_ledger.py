"""The ledger: per task family, what the agent spent and the cache saved, from every worker's events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conftest import StoreSpec, open_spec
from muscle_mem import Check, Engine, current_run
from muscle_mem.cache.ledger import ledger
from muscle_mem.stores.base import Event

PRICES = {"gpt-4.1": (2.0, 8.0)}


def desk_engine(store: Any, spend: Callable[[str], tuple[int, int]], **options: Any) -> Engine:
    """An engine whose agent looks a user up and opens a ticket, reporting ``spend(user)`` tokens."""
    engine = Engine(store, **options)
    state = {"open": True}

    @engine.tool()
    def lookup(email: str) -> str:
        return "usr_" + email.split("@")[0]

    @engine.tool(pre_check=Check.equal(lambda user: state["open"]))
    def open_ticket(user: str) -> str:
        return f"ticket for {user}"

    def agent(task: str) -> str:
        email = task.split()[-1]
        ticket = open_ticket(lookup(email))
        run = current_run()
        assert run is not None
        input_tokens, output_tokens = spend(email)
        run.add_usage(input_tokens, output_tokens, requests=2, model="gpt-4.1")
        return ticket

    engine.set_agent(agent)
    engine.desk = state  # type: ignore[attr-defined]
    return engine


def ask(engine: Engine, email: str, tags: tuple[str, ...] = ()) -> Any:
    return engine(f"open a ticket for {email}", params={"email": email}, tags=tags)


def test_two_workers_on_one_store_share_one_ledger_that_outlives_them(durable: StoreSpec) -> None:
    """What each worker spent and saved is in the store's ledger, read the same by a later worker."""
    first = desk_engine(open_spec(durable), lambda email: (1000, 100), prices=PRICES)
    ask(first, "ada@x.io")
    second = desk_engine(open_spec(durable), lambda email: (1000, 100), prices=PRICES, sync_interval=0)
    assert ask(second, "bob@x.io").hit
    first.close()
    second.close()
    later = Engine(open_spec(durable), prices=PRICES)
    try:
        total = later.ledger().total
        assert (total.calls, total.hits, total.misses) == (2, 1, 1)
        assert (total.spent.tokens, total.spent.input_tokens, total.spent.output_tokens) == (1100, 1000, 100)
        assert (total.saved.tokens, total.saved.input_tokens, total.saved.output_tokens) == (1100, 1000, 100)
        assert total.spent.money == total.saved.money == pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6)
        (family,) = later.ledger().families
        assert (family.task, total.task) == ("open a ticket for {email}", "")
    finally:
        later.close()


def test_the_ledgers_figures_are_the_sums_of_the_events() -> None:
    """Calls, hits, misses by reason, tokens spent and agent seconds add up the store's events."""
    engine = desk_engine(None, lambda email: (300, 40), prices=PRICES)
    for email in ("ada@x.io", "bob@x.io", "cy@x.io"):
        ask(engine, email)
    engine.desk["open"] = False  # type: ignore[attr-defined]
    ask(engine, "dan@x.io")
    book = engine.ledger()
    events = engine.store.events()  # type: ignore[attr-defined]
    (family,) = book.families
    assert (family.calls, family.hits, family.partial_replays, family.misses) == (4, 2, 1, 2)
    assert family.misses_by_reason == {"no_trajectory": 1, "pre_check_failed": 1}
    assert family.spent.tokens == sum(e.tokens_spent for e in events) == 2 * 340
    assert family.spent.requests == sum(e.requests for e in events) == 4
    assert family.spent.seconds == pytest.approx(sum(e.agent_seconds for e in events))
    assert family.saved.seconds == pytest.approx(sum(e.saved_seconds for e in events))


def test_a_hit_saves_the_median_of_the_familys_runs_made_from_the_start() -> None:
    """Of runs that spent 100, 900 and 400 tokens, a hit saves 400; a resumed run is not one of them."""
    events = [
        _miss(100, at=1.0),
        _miss(900, at=2.0),
        _miss(400, at=3.0),
        _miss(20, at=4.0, steps_replayed=2),
        Event(at=5.0, task="t", task_key="k", hit=True, steps_replayed=2, tokens_saved=900),
    ]
    saved = ledger(events, PRICES).total.saved
    assert (saved.tokens, saved.input_tokens, saved.output_tokens, saved.requests) == (400, 300, 100, 1)
    assert saved.money == pytest.approx((300 * 2.0 + 100 * 8.0) / 1e6)


def test_a_hit_of_a_family_with_no_run_in_the_events_saves_its_trajectorys_recorded_tokens() -> None:
    """With the family's runs gone from the events, a hit saves what its event says, and no money."""
    events = [Event(at=5.0, task="t", task_key="k", hit=True, steps_replayed=2, tokens_saved=900)]
    saved = ledger(events, PRICES).total.saved
    assert (saved.tokens, saved.money) == (900, 0.0)


def test_tokens_of_a_model_without_a_price_cost_nothing_and_are_named() -> None:
    """Only the models given a price count money; the others are listed as unpriced."""
    events = [_miss(400, at=1.0, model="claude-sonnet")]
    total = ledger(events, PRICES).total
    assert (total.spent.tokens, total.spent.money, total.unpriced) == (400, 0.0, ("claude-sonnet",))
    assert not ledger(events, {}).priced


def test_since_counts_later_calls_while_a_hit_still_saves_the_median_of_every_run() -> None:
    """A period's ledger counts its calls only; a hit in it saves what the family's earlier runs spent."""
    events = [_miss(400, at=1.0), Event(at=5.0, task="t", task_key="k", hit=True, tokens_saved=10)]
    total = ledger(events, PRICES, since=2.0).total
    assert (total.calls, total.hits, total.spent.tokens, total.saved.tokens) == (1, 1, 0, 400)


def test_families_rank_by_money_saved_and_by_misses() -> None:
    """``top_savings`` puts the family that saved the most first; ``top_misses`` the one that missed most."""
    events = [
        _miss(400, at=1.0, key="cheap"),
        _miss(400, at=1.5, key="cheap"),
        _miss(4000, at=2.0, key="dear"),
        Event(at=3.0, task="t", task_key="cheap", hit=True),
        Event(at=4.0, task="t", task_key="dear", hit=True),
    ]
    book = ledger(events, PRICES)
    assert [f.family for f in book.top_savings(5)] == ["dear", "cheap"]
    assert [f.family for f in book.top_misses(1)] == ["cheap"]


@pytest.mark.parametrize(
    "prices",
    [
        {"gpt-4.1": (2.0,)},
        {"gpt-4.1": (-1.0, 8.0)},
        {"gpt-4.1": (float("nan"), 8.0)},
        {"gpt-4.1": ("2", 8.0)},
    ],
)
def test_prices_must_be_two_finite_numbers_per_model(prices: Any) -> None:
    """A price is (input, output) per million tokens, finite and not negative."""
    with pytest.raises(ValueError, match=r"per million tokens|finite numbers"):
        Engine(prices=prices)


def _miss(
    tokens: int, *, at: float, key: str = "k", steps_replayed: int = 0, model: str = "gpt-4.1"
) -> Event:
    """A miss whose agent spent ``tokens``, three quarters of them input, in one request."""
    input_tokens = tokens * 3 // 4
    return Event(
        at=at,
        task="t",
        task_key=key,
        hit=False,
        steps_replayed=steps_replayed,
        miss_reason="no_trajectory",
        tokens_spent=tokens,
        usage=((model, input_tokens, tokens - input_tokens, 1),),
    )
