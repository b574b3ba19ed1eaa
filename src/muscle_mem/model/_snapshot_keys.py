"""The hash an equality check compares a snapshot by, remembered for recent scalars.

Both the replay (a snapshot captured before a step) and the trajectory's build (the snapshots a run
recorded) key snapshots this way, so a value hashed by one is not hashed again by the other.
"""

from __future__ import annotations

from typing import Any

from muscle_mem.model import codec

RECENT_KEYS: dict[tuple[type, Any], str] = {}
"""Hashes of recent scalar snapshots, by type and value (floats left out: 0.0 == -0.0, two hashes)."""
KEYS_KEPT = 4096
MEMO_KINDS = frozenset({int, bool, str, type(None)})
"""The types whose snapshots :data:`RECENT_KEYS` may hold (a dict lookup hashes the value: these all can)."""
MEMO_TEXT = 1024
"""Texts longer than this are hashed each time (not kept alive by the memo)."""


def snapshot_key(value: Any) -> str:
    """``codec.fingerprint(value)``, remembered for recent ints, bools, None and short texts.

    Raises :class:`codec.CodecError` for a value that cannot be hashed.
    """
    kind = type(value)
    if kind is int or kind is bool or value is None or (kind is str and len(value) <= MEMO_TEXT):
        memo = (kind, value)
        key = RECENT_KEYS.get(memo)
        if key is None:
            key = codec.fingerprint(value)
            if len(RECENT_KEYS) >= KEYS_KEPT:
                RECENT_KEYS.clear()
            RECENT_KEYS[memo] = key
        return key
    return codec.fingerprint(value)
