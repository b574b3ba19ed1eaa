"""What a step's output showed: its leaves, the key they are compared by, and the record that keeps them."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from muscle_mem.model import _run_observations as run_observations
from muscle_mem.model._evidence import uncovered
from muscle_mem.model._leaf_kinds import text_kind
from muscle_mem.model._observations import (
    MAX_LEAVES,
    Observation,
    Observer,
    kept_leaves,
    key_of,
)
from muscle_mem.model._run_observations import observe_run
from muscle_mem.model.provenance import Const, Output, Param
from muscle_mem.model.trajectory import Step, Trajectory, from_record, to_record

NONE: frozenset[str] = frozenset()


def key(output: Any, identities: frozenset[str] = NONE, params: dict[str, Any] | None = None) -> str:
    observer = Observer(params or {})
    if params:
        observer.flatten_params()
    return key_of(observer.flatten(0, output), identities)


@dataclasses.dataclass
class Parcel:
    weight: float
    label: str


OUTPUTS: list[Any] = [
    7,
    -2.5,
    "delivered",
    "usr_41",
    "The parcel arrived damaged.",
    "2026-12-04",
    "2026-12-04T10:01:11Z",
    "13.38",
    True,
    None,
    b"\x00raw",
    uuid.UUID(int=7),
    dt.date(2024, 5, 5),
    [],
    {},
    {"id": 1001, "status": "refunded", "amount": 50, "items": [{"sku": "A-1"}, {"sku": "B-2"}]},
    Parcel(1.5, "fragile"),
    [float("inf"), float("nan")],
]


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: type(o).__name__)
def test_every_kind_of_output_is_kept_in_a_record_that_reads_back(output: Any) -> None:
    given, observed = observe_run({"qty": 3}, [output], [Param("qty")], Const("done"), [], [])
    step = Step("t", "1", (Param("qty"),), observed=observed[0], given=given)
    trajectory = Trajectory(task_key="k", steps=(step,))
    assert from_record(json.loads(json.dumps(to_record(trajectory)))) == trajectory


def test_key_order_is_not_an_observation() -> None:
    assert key({"a": 1, "b": 2}) == key({"b": 2, "a": 1})


def test_float_noise_is_equal_and_nothing_wider_is() -> None:
    assert key({"rate": 0.1 + 0.2}) == key({"rate": 0.3})
    assert key({"rate": 0.3}) != key({"rate": 0.3000001})


def test_a_value_a_list_length_or_a_new_key_changes_the_key() -> None:
    recorded = key({"status": "delivered", "items": [1, 2]})
    assert key({"status": "refunded", "items": [1, 2]}) != recorded
    assert key({"status": "delivered", "items": [1, 2, 3]}) != recorded
    assert key({"status": "delivered", "items": [1, 2], "hold": True}) != recorded


def test_an_identity_is_masked_by_what_it_equals() -> None:
    ids = frozenset({"['owner']", "['author']"})
    same = key({"owner": "u-1", "author": "u-1"}, ids)
    assert key({"owner": "u-2", "author": "u-2"}, ids) == same  # another user, the same relation
    assert key({"owner": "u-2", "author": "u-3"}, ids) != same  # the author is no longer the owner


def test_an_identifiers_prefix_is_part_of_what_it_names() -> None:
    ids = frozenset({"['id']"})
    assert key({"id": "usr_41"}, ids) == key({"id": "usr_52"}, ids)
    assert key({"id": "usr_41"}, ids) != key({"id": "svc_9"}, ids)


def test_an_output_repeating_a_bound_param_is_masked() -> None:
    def seen(order: int) -> str:
        observer = Observer({"order": order})
        observer.flatten_params()
        observer.free_params(["order"])
        return key_of(observer.flatten(0, {"order_id": order, "note": f"refund of order {order}"}), NONE)

    assert seen(1001) == seen(1003)


def test_a_copied_identity_is_masked_and_an_unbound_param_is_not() -> None:
    given, observed = observe_run(
        {"qty": 2},
        [{"id": "TCK-1", "amount": 80}],
        [Output(0, (("key", "id"),)), Const(80)],
        Const(None),
        [],
        [],
    )
    assert given is not None and given.identities == NONE  # qty is bound to nothing: compared by value
    assert observed[0].identities == {"['id']"}  # the ticket id flows on: free
    assert ("['amount']", "n", 80, "") in observed[0].leaves


def test_a_number_param_copied_beside_a_constant_is_not_free() -> None:
    given, _ = observe_run({"nights": 2}, ["booked"], [Param("nights"), Const(2)], Const(None), [], [])
    assert given is not None and given.identities == NONE


def test_secrets_are_masked_and_never_kept() -> None:
    _, observed = observe_run({}, [{"token": "hunter22"}], [], Const(None), ["hunter22"], [])
    assert observed[0].leaves == (("['token']", "#", None, "secret"),)


def test_texts_that_may_name_a_person_or_hold_prose_are_kept_as_digests() -> None:
    _, observed = observe_run(
        {}, [{"body": "Dear Maria, your refund", "ref": "c-9"}], [], Const(None), [], []
    )
    kept = {path: (kind, value) for path, kind, value, _ in observed[0].leaves}
    assert kept["['body']"][0] == "p" and "Maria" not in str(kept["['body']"][1])
    assert kept["['ref']"][0] == "i" and "c-9" not in str(kept["['ref']"][1])


def test_a_value_under_a_key_that_names_it_is_an_identity_and_nothing_of_it_is_kept() -> None:
    _, observed = observe_run({}, [{"customer_id": "c-9", "name": "Maria Lopez"}], [], Const(None), [], [])
    assert observed[0].identities == {"['customer_id']", "['name']"}
    assert all(value is None for _, _, value, _ in observed[0].leaves)


def test_past_the_bound_leaves_are_folded_into_one_digest() -> None:
    flat = Observer({}).flatten(0, list(range(MAX_LEAVES + 10)))
    leaves = kept_leaves(flat, NONE)
    assert len(leaves) == MAX_LEAVES + 1 and leaves[-1][1] == "x"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("usr_41", "i"),
        ('W/"1b7e1a01"', "i"),
        ("/srv/home/ada-01", "i"),
        ("ada@x.io", "i"),
        ("delivered", "w"),
        ("in_progress", "p"),
        ("2026-12-04", "d"),
        ("2026-12-04T10:01:11Z", "s"),
        ("13.38", "q"),
        ("Resolved, thanks!", "p"),
    ],
)
def test_texts_are_told_apart_by_their_shape(text: str, kind: str) -> None:
    assert text_kind(text) == kind


def _history(*outputs: Any) -> tuple[Observation | None, ...]:
    _, observed = observe_run({}, list(outputs), [], Const(None), [], [])
    return (None, *observed)


def _live(*outputs: Any) -> list[tuple[Any, ...]]:
    observer = Observer({})
    return [(), *(kept_leaves(observer.flatten(i, o), NONE) for i, o in enumerate(outputs))]


NAMES = ["the params", "step 0 lookup", "step 1 balance"]


def test_one_run_covers_only_what_it_saw() -> None:
    runs = [_history({"amount": 50, "status": "delivered"})]
    assert uncovered(_live({"amount": 50, "status": "delivered"}), runs, NAMES) is None
    assert uncovered(_live({"amount": 55, "status": "delivered"}), runs, NAMES) == (
        "step 0 lookup output['amount']: 55, recorded 50"
    )


def test_runs_that_went_on_alike_cover_the_range_and_the_values_they_saw() -> None:
    runs = [_history({"amount": 50, "tier": "gold"}), _history({"amount": 80, "tier": "gold"})]
    assert uncovered(_live({"amount": 65, "tier": "gold"}), runs, NAMES) is None
    assert "5000" in str(uncovered(_live({"amount": 5000, "tier": "gold"}), runs, NAMES))
    assert "'bronze'" in str(uncovered(_live({"amount": 60, "tier": "bronze"}), runs, NAMES))


def test_a_number_is_covered_by_the_runs_that_saw_its_category() -> None:
    """Silver was seen at 80 only, gold at 50: silver at 65 lies in the range of both, not of silver's."""
    runs = [_history({"amount": 50, "tier": "gold"}), _history({"amount": 80, "tier": "silver"})]
    assert uncovered(_live({"amount": 80, "tier": "silver"}), runs, NAMES) is None
    why = uncovered(_live({"amount": 65, "tier": "silver"}), runs, NAMES)
    assert why is not None and "where the runs saw what the replay saw with it" in why


