"""Words and numbers from outputs and params inside later strings, found in a review of the output
templates: each test failed before its fix (the docstrings say what went wrong)."""

from __future__ import annotations

import itertools
import time

from muscle_mem import Engine


def test_a_small_int_param_does_not_refuse_a_run_whose_text_holds_other_digits() -> None:
    """_ArgBuilder._template refuses a run when a param's number is still ``in`` the text left after
    templating (``needle in left``, a plain substring test). For a small int param such as
    ``qty=2`` that is any other number containing the digit: ``Ordered 2 items on 2024-05-12``
    templates the whole ``2`` but ``2024-05-12`` still contains ``"2"``, so the run is Unreplayable
    and never cached (it was stored before these commits). Fix: look for the number in another
    form with a pattern (e.g. ``whole_number``-like with an optional decimal tail:
    ``(?<![\\w.])2(\\.0+)?(?![\\w.]|\\.\\d)`` / a float-equal check of each number found by
    ``_NUMBER``), not a substring test."""
    engine = Engine()
    orders: list[int] = []

    @engine.tool()
    def order(qty: int) -> str:
        orders.append(qty)
        return "ok"

    def agent(task: str, qty: int) -> str:
        order(qty)
        return f"Ordered {qty} items on 2024-05-12"

    engine.set_agent(agent)
    first = engine("order", 2, params={"qty": 2})
    assert first.stored, "a run with qty=2 and a date in its answer was refused"


def test_an_answer_echoing_a_capitalised_status_is_still_cached() -> None:
    """_Provenance.add_output puts every capitalised letters-only output (``Shipped``, ``Active``,
    ``Pending``) in ``words``, and _template refuses any later string containing one: the common
    ``return f"Order status: {status(order_id)}"`` is never cached (before these commits it was
    stored as a template of that output, which replays the fresh status correctly). Fix: a word that
    came from an output and is met in a later string could be a template part of that output when
    the output *is* a whole value of the step (path ``()``/a status field) — or at least only
    refuse multi-candidate cases; the echo of a tool's whole return value is data flow, not a
    coincidence."""
    engine = Engine()
    statuses = itertools.chain(["Shipped"], itertools.repeat("Delivered"))

    @engine.tool()
    def status(order_id: str) -> str:
        return next(statuses)

    def agent(task: str) -> str:
        return f"Order status: {status('A-1')}"

    engine.set_agent(agent)
    first = engine("where is my order")
    assert first.stored, "an answer echoing the tool's status was refused"
    second = engine("where is my order")  # the status changed: a miss (the guard), never the old text
    assert second.output == "Order status: Delivered" and not second.hit
    assert engine("where is my order").hit  # the same status again: a replay, with the same text


def test_many_capitalised_output_words_do_not_make_building_quadratic_in_regexes() -> None:
    """_template runs ``whole_word(word).search(left)`` for *every* word in ``provenance.words``
    on every string built, compiling a regex each time with no ``word in left`` pre-filter (the
    ``re`` cache holds 512 patterns). 30 searches returning 500 distinct names each, each followed by
    a string argument, take seconds to store (100 searches: ~99 s here, ~1 s before these
    commits). Fix: test ``word in left`` first (as is done for ``texts``), or scan ``left``'s words
    once (``re.findall(r"[^\\W\\d_]+", left)``) and look them up in ``words``."""
    engine = Engine()

    @engine.tool()
    def search(q: str) -> list[str]:
        out = []
        for i in range(500):
            s, k = "", i + 1000 * int(q.split()[-1])
            while k:
                s += chr(97 + k % 26)
                k //= 26
            out.append("N" + s)
        return out

    def agent(task: str) -> str:
        for i in range(30):
            search(f"query number {i}")
        return "done"

    engine.set_agent(agent)
    start = time.perf_counter()
    result = engine("search everything")
    seconds = time.perf_counter() - start
    assert result.stored
    assert seconds < 2.0, f"storing a 30-step run took {seconds:.1f} s"


def test_a_lower_case_status_echoed_in_a_later_string_is_not_replayed_stale() -> None:
    """Since 1983f68 a letters-only lower-case output (``shipped``) is neither a template text
    nor a refusing ``word``: ``f"Your order has {status}"`` is stored as a constant, and the hit
    for an order now ``pending`` answers ``Your order has shipped``: a wrong replay (before these
    commits it was an output part and replayed the fresh status). A wrong replay is worse than a
    miss: a lower-case output word met as a whole word in a later string should refuse the run like
    a capitalised one (the ``Thanks for your business!`` case then misses instead of templating)."""
    engine = Engine()
    statuses = iter(["shipped", "pending", "pending"])

    @engine.tool()
    def status(order_id: str) -> str:
        return next(statuses)

    def agent(task: str) -> str:
        return f"Your order has {status('A-1')}"

    engine.set_agent(agent)
    engine("where is my order")
    second = engine("where is my order")
    assert second.output in ("Your order has pending",), f"replayed {second.output!r}"
