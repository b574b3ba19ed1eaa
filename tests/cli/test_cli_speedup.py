"""The demo's speed-up reads sensibly: a plain ratio, capped on a fully cached run, absent when unknown."""

from __future__ import annotations

import pytest

from muscle_mem.cli.phrases import RATIO_CAP, speedup


@pytest.mark.parametrize(
    ("slow", "fast", "text"),
    [
        (3.2, 1.0, "3.2x"),
        (45.4, 1.0, "45x"),
        (RATIO_CAP, 1.0, "1000x"),
        (20.0, 20.0 / 4552.4, ">1000x"),
        (20.0, 0.0, ""),
        (0.0, 1.0, ""),
    ],
)
def test_a_speedup_is_capped_and_rounded_to_what_it_means(slow: float, fast: float, text: str) -> None:
    """Above :data:`RATIO_CAP` the ratio is ``>1000x``, not a four-digit figure made of timer noise."""
    assert speedup(slow, fast) == text
