"""Task embedders (a dependency-free hashing default, an optional sentence model) and the matcher."""

from __future__ import annotations

from muscle_mem.embed.base import Embedder, Vectors, normalise
from muscle_mem.embed.hashing import HashingEmbedder
from muscle_mem.embed.matcher import TaskMatcher
from muscle_mem.embed.sentence import SentenceEmbedder

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceEmbedder",
    "TaskMatcher",
    "Vectors",
    "get_embedder",
    "normalise",
]

_NAMES = {"hashing": HashingEmbedder, "sentence": SentenceEmbedder, "use": SentenceEmbedder}


def get_embedder(embedder: str | Embedder | None = None) -> Embedder:
    """An embedder by name (``hashing``, the default; ``sentence`` or ``use``), or an embedder as is."""
    if embedder is None:
        return HashingEmbedder()
    if isinstance(embedder, str):
        factory = _NAMES.get(embedder.strip().lower())
        if factory is None:
            raise ValueError(f"unknown embedder {embedder!r}: expected one of {', '.join(_NAMES)}")
        made: Embedder = factory()
        return made
    if isinstance(embedder, Embedder):
        return embedder
    raise TypeError(f"an embedder must be a name or an object with embed() and dim, not {embedder!r}")
