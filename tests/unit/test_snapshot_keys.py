"""The hashes a replay compares equality snapshots by, remembered for recent scalars."""

from __future__ import annotations

import pytest

from muscle_mem.model import codec
from muscle_mem.model._snapshot_keys import KEYS_KEPT, MEMO_TEXT, RECENT_KEYS, snapshot_key


@pytest.mark.parametrize(
    "value",
    [
        0,
        1,
        -1,
        2**70,
        True,
        False,
        None,
        "",
        "1",
        "x" * (MEMO_TEXT + 1),
        0.0,
        -0.0,
        1.0,
        (1, "a"),
        {"k": [1]},
    ],
)
def test_a_snapshot_key_is_the_codec_fingerprint(value: object) -> None:
    """Twice in a row (the second from the memo), the key is the codec's fingerprint of the value."""
    assert snapshot_key(value) == codec.fingerprint(value)
    assert snapshot_key(value) == codec.fingerprint(value)


def test_equal_values_of_other_types_keep_their_own_keys() -> None:
    """1, True, 1.0 and "1" compare or hash alike in Python, yet have four keys; so do 0.0 and -0.0."""
    keys = {snapshot_key(v) for v in (1, True, 1.0, "1")}
    assert len(keys) == 4
    assert snapshot_key(0.0) != snapshot_key(-0.0)
    assert snapshot_key(-0.0) == codec.fingerprint(-0.0)


def test_the_memo_stays_bounded() -> None:
    """However many snapshots a process sees, the memo keeps at most its bound."""
    for i in range(KEYS_KEPT * 2 + 5):
        snapshot_key(i)
    assert len(RECENT_KEYS) <= KEYS_KEPT


def test_an_unhashable_snapshot_raises_a_codec_error() -> None:
    """A snapshot the codec cannot encode has no key: CodecError, as from the codec itself."""
    with pytest.raises(codec.CodecError):
        snapshot_key(object())


def test_a_recorded_equality_snapshot_is_the_codec_fingerprint_of_its_own_value() -> None:
    """A run's equality snapshots, hashed once per equal int or str, keep each value's own key."""
    from muscle_mem import Check
    from muscle_mem.record._dataflow import _Snapshots
    from muscle_mem.record._run import Call

    check = Check.equal(lambda: None)
    call = Call("tool", (), {}, None, False)
    snapshots = _Snapshots()
    values = [1, True, 1.0, "1", 0.0, -0.0, 1, "1", True, 2**70, (1, "a")]
    for value in values:
        snapshot = snapshots.of(value, check, 0, call, "pre")
        assert snapshot is not None and not snapshot.kept
        assert snapshot.key == codec.fingerprint(value)
