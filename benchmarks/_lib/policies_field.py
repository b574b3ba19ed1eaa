"""The field's eviction policies, from libCacheSim's Python bindings, replayed key by key on a stream.

libCacheSim (``pip install -e '.[field]'``) is the simulator the S3-FIFO, SIEVE and GL-Cache papers
were measured with; its bindings implement the policies of the literature in C. Each request is one
object of size 1, so a policy's capacity is a number of tasks, as in the benchmark's references.
The extra is optional: the wheel bundles its C libraries and requires ``boto3``, about 80 MiB in all.

Left out, each for a fault of the binding on these streams (libcachesim 0.3.5): ``ClockPro`` (233
hits where LRU has 5,348 on an AgentDojo stream), ``LFUDA`` (does not return within 5 minutes on an
AgentDojo stream at 37 entries), ``GLCache`` (segments of 100 objects, more than most capacities
here). W-TinyLFU's window is kept at one object or more: the binding rounds a 1 % window of fewer
than 100 entries to none and then admits nothing. LRB and 3L-Cache learn from a longer history than
these streams hold: on 10,000 requests they stay in their warm-up and find what LRU finds.
LeCaR, CACHEUS, LHD and Hyperbolic draw unseeded random numbers in the binding: their hits move
from run to run, every other policy's do not.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

INSTALL = "pip install -e '.[field]'"
MIN_CAPACITY = 20
"""The smallest capacity simulated: below it the binding's S3-FIFO caches nothing and some policies abort."""
HASHPOWER = 16
"""log2 of each simulated cache's hash table (the binding's default, 24, allocates 16 M buckets a cache)."""


def library() -> ModuleType | None:
    """The ``libcachesim`` module, or None when it is not installed."""
    try:
        return importlib.import_module("libcachesim")
    except ImportError:
        return None


def policies(lcs: ModuleType) -> dict[str, Callable[[int], Any]]:
    """Each policy's name and a constructor taking the capacity in objects."""

    def make(cls: str, **params: Any) -> Callable[[int], Any]:
        return lambda c: getattr(lcs, cls)(c, hashpower=HASHPOWER, **params)

    return {
        "ARC": make("ARC"),
        "S3-FIFO (threshold 1, the paper's)": make("S3FIFO", move_to_main_threshold=1),
        "S3-FIFO (threshold 2, its default)": make("S3FIFO"),
        "LRU": make("LRU"),
        "CLOCK": make("Clock"),
        "SIEVE": make("Sieve"),
        "2Q": make("TwoQ"),
        "SLRU": make("SLRU"),
        "MQ": make("MQ"),
        "LRU-K": make("LRUK"),
        "LIRS": make("LIRS"),
        "LeCaR": make("LeCaR"),
        "CACHEUS": make("Cacheus"),
        "W-TinyLFU": lambda c: lcs.WTinyLFU(c, hashpower=HASHPOWER, window_size=max(0.01, 1.0 / c)),
        "LHD": make("LHD"),
        "Hyperbolic": make("Hyperbolic"),
        "GDSF": make("GDSF"),
        "LRB": make("LRB", objective="object-miss-ratio"),
        "3L-Cache": make("ThreeLCache", objective="object-miss-ratio"),
    }


def hits(lcs: ModuleType, make: Callable[[int], Any], keys: Sequence[int], capacity: int) -> int:
    """Requests of ``keys`` found in a cache of ``capacity`` objects built by ``make``; one request a second."""
    if capacity < MIN_CAPACITY:
        raise ValueError(
            f"libCacheSim's policies are simulated from {MIN_CAPACITY} objects up, not {capacity}"
        )
    cache = make(capacity)
    request = lcs.Request()
    request.obj_size = 1
    found = 0
    for second, key in enumerate(keys):
        request.obj_id = key + 1  # the binding reserves id 0
        request.clock_time = second
        found += bool(cache.get(request))
    return found
