"""The ``mode`` and ``proof`` options: bad values are refused before any store is opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Engine


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "fast"}, "mode must be one of 'replay', 'shadow', 'proven', 'frozen', not 'fast'"),
        ({"mode": None}, "mode must be one of"),
        ({"mode": "proven", "proof": 0}, "proof must be a positive int"),
        ({"mode": "proven", "proof": 2.5}, "proof must be a positive int"),
        ({"mode": "proven", "proof": True}, "proof must be a positive int"),
        ({"mode": "frozen", "ttl": 60.0}, "cannot expire trajectories"),
    ],
)
def test_a_bad_mode_is_a_value_error_and_no_store_is_made(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Engine(f"sqlite:///{tmp_path / 'cache.db'}", **options)
    assert list(tmp_path.iterdir()) == []


def test_each_mode_is_kept_and_shown() -> None:
    for mode in ("replay", "shadow", "proven", "frozen"):
        engine = Engine(mode=mode)  # type: ignore[arg-type]
        assert engine.mode == mode
        assert (f"mode={mode!r}" in repr(engine)) is (mode != "replay")
    assert Engine(mode="proven", proof=5).proof == 5
