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


def relevance_of(
    keys: npt.NDArray[np.int64], vectors: Vectors, memory: float = 0.8
) -> npt.NDArray[np.float64]:
    """Cosine (clipped at 0) of each request's task with a moving average of the requests before it."""
    relevance = np.empty(len(keys))
    context = np.zeros(vectors.shape[1], dtype=np.float64)
    for i, key in enumerate(keys.tolist()):
        norm = float(np.linalg.norm(context))
        relevance[i] = max(0.0, float(vectors[key] @ context) / norm) if norm else 0.0
        context = memory * context + (1.0 - memory) * vectors[key]
    return relevance


def users_stream(
    suites: list[list[int]], vectors: Vectors, seed: int, length: int, users: int = 80, active: int = 8
) -> Stream:
    """Users in sessions: a task is one user's prompt (users' environments differ, as tags would).

    Each user works in one suite and has habits (Zipf over its prompts, in an order of their own).
    Sessions of a geometric number of tasks (mean 4) come from the active users (Zipf over them);
    after each session, with probability 1/10, an active user leaves and another user, new or
    returning, takes the place (drift, and recurrence after long absences).
    """
    rng = np.random.default_rng(seed)
    prompts = sum(len(s) for s in suites)
    suite_of = rng.integers(len(suites), size=users)
    habits = [(rng.permutation(suites[s]), _zipf(len(suites[s]), 1.0, rng)) for s in suite_of.tolist()]
    current = list(rng.choice(users, size=active, replace=False))
    who = _zipf(active, 1.0, rng)
    keys = np.empty(length, dtype=np.int64)
    i = 0
    while i < length:
        user = int(current[rng.choice(active, p=who)])
        order, weights = habits[user]
        for _ in range(min(int(rng.geometric(0.25)), length - i)):
            keys[i] = user * prompts + int(order[rng.choice(len(order), p=weights)])
            i += 1
        if rng.random() < 0.1:
            current[int(rng.integers(active))] = int(
                rng.choice([u for u in range(users) if u not in current])
            )
    per_user = np.tile(vectors, (users, 1))
    return Stream(keys, per_user[keys], relevance_of(keys, per_user), len(np.unique(keys)))


def topics_stream(
    topics: list[list[int]], vectors: Vectors, seed: int, length: int, active: int = 4
) -> Stream:
    """Trending topics over a steady background: the shape of a chat service's traffic.

    70 % of requests open a conversation in one of the trending topics (Zipf over them and inside
    each); each request, with probability 1/400, a trending topic fades and a random one (it may
    have trended before) replaces it. 20 % are evergreen openings (Zipf over the whole corpus), 10 %
    a uniformly random opening.
    """
    rng = np.random.default_rng(seed)
    n = sum(len(t) for t in topics)
    inside = [_zipf(len(t), 0.9, rng) for t in topics]
    evergreen = _zipf(n, 1.1, rng)
    trending = list(rng.choice(len(topics), size=active, replace=False))
    share = _zipf(active, 1.0, rng)
    kind = rng.choice(3, size=length, p=[0.7, 0.2, 0.1])
    keys = np.empty(length, dtype=np.int64)
    for i in range(length):
        if rng.random() < 1 / 400:
            trending[int(rng.integers(active))] = int(rng.integers(len(topics)))
        if kind[i] == 0:
            topic = int(trending[rng.choice(active, p=share)])
            keys[i] = topics[topic][rng.choice(len(topics[topic]), p=inside[topic])]
        elif kind[i] == 1:
            keys[i] = rng.choice(n, p=evergreen)
        else:
            keys[i] = rng.integers(n)
    return Stream(keys, vectors[keys], relevance_of(keys, vectors), len(np.unique(keys)))


def arrivals(length: int, mean_gap: float | None, seed: int) -> npt.NDArray[np.float64]:
    """Request times from 0: exponential gaps of a mean (s), or, for None, a rate that changes.

    With None, every 500 requests the mean gap is drawn anew, log-uniform from 1 s to 10 min.
    """
    rng = np.random.default_rng(1000 + seed)
    if mean_gap is None:
        means = np.exp(rng.uniform(0.0, np.log(600.0), size=length // 500 + 1)).repeat(500)[:length]
    else:
        means = np.full(length, mean_gap)
    return np.cumsum(rng.exponential(means))
