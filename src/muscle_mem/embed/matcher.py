"""Semantic task matching: which known task, if any, a new task text is a paraphrase of.

A known task matches when the embeddings of the two tasks' canonical texts (content words and
literals, fillers dropped, synonyms mapped to one word) have a cosine of at least ``similarity``
*and* the guard accepts the pair. The guard refuses a pair that differs in a literal (a number, an
id, a file name, a quoted string, a name), in negation, or in a content word that the other task
does not answer with a near-synonym that is not its opposite. So ``activate user 4471`` never
matches ``deactivate user 4471``, nor ``delete the file a.txt`` ``create the file a.txt``, while
``please fill the form for {name}`` matches ``fill in the form for {name}``.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, KeysView, Mapping
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from muscle_mem.embed.base import Embedder, Vectors
from muscle_mem.embed.text import Analysis, analyse, opposite

K = TypeVar("K", bound=Hashable)

WORD_SIMILARITY = 0.85
"""Least cosine of two single words' embeddings for them to count as near-synonyms."""


class TaskMatcher:
    """Finds the known task a new task text paraphrases; thread-safe.

    Embeddings of known tasks are cached and extended incrementally; similarities are one
    matrix-vector product, and the guard runs only on the few candidates above ``similarity``.
    """

    def __init__(
        self, embedder: Embedder, similarity: float = 0.9, *, word_similarity: float = WORD_SIMILARITY
    ) -> None:
        if not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], not {similarity!r}")
        self.embedder = embedder
        self.similarity = similarity
        self.word_similarity = word_similarity
        self._lock = threading.Lock()
        self._rows: dict[Hashable, int] = {}
        self._keys: list[Hashable] = []
        self._analyses: list[Analysis] = []
        self._matrix: Vectors = np.zeros((0, embedder.dim), dtype=np.float32)
        self._words: dict[str, Vectors] = {}
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

    def _accepts(self, a: Analysis, b: Analysis) -> bool:
        """The guard: same literals in order, same negation, shared words in the same order, and
        every other content word answered by a near-synonym that is not its opposite."""
        if a.literals != b.literals or a.negated != b.negated:
            return False
        if [k for k in a.words if k in b.words] != [k for k in b.words if k in a.words]:
            return False  # "from checking to savings" is not "from savings to checking"
        only_a = [k for k in a.words if k not in b.words]
        only_b = [k for k in b.words if k not in a.words]
        if not only_a and not only_b:
            return True
        if not only_a or not only_b or a.names.intersection(only_a) or b.names.intersection(only_b):
            return False
        if any(opposite(x, y) for x in only_a for y in only_b):
            return False
        near = (
            self._word_vectors([a.words[k] for k in only_a])
            @ self._word_vectors([b.words[k] for k in only_b]).T
        )
        covered = near >= self.word_similarity
        return bool(covered.any(axis=1).all() and covered.any(axis=0).all())

    def _word_vectors(self, words: list[str]) -> Vectors:
        missing = [w for w in dict.fromkeys(words) if w not in self._words]
        if missing:
            self._words.update(zip(missing, self.embedder.embed(missing), strict=True))
        return np.stack([self._words[w] for w in words])
