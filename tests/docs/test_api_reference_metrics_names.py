"""The API reference's table of ``engine.metrics`` names what the class has: properties without parentheses."""

from __future__ import annotations

import re
from pathlib import Path

from muscle_mem.metrics import Metrics

API_REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _listed_names() -> list[str]:
    row = next(
        line for line in API_REFERENCE.read_text().splitlines() if line.startswith("| `engine.metrics`:")
    )
    return re.findall(r"`([^`]+)`", row.split("|")[1])[1:]


def test_the_api_reference_writes_each_metric_as_the_code_reads_it() -> None:
    """A name written with ``()`` is a method; one written without is a value, such as ``hit_rate``."""
    metrics = Metrics(hits=3, misses=1)
    names = _listed_names()
    assert "hit_rate" in names
    for name in names:
        attribute = getattr(metrics, name.removesuffix("()"))
        assert callable(attribute) == name.endswith("()"), name
    assert metrics.hit_rate == 0.75
