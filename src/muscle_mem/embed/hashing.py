"""A dependency-free embedder: signed feature hashing of words, word pairs and character n-grams."""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from muscle_mem.embed.base import Vectors, normalise

_WORD = re.compile(r"\{\w+\}|\w+")


class HashingEmbedder:
    """Hashed words, word pairs and character n-grams in ``dim`` signed buckets.

    A bag of words (weight 1), adjacent word pairs (``pair_weight``) and the character 3- to 5-grams
    of each word (weighing ``char_weight`` per word in total).
    Deterministic across processes and platforms (CRC-32, not Python's salted ``hash``); needs only
    numpy. Texts sharing words and word stems come out close; synonyms do not.
    """

    def __init__(self, dim: int = 1024, *, pair_weight: float = 0.5, char_weight: float = 1.0) -> None:
        if dim < 2:
            raise ValueError(f"dim must be at least 2, not {dim!r}")
        self._dim = dim
        self.pair_weight = pair_weight
        self.char_weight = char_weight
        self._word = lru_cache(maxsize=65_536)(self._word_features)

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        cells: list[npt.NDArray[np.int64]] = []
        values: list[npt.NDArray[np.float64]] = []
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for word in words:
                index, value = self._word(word)
                cells.append(index + row * self._dim)
                values.append(value)
            if words and self.pair_weight:
                index, value = self._hashed(
                    [f"{a} {b}" for a, b in itertools.pairwise(words)], self.pair_weight
                )
                cells.append(index + row * self._dim)
                values.append(value)
        size = len(texts) * self._dim
        if not cells:
            return np.zeros((len(texts), self._dim), dtype=np.float32)
        flat = np.bincount(np.concatenate(cells), weights=np.concatenate(values), minlength=size)
        return normalise(flat.reshape(len(texts), self._dim))

    def _word_features(self, word: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        index, value = self._hashed([word], 1.0)
        marked = f"<{word}>"
        grams = [marked[i : i + n] for n in (3, 4, 5) for i in range(len(marked) - n + 1)]
        if grams and self.char_weight:
            gram_index, gram_value = self._hashed(grams, self.char_weight / len(grams) ** 0.5)
            return np.concatenate([index, gram_index]), np.concatenate([value, gram_value])
        return index, value

    def _hashed(
        self, features: list[str], weight: float
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        codes = np.fromiter((zlib.crc32(f.encode()) for f in features), dtype=np.int64, count=len(features))
        signs = np.where(codes & 1, weight, -weight)
        return (codes >> 1) % self._dim, signs