def test_a_timestamp_or_an_identifier_that_varied_is_free() -> None:
    runs = [_history({"at": "2026-12-04T10:01:11Z"}), _history({"at": "2026-12-04T10:02:12Z"})]
    assert uncovered(_live({"at": "2026-12-05T08:00:00Z"}), runs, NAMES) is None


def test_an_order_that_held_in_every_run_must_hold() -> None:
    runs = [
        _history({"amount": 50}, {"balance": 100}),
        _history({"amount": 80}, {"balance": 200}),
        _history({"amount": 30}, {"balance": 60}),
    ]
    assert uncovered(_live({"amount": 60}, {"balance": 150}), runs, NAMES) is None
    why = uncovered(_live({"amount": 70}, {"balance": 65}), runs, NAMES)  # each in range; the order flipped
    assert why is not None and "their order changed" in why


@pytest.mark.parametrize(
    ("runs", "harmless", "flipped", "relation"),
    [
        (  # base + fee within the limit
            [{"base": 10, "fee": 20, "limit": 31}, {"base": 15, "fee": 18, "limit": 40}],
            {"base": 12, "fee": 19, "limit": 36},
            {"base": 15, "fee": 20, "limit": 31},
            ("the sum of",),
        ),
        (  # price / qty under the unit cap
            [{"price": 100, "qty": 10, "cap": 12}, {"price": 90, "qty": 5, "cap": 20}],
            {"price": 95, "qty": 8, "cap": 15},
            {"price": 100, "qty": 5, "cap": 12},
            ("the ratio of",),
        ),
        (  # ordered == shipped + returned
            [{"ordered": 10, "shipped": 6, "returned": 4}, {"ordered": 20, "shipped": 15, "returned": 5}],
            {"ordered": 15, "shipped": 10, "returned": 5},
            {"ordered": 15, "shipped": 8, "returned": 4},
            ("the sum of", "the difference of"),  # either way round: ordered - returned == shipped
        ),
    ],
)
def test_a_combination_of_two_numbers_keeps_its_side_of_a_third(
    runs: list[dict[str, Any]], harmless: dict[str, Any], flipped: dict[str, Any], relation: tuple[str, ...]
) -> None:
    """Each number lies within its range and each pair keeps its order, yet a sum or ratio crossed a third."""
    histories = [_history(output) for output in runs]
    assert uncovered(_live(harmless), histories, NAMES) is None
    why = uncovered(_live(flipped), histories, NAMES)
    assert why is not None and why.startswith(relation) and "its order changed" in why


