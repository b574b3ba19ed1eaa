"""The ``Embedder`` protocol: texts in, L2-normalised float32 rows out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors whose dot product is their cosine similarity."""

    @property
    def dim(self) -> int:
        """The length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text (a zero row for a text with no features)."""
        ...


def normalise(rows: npt.ArrayLike) -> Vectors:
    """Rows scaled to unit L2 norm, as float32; zero rows stay zero."""
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: Vectors = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return out
