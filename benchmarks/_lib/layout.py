"""Names the benchmarks read from inside muscle-mem, from this code or from a release laid out before 0.4.0."""

from __future__ import annotations

import importlib
from typing import Any


def trajectory_module() -> Any:
    """``muscle_mem.model.trajectory``, or ``muscle_mem.trajectory`` in code from before the modules moved into rooms."""
    try:
        return importlib.import_module("muscle_mem.model.trajectory")
    except ImportError:
        return importlib.import_module("muscle_mem.trajectory")