def test_two_values_each_seen_cover_only_the_pairs_seen_together() -> None:
    """An intern seen with public documents and a manager with confidential ones: not an intern with confidential."""
    runs = [
        _history({"role": "intern", "class": "public"}),
        _history({"role": "manager", "class": "confidential"}),
    ]
    assert uncovered(_live({"role": "manager", "class": "confidential"}), runs, NAMES) is None
    why = uncovered(_live({"role": "intern", "class": "confidential"}), runs, NAMES)
    assert why is not None and "never together" in why


def test_a_lists_length_keeps_its_side_of_a_number() -> None:
    """Booked plus the seats asked for within the capacity: each in range, the sum past it."""
    runs = [
        _history({"booked": 2, "capacity": 7, "seats": [11, 12]}),
        _history({"booked": 5, "capacity": 9, "seats": [11, 12, 13]}),
    ]
    assert uncovered(_live({"booked": 3, "capacity": 8, "seats": [11, 12]}), runs, NAMES) is None
    why = uncovered(_live({"booked": 5, "capacity": 7, "seats": [11, 12, 13]}), runs, NAMES)
    assert why is not None and "the length of step 0 lookup output['seats']" in why


def test_past_the_bound_of_numbers_combined_a_replay_stops() -> None:
    """Too many numbers that differ to weigh every combination against every third: not covered."""
    runs = [_history({f"n{i}": i for i in range(30)}), _history({f"n{i}": i + 100 for i in range(30)})]
    why = uncovered(_live({f"n{i}": i + 50 for i in range(30)}), runs, NAMES)
    assert why is not None and "whose combinations are compared" in why


