"""Streams of agent requests with topic drift, recurrence and paraphrase, built from real task texts.

Tasks are the bfcl-eval user requests, grouped into topics by k-means on their embeddings. A stream
mixes three kinds of request:

- topical (60 %): from one of 3 active topics, by Zipf popularity inside the topic; every
  ``phase`` requests the oldest active topic is replaced by a random one (drift);
- routine (25 %): a Zipf-popular task from all topics (recurrence over the whole run);
- one-off (15 %): a uniformly random task (mostly cold).

Half the requests are paraphrased (a different request framing), which changes their text and
embedding but not the task they ask for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from muscle_mem.embed import Embedder

Vectors = npt.NDArray[np.float32]
FRAMES = ("{}", "Please {}", "Can you {}?", "Could you {}, please?", "I need you to {}.", "{} Thanks!")


@dataclass(frozen=True)
class Tasks:
    texts: list[str]
    variants: list[list[str]]
    """Each task's texts: the original first, then its paraphrases."""
    vectors: Vectors
    """Embedding of each task's original text."""
    variant_vectors: list[Vectors]
    topics: npt.NDArray[np.int64]


@dataclass(frozen=True)
class Stream:
    keys: npt.NDArray[np.int64]
    """The task of each request."""
    queries: Vectors
    """The embedding of each request's text (a paraphrase for half of them)."""
    relevance: npt.NDArray[np.float64]
    """Cosine (clipped at 0) of each request's task with the recent requests before it."""
    distinct: int


def paraphrases(text: str, count: int, rng: np.random.Generator) -> list[str]:
    core = text.strip().rstrip(".?!")
    core = core[0].lower() + core[1:] if core[:1].isupper() and core[1:2].islower() else core
    frames = rng.choice(len(FRAMES) - 1, size=count, replace=False) + 1
    return [FRAMES[f].format(core) for f in frames]


def kmeans(vectors: Vectors, k: int, rng: np.random.Generator, rounds: int = 25) -> npt.NDArray[np.int64]:
    centres = vectors[rng.choice(len(vectors), size=k, replace=False)]
    labels = np.zeros(len(vectors), dtype=np.int64)
    for _ in range(rounds):
        labels = np.argmax(vectors @ centres.T, axis=1)
        for c in range(k):
            members = vectors[labels == c]
            if len(members):
                centre = members.mean(axis=0)
                centres[c] = centre / max(float(np.linalg.norm(centre)), 1e-12)
    return labels


def tasks(texts: list[str], embedder: Embedder, topics: int = 40, variants: int = 2) -> Tasks:
    rng = np.random.default_rng(0)
    all_variants = [[t, *paraphrases(t, variants, rng)] for t in texts]
    flat = embedder.embed([v for vs in all_variants for v in vs])
    per = variants + 1
    variant_vectors = [flat[i * per : (i + 1) * per] for i in range(len(texts))]
    vectors = flat[::per].copy()
    return Tasks(texts, all_variants, vectors, variant_vectors, kmeans(vectors, topics, rng))


def _zipf(n: int, s: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    weights = 1.0 / np.arange(1, n + 1) ** s
    weights = weights[rng.permutation(n)]
    return weights / weights.sum()


def stream(
    data: Tasks, seed: int, length: int = 20_000, phase: int = 1_000, active: int = 3, memory: float = 0.8
) -> Stream:
    rng = np.random.default_rng(seed)
    n = len(data.texts)
    topic_ids = np.unique(data.topics)
    members = {int(t): np.flatnonzero(data.topics == t) for t in topic_ids}
    inside = {t: _zipf(len(m), 0.8, rng) for t, m in members.items()}
    routine = _zipf(n, 1.0, rng)
    current = list(rng.choice(topic_ids, size=active, replace=False))
    kind = rng.choice(3, size=length, p=[0.60, 0.25, 0.15])
    keys = np.empty(length, dtype=np.int64)
    for i in range(length):
        if i and i % phase == 0:
            current = [*current[1:], int(rng.choice([t for t in topic_ids if t not in current]))]
        if kind[i] == 0:
            topic = int(current[rng.integers(active)])
            keys[i] = members[topic][rng.choice(len(members[topic]), p=inside[topic])]
        elif kind[i] == 1:
            keys[i] = rng.choice(n, p=routine)
        else:
            keys[i] = rng.integers(n)
    variant = np.where(rng.random(length) < 0.5, 0, rng.integers(1, 3, size=length))
    queries = np.stack([data.variant_vectors[k][v] for k, v in zip(keys, variant, strict=True)])
    relevance = np.empty(length)
    context = np.zeros(queries.shape[1], dtype=np.float64)
    for i in range(length):
        norm = float(np.linalg.norm(context))
        relevance[i] = max(0.0, float(data.vectors[keys[i]] @ context) / norm) if norm else 0.0
        context = memory * context + (1.0 - memory) * queries[i]
    return Stream(keys, queries, relevance, len(np.unique(keys)))
