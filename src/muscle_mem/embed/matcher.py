"""Semantic task matching: which known task, if any, a new task text says the same as.

A known task matches when the embeddings of the two tasks' normal forms (``embed/text.py``: framing,
articles, punctuation and soft words that qualify the whole request dropped; listed synonyms,
spellings, contractions, number words and units written one way) have a cosine of at least
``similarity`` *and* the guard accepts the pair: the two normal forms must be equal, token for token.
So ``please fill the form for {name}`` matches ``fill in the form for {name}``, ``send the e-mail
now`` matches ``send the email``, and nothing that differs in a word, a name's capital, a number, a
unit, a sign, a pronoun or a negation matches: ``activate user 4471`` never matches ``deactivate
user 4471``, nor ``pay Bill`` ``pay the bill``, nor ``don't just delete the backups`` ``don't delete
the backups``. Earlier guards let words with near embeddings stand for each other, or a soft word
anywhere differ; review found antonyms, sibling values and negated soft words among them, so a word
now stands only for itself or its listed equivalents.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, KeysView, Mapping
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from muscle_mem.embed.base import Embedder, Vectors
from muscle_mem.embed.text import Analysis, analyse

K = TypeVar("K", bound=Hashable)


class TaskMatcher:
    """Finds the known task a new task text paraphrases; thread-safe.

    Embeddings of known tasks are cached and extended incrementally; similarities are one
    matrix-vector product, and the guard runs only on the few candidates above ``similarity``.
    """

    def __init__(self, embedder: Embedder, similarity: float = 0.9) -> None:
        if not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], not {similarity!r}")
        self.embedder = embedder
        self.similarity = similarity
        self._lock = threading.Lock()
        self._rows: dict[Hashable, int] = {}
        self._keys: list[Hashable] = []
        self._analyses: list[Analysis] = []
        self._matrix: Vectors = np.zeros((0, embedder.dim), dtype=np.float32)
        self._known: set[Any] = set()
        self._known_rows: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)

    def nearest(self, task_text: str, known: Mapping[K, str]) -> K | None:
        """The key of the known task most similar to ``task_text`` that the guard accepts, or None."""
        return next(iter(self.candidates(task_text, known)), None)

    def candidates(self, task_text: str, known: Mapping[K, str]) -> list[K]:
        """The keys of the known tasks that ``task_text`` matches (similarity and guard), most similar first.

        A key's text must not change (task keys name their text); keys that leave ``known`` are
        forgotten once they outnumber the known ones.
        """
        if not known:
            return []
        query = analyse(task_text)
        vector = self.embedder.embed([query.canonical])[0]
        with self._lock:
            rows = self._rows_of(known)
            scores = self._matrix[rows] @ vector
            above = np.flatnonzero(scores >= self.similarity - 1e-6)
            ranked = [int(rows[i]) for i in above[np.argsort(-scores[above], kind="stable")]]
            return [self._keys[row] for row in ranked if self._accepts(query, self._analyses[row])]  # type: ignore[misc]

    def matches(self, a: str, b: str) -> bool:
        """Whether two task texts match each other (similarity and guard), without caching them."""
        x, y = analyse(a), analyse(b)
        u, v = self.embedder.embed([x.canonical, y.canonical])
        with self._lock:
            return float(u @ v) >= self.similarity - 1e-6 and self._accepts(x, y)

    def _rows_of(self, known: Mapping[K, str]) -> npt.NDArray[np.int64]:
        keys = known.keys()
        if keys == self._known:
            return self._known_rows
        if len(self._rows) - len(keys) > len(keys):
            self._compact(keys)
        new = list(keys - self._rows.keys())
        if new:
            analyses = [analyse(known[k]) for k in new]
            vectors = self.embedder.embed([a.canonical for a in analyses])
            self._rows.update((k, len(self._keys) + i) for i, k in enumerate(new))
            self._keys += new
            self._analyses += analyses
            self._matrix = np.concatenate([self._matrix, vectors])
        self._known = set(keys)
        self._known_rows = np.fromiter((self._rows[k] for k in keys), dtype=np.int64, count=len(keys))
        return self._known_rows

    def _compact(self, keys: KeysView[Any]) -> None:
        keep = [r for k, r in self._rows.items() if k in keys]
        self._keys = [self._keys[r] for r in keep]
        self._analyses = [self._analyses[r] for r in keep]
        self._matrix = self._matrix[keep]
        self._rows = {k: i for i, k in enumerate(self._keys)}

    @staticmethod
    def _accepts(a: Analysis, b: Analysis) -> bool:
        """The guard: the same normal form, token for token."""
        return a.tokens == b.tokens
