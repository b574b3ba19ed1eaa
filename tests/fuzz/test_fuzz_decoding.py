"""Fuzzing the decoders alone: hostile data is refused with the codec's or the record's own error, inertly.

Many more examples than the store-level suite, as nothing here touches a store: whatever JSON a row
holds, :func:`codec.decode` raises only :class:`CodecError`, :func:`from_record` only
:class:`RecordError`, a decoded value can be encoded again, and nothing is imported, opened or run.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from row_strategies import HOSTILE, VALUES, mutated

from hostile_rows import ROWS, audited
from muscle_mem.model import codec
from muscle_mem.model.provenance import Const, Output, Param, Template, Text
from muscle_mem.model.trajectory import RecordError, Snapshot, Step, Trajectory, from_record, to_record
from muscle_mem.stores import _records

FAST = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
RECORD = to_record(
    Trajectory(
        task_key="k",
        task="t",
        steps=(
            Step("a", "1", args=(Const("hello"), Param("p")), pre=Snapshot.capture({"state": 1})),
            Step(
                "b", "1", args=(Output(0, (("key", "id"), ("item", 0))), Template((Text("n "), Param("p"))))
            ),
        ),
        result=Output(1),
    )
)


@FAST
@given(HOSTILE)
def test_decoding_hostile_data_raises_only_codec_errors_and_runs_nothing(data: Any) -> None:
    with audited() as events:
        try:
            value = codec.decode(data)
        except codec.CodecError:
            value = None
        else:
            codec.encode(value)  # whatever decodes is a value the codec can store again
    assert events == []


@FAST
@given(VALUES)
def test_every_kind_of_value_decodes_as_it_was_encoded_and_runs_nothing(value: Any) -> None:
    data = json.loads(json.dumps(codec.encode(value)))
    with audited() as events:
        back = codec.decode(data)
    assert events == [] and codec.fingerprint(back) == codec.fingerprint(value)


@FAST
@given(st.data())
def test_reading_a_hostile_record_raises_only_record_errors_and_runs_nothing(data: st.DataObject) -> None:
    record = mutated(json.loads(json.dumps(RECORD)), data)
    with audited() as events, contextlib.suppress(RecordError):
        from_record(record)
    assert events == []


def test_the_hand_made_rows_are_read_inertly() -> None:
    for kind, (make, refused) in ROWS.items():
        with audited() as events:
            loaded = _records.loads(make(json.loads(json.dumps(RECORD))), kind, RECORD["task_key"], "test")
        assert events == [] and (loaded is None) == refused, kind