def test_a_json_text_is_compared_by_what_it_holds() -> None:
    """A tool that answers JSON text is compared value by value, as the record it holds."""
    runs = [
        _history(json.dumps({"qty": 2, "status": "open"})),
        _history(json.dumps({"qty": 4, "status": "open"})),
    ]
    assert uncovered(_live(json.dumps({"qty": 3, "status": "open"})), runs, NAMES) is None
    assert (
        uncovered(_live(json.dumps({"status": "open", "qty": 3})), runs, NAMES)
        == (
            "step 0 lookup output.keys(): another value, recorded another value"  # read in order, as a reader reads it
        )
    )
    assert uncovered(_live(json.dumps({"qty": 9, "status": "open"})), runs, NAMES) == (
        "step 0 lookup output['qty']: 9, recorded one of 2, 4"
    )
    assert "'closed'" in str(uncovered(_live(json.dumps({"qty": 3, "status": "closed"})), runs, NAMES))


@pytest.mark.parametrize(
    "text",
    ['{"approved": true, "approved": false}', '{"score": NaN}', '{"n": 1e2}'],
)
def test_a_json_text_a_reader_could_read_otherwise_than_its_parse_is_compared_whole(text: str) -> None:
    """A key written twice, a number in another notation than it reads back in, NaN: the text, not the parse."""
    flat = Observer({}).flatten(0, text)
    assert [leaf[0] for leaf in flat.leaves] == [""]


def test_a_json_decimal_is_compared_as_written() -> None:
    """``19.90`` is an amount (a request id beside it may vary); ``2.10`` is not ``2.1``."""
    leaves = Observer({}).flatten(0, '{"total": 19.90}').leaves
    assert [(leaf[0], leaf[1], leaf[2]) for leaf in leaves if leaf[0] == "['total']"] == [
        ("['total']", "q", 19.9)
    ]
    runs = [_history('{"version": 2.10, "id": "r1"}'), _history('{"version": 2.10, "id": "r2"}')]
    assert uncovered(_live('{"version": 2.10, "id": "r3"}'), runs, NAMES) is None
    assert uncovered(_live('{"version": 2.1, "id": "r3"}'), runs, NAMES) is not None


def test_a_json_text_with_white_space_around_it_is_a_record() -> None:
    flat = Observer({}).flatten(0, json.dumps({"status": "ready"}) + "\n")
    assert "['status']" in [leaf[0] for leaf in flat.leaves]


def test_a_text_that_only_looks_like_json_is_compared_whole() -> None:
    runs = [_history("[see the attached list]"), _history("[see the list below]")]
    assert uncovered(_live("[see another list]"), runs, NAMES) is not None


def test_an_equality_that_held_in_every_run_must_hold() -> None:
    runs = [_history({"a": "x1", "b": "x1"}, {}), _history({"a": "y2", "b": "y2"}, {})]
    assert uncovered(_live({"a": "z3", "b": "z3"}, {}), runs, NAMES) is None
    why = uncovered(_live({"a": "z3", "b": "w4"}, {}), runs, NAMES)  # free ids, judged by what they equal
    assert why is not None and "output['b']" in why


def test_a_path_no_run_had_or_one_every_run_had_gone_is_not_covered() -> None:
    runs = [_history({"status": "paid", "hold": False})]
    assert "in no recorded run" in str(
        uncovered(_live({"status": "paid", "hold": False, "x": 1}), runs, NAMES)
    )
    assert uncovered(_live({"status": "paid"}), runs, NAMES) == (
        "step 0 lookup output['hold']: gone, recorded in every run"
    )


def test_a_run_recorded_before_observations_covers_nothing() -> None:
    assert uncovered(_live({"a": 1}), [(None, None)], NAMES) is not None


def test_a_value_two_params_share_is_named_by_the_first_param_in_name_order() -> None:
    """What a masked value repeats does not depend on the order a set of names iterates in."""
    for params in (
        {"b": "Lunch at noon", "a": "Lunch at noon"},
        {"a": "Lunch at noon", "b": "Lunch at noon"},
    ):
        _, observed = observe_run(
            params, [{"title": "Lunch at noon"}], [Param("a"), Param("b")], Const(None), [], []
        )
        assert observed[0].leaves == (("['title']", "#", None, "=p:a"),)


@pytest.mark.parametrize("seed", range(20))
def test_an_int_keyed_in_one_step_has_the_key_the_observer_gives_it(seed: int) -> None:
    """:meth:`Observer.int_key` makes of a run of int outputs exactly what flatten, key_of and free_leaves make."""
    import random

    rng = random.Random(seed)
    quick, full = Observer({}), Observer({})
    for step in range(12):
        output = rng.choice([1, 2, 3, 7, 41, 41, 1001])
        identities = frozenset({""}) if rng.random() < 0.5 else NONE
        flat = full.flatten(step, output)
        expected = key_of(flat, identities)
        full.free_leaves(step, flat, identities)
        assert quick.int_key(step, output, identities) == expected


