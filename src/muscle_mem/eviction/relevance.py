"""Semantic attention: how relevant a task is to the recent stream of tasks.

The eviction policies weigh a trajectory's use by this relevance (``Usage.attention``). The recent
stream is an exponentially decayed centroid of the embeddings of the tasks the engine was asked to
solve; a task's relevance is the cosine of its embedding with that centroid, clipped to [0, 1].
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from muscle_mem.embed import Embedder, Vectors

CACHED_TASKS = 4096


class TaskStream:
    """The recent task stream, kept as a decayed centroid; ``half_life`` counts tasks."""

    def __init__(self, embedder: Embedder, half_life: float = 32.0) -> None:
        if half_life <= 0:
            raise ValueError(f"half_life must be positive, not {half_life!r}")
        self._embedder = embedder
        self._keep = 0.5 ** (1.0 / half_life)
        self._centroid: Vectors | None = None
        self._vectors: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def _vector(self, task_key: str, text: str) -> Vectors:
        vector = self._vectors.get(task_key)
        if vector is not None:
            self._vectors.move_to_end(task_key)  # least recently used goes first
            return vector
        fresh: Vectors = self._embedder.embed([text])[0]
        self._vectors[task_key] = fresh
        if len(self._vectors) > CACHED_TASKS:
            self._vectors.popitem(last=False)
        return fresh

    def observe(self, task_key: str, text: str) -> float:
        """Add a task to the stream; returns its relevance to the stream before it (1.0 at first)."""
        with self._lock:
            vector = self._vector(task_key, text)
            if self._centroid is None:
                self._centroid = vector.copy()
                return 1.0
            norm = float(np.linalg.norm(self._centroid))
            relevance = float(vector @ self._centroid) / norm if norm else 1.0
            self._centroid = self._centroid * self._keep + vector * (1.0 - self._keep)
            return min(1.0, max(0.0, relevance))
