"""The hashes a replay compares equality snapshots by, remembered for recent scalars."""

from __future__ import annotations

import pytest

from muscle_mem import codec
from muscle_mem.replay import _KEYS, KEYS_KEPT, MEMO_TEXT, snapshot_key


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
    assert len(_KEYS) <= KEYS_KEPT


def test_an_unhashable_snapshot_raises_a_codec_error() -> None:
    """A snapshot the codec cannot encode has no key: CodecError, as from the codec itself."""
    with pytest.raises(codec.CodecError):
        snapshot_key(object())