_VALUES = st.sampled_from([0, 1, 7, 7, 41, 41, "usr_41", "svc_9", "Lunch", "ok", "13.38", "2026-12-04"])
"""Few values, so that outputs repeat params, secrets and each other."""
_SCALAR_OUTPUTS = _VALUES | st.sampled_from(
    [True, False, None, 2.5, float("nan"), b"\x00raw", "lunch at noon", "The Lunch ok", -3, 1001]
)
_OUTPUTS = st.one_of(
    _SCALAR_OUTPUTS,
    st.recursive(
        _SCALAR_OUTPUTS,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["id", "name", "total", "status", "user_id"]), inner, max_size=3
            )
        ),
        max_leaves=6,
    ),
)
_PATHS = st.sampled_from([(), (), (), (("key", "id"),), (("key", "total"),), (("item", 0),)])


@st.composite
def _runs(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any], list[Any], Any, list[Any], list[str]]:
    """A finished run's params, outputs, recorded arguments, answer, secrets and secret params."""
    params = draw(st.dictionaries(st.sampled_from(["a", "n", "who", "amount"]), _VALUES | st.just(2.5)))
    outputs = draw(st.lists(_OUTPUTS, min_size=1, max_size=6))

    def arg(before: int) -> Any:
        choices = [st.builds(Const, _VALUES)]
        if params:
            choices.append(st.builds(Param, st.sampled_from(sorted(params))))
        if before:  # outputs copied most often: what makes identities
            copied = st.builds(Output, st.integers(0, before - 1), _PATHS)
            choices += [copied, copied]
        return draw(st.one_of(choices))

    args = [arg(step) for step in range(len(outputs))]
    answer = arg(len(outputs))
    hidden = draw(st.lists(_VALUES, max_size=2))
    secret_params = draw(st.lists(st.sampled_from(sorted(params)), max_size=1)) if params else []
    return params, outputs, args, answer, hidden, secret_params


@given(_runs())
@settings(max_examples=500)
def test_a_scalar_output_is_observed_as_a_walk_of_it_observes_it(
    run: tuple[dict[str, Any], list[Any], list[Any], Any, list[Any], list[str]],
) -> None:
    """The quick observation of an output that is one scalar is the one the general walk makes, in any run."""
    quick = observe_run(*run)
    with mock.patch.object(run_observations, "_ONE_LEAF", frozenset()):
        walked = observe_run(*run)
    assert quick == walked


@given(
    st.lists(st.sampled_from([0, 1, -1, 7, 8, 10**10, 1_700_000_000]), min_size=1, max_size=6),
    st.data(),
)
@settings(max_examples=300)
def test_a_run_of_int_outputs_is_observed_as_a_walk_of_it_observes_it(
    outputs: list[int], data: st.DataObject
) -> None:
    """The observations of a run without params whose outputs are all ints, remembered, are those the walk makes."""
    args: list[Any] = [
        data.draw(st.sampled_from([Const(7), Const(1_700_000_000), Output(0), Output(step // 2)]))
        for step in range(len(outputs))
    ]
    answer = data.draw(st.sampled_from([Const(None), Output(0)]))
    literal = data.draw(st.sampled_from(["", "due monday"]))
    for _ in range(2):  # the second time from what the first remembered
        quick = observe_run({}, outputs, args, answer, [], [], literal)
        with mock.patch.object(run_observations, "_ONE_LEAF", frozenset()):
            walked = observe_run({}, outputs, args, answer, [], [], literal)
        assert quick == walked


def test_a_numpy_scalar_is_observed_as_the_python_value_it_holds() -> None:
    """A weight of ``np.float64(2.5)`` is the number 2.5 (a range covers it), not a digest of an object."""
    numpy = pytest.importorskip("numpy")
    as_numpy = Observer({}).flatten(0, {"weight": numpy.float64(2.5), "count": numpy.int64(3)})
    as_python = Observer({}).flatten(0, {"weight": 2.5, "count": 3})
    assert as_numpy.leaves == as_python.leaves
