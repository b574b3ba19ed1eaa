"""The field's policies (libCacheSim's bindings) in the policy benchmark, and our references checked against them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cachetools")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_policies as bench
from _lib import policies_field, policies_stream
from _lib import policies_reference as ref


def _family(seeds: int = 2, length: int = 6_000) -> bench.Family:
    """Trending topics over 2,000 tasks: at 2.5 % the smallest capacity is the binding's least."""
    rows = np.random.default_rng(0).normal(size=(2_000, 16)).astype(np.float32)
    vectors = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    topics = [list(range(i, i + 20)) for i in range(0, 2_000, 20)]
    streams = [policies_stream.topics_stream(topics, vectors, seed, length) for seed in range(seeds)]
    assert min(round(bench.SHARES[0] * s.distinct) for s in streams) >= policies_field.MIN_CAPACITY
    return bench.Family("topics", "generated", [f"task {i}" for i in range(2_000)], streams)


def test_libcachesim_arc_finds_what_our_arc_finds() -> None:
    lcs = pytest.importorskip("libcachesim")
    make = policies_field.policies(lcs)["ARC"]
    for s in _family(seeds=3).streams:
        keys = s.keys.tolist()
        for capacity in (20, 60, 200):
            assert policies_field.hits(lcs, make, keys, capacity) == ref.arc(keys, capacity)


def test_every_field_policy_finds_a_share_of_the_requests_below_belady() -> None:
    lcs = pytest.importorskip("libcachesim")
    keys = _family(seeds=1).streams[0].keys.tolist()
    bound = ref.belady(keys, 40)
    for name, make in policies_field.policies(lcs).items():
        assert 0 < policies_field.hits(lcs, make, keys, 40) <= bound, name


def test_a_capacity_the_binding_cannot_simulate_is_refused_with_a_clear_error() -> None:
    lcs = pytest.importorskip("libcachesim")
    make = policies_field.policies(lcs)["S3-FIFO (threshold 1, the paper's)"]
    with pytest.raises(ValueError, match="from 20 objects up, not 10"):
        policies_field.hits(lcs, make, [1, 2, 3], 10)


def test_the_field_table_holds_each_policy_to_the_bar_and_checks_the_references(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lcs = pytest.importorskip("libcachesim")
    bench.field_table([_family()], jobs=1)
    out = capsys.readouterr().out
    summary = out.split("Summary against")[1]
    for name in policies_field.policies(lcs):
        assert f"libCacheSim {name}" in summary
    assert "libCacheSim's ARC finds what ours finds in 8 of 8 runs" in out


def test_without_libcachesim_the_field_table_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "libcachesim", None)  # an import of it now raises ImportError
    bench.field_table([_family()], jobs=1)
    assert capsys.readouterr().out.strip() == (
        f"The field's policies need libCacheSim's bindings: {policies_field.INSTALL}"
    )
