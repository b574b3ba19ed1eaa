"""muscle-mem 0.1.0's ``examples/cua.py``: a click's pre-check captures an embedding tensor, and it hits.

The example's environment and flow, kept as they are: a screenshot, a method tool ``click(x, y)``
whose pre-check embeds the region around the click, compared by cosine similarity (``>= 0.8``).
Offline here: the screenshots are drawn (letters A to F, then B and E moved), the embedding is a
tensor-like object (the array protocol, no codec form) made from the region's pixels instead of
CLIP's, and the agent clicks where the letters are instead of asking a model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

from muscle_mem import Check, Engine, NotStoredReason

LETTERS = {
    "A": (100, 100),
    "B": (300, 100),
    "C": (500, 100),
    "D": (100, 300),
    "E": (300, 300),
    "F": (500, 300),
}
MOVED = LETTERS | {"B": (700, 500), "E": (800, 600)}


class Tensor:
    """A tensor as CLIP returns one: its data only through the array protocol."""

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else self._data.astype(dtype)


def cosine_similarity(current: Any, candidate: Any) -> float:
    a, b = np.asarray(current, dtype=float).ravel(), np.asarray(candidate, dtype=float).ravel()
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms else 0.0


def screenshot(path: Path, letters: dict[str, tuple[int, int]]) -> Path:
    image = Image.new("L", (1024, 768), 255)
    draw = ImageDraw.Draw(image)
    for letter, (x, y) in letters.items():
        draw.text((x - 20, y - 20), letter, fill=0, font_size=60)
    image.save(path)
    return path


def environment(engine: Engine) -> type:
    """The example's ``ImageEnv``, its click guarded by the region's embedding."""

    class ImageEnv:
        def __init__(self, image_path: Path) -> None:
            self.set_state(image_path)
            self.clicks: list[tuple[int, int]] = []

        def embed_click_region(self, x: int, y: int) -> Tensor:
            return self.get_region_embedding(x, y, 100)

        @staticmethod
        def compare_click_region(current: Tensor, candidate: Tensor) -> bool:
            assert isinstance(current, Tensor) and isinstance(candidate, Tensor)  # the objects, as captured
            return cosine_similarity(current, candidate) >= 0.8

        @engine.method(pre_check=Check(capture=embed_click_region, compare=compare_click_region))
        def click(self, x: int, y: int) -> str:
            self.clicks.append((x, y))
            return f"Clicked ({x}, {y})"

        def set_state(self, image_path: Path) -> None:
            self.image_path = image_path
            self.image = Image.open(image_path)

        def get_region_embedding(self, x: int, y: int, size: int = 100) -> Tensor:
            return region_embedding(self.image, x, y, size)

    return ImageEnv


def region_embedding(image: Image.Image, x: int, y: int, size: int = 100) -> Tensor:
    """The region around (x, y) as a unit vector of its ink (CLIP's image features, in the example)."""
    box = (max(0, x - size), max(0, y - size), min(image.width, x + size), min(image.height, y + size))
    region = 1.0 - np.asarray(image.crop(box).resize((32, 32)), dtype=float) / 255.0
    return Tensor(region.reshape(1, -1) / (np.linalg.norm(region) or 1.0))


def cua(engine: Engine, tmp_path: Path) -> tuple[Any, Path]:
    ImageEnv = environment(engine)
    env = ImageEnv(screenshot(tmp_path / "base.png", LETTERS))
    moved = screenshot(tmp_path / "moved_be.png", MOVED)

    def agent(task: str) -> None:
        """Clicks each letter of the task where the screenshot shows it."""
        where = MOVED if env.image_path == moved else LETTERS
        for letter in ("A", "B", "C", "D", "E", "F"):
            env.click(*where[letter])

    engine.set_agent(agent).set_context(env).finalize()
    return env, moved


def test_the_cua_example_misses_hits_misses_on_a_moved_screen_and_hits_again(tmp_path: Path) -> None:
    engine = Engine()
    env, moved = cua(engine, tmp_path)
    task = "click A, then B, then C, D, E, F"
    assert not engine(task) and len(engine.store) == 1  # stored: the tensor is kept as itself
    assert engine(task).hit and len(env.clicks) == 12
    env.set_state(moved)
    missed = engine(task)
    assert (
        not missed.hit and missed.steps_replayed == 1 and missed.miss_tool == "ImageEnv.click"
    )  # A; B moved
    assert engine(task).hit
    assert env.clicks[-6:] == [MOVED[letter] for letter in "ABCDEF"]


def test_a_durable_store_keeps_the_tensor_as_an_array_and_decode_rebuilds_it(tmp_path: Path) -> None:
    """Across a restart the candidate comes back from its stored array, as ``decode`` makes it."""
    store = f"sqlite:///{tmp_path / 'cache.db'}"
    compared: list[tuple[type, type]] = []

    def similar(current: Tensor, candidate: Tensor) -> bool:
        compared.append((type(current), type(candidate)))
        return cosine_similarity(current, candidate) >= 0.8

    for run in range(2):
        engine = Engine(store)
        image = Image.open(screenshot(tmp_path / "base.png", LETTERS))

        @engine.tool(pre_check=Check(lambda x, y: region_embedding(image, x, y), similar, decode=Tensor))
        def click(x: int, y: int) -> str:
            return f"Clicked ({x}, {y})"

        engine.set_agent(lambda task: [click(*LETTERS[letter]) for letter in "AB"] and "done")
        result = engine("click A and B")
        assert result.hit is (run == 1) and result.stored is (run == 0), result
        engine.close()
    assert compared == [(Tensor, Tensor), (Tensor, Tensor)]


def test_without_decode_a_durable_store_compares_arrays_on_both_sides(tmp_path: Path) -> None:
    store, seen = f"sqlite:///{tmp_path / 'cache.db'}", []

    def similar(current: Any, candidate: Any) -> bool:
        seen.append((type(current), type(candidate)))
        return cosine_similarity(current, candidate) >= 0.8

    for _ in range(2):
        engine = Engine(store)

        @engine.tool(pre_check=Check(lambda n: Tensor(np.ones(3)), similar))
        def step(n: int) -> int:
            return n

        engine.set_agent(lambda task: step(1))
        engine("one step")
        engine.close()
    assert seen == [(np.ndarray, np.ndarray)]


@pytest.mark.parametrize("given", [False, True], ids=["no stored form", "encode and decode given"])
def test_a_durable_store_takes_an_object_snapshot_only_with_a_stored_form(
    tmp_path: Path, given: bool
) -> None:
    class Handle:
        def __init__(self, name: str) -> None:
            self.name = name

    codec_of = {"encode": lambda h: h.name, "decode": Handle} if given else {}
    engine = Engine(f"sqlite:///{tmp_path / 'cache.db'}")

    @engine.tool(pre_check=Check(lambda: Handle("main"), lambda a, b: a.name == b.name, **codec_of))
    def act() -> str:
        return "acted"

    engine.set_agent(lambda task: act())
    first = engine("act")
    if given:
        assert first.stored and engine("act").hit
    else:
        assert first.not_stored_reason is NotStoredReason.UNSTORABLE_VALUE
        assert first.not_stored is not None and "Handle" in first.not_stored and "encode=" in first.not_stored


def test_metrics_enable_and_report_work_as_in_0_1(tmp_path: Path) -> None:
    engine = Engine()
    cua(engine, tmp_path)
    engine.metrics.enable()
    engine("click A, then B, then C, D, E, F")
    engine("click A, then B, then C, D, E, F")
    report = json.loads(engine.metrics.report())
    assert report["hits"] == 1 and report["misses"] == 1 and report["steps_replayed"] == 6
    assert report["hit_rate"] == 0.5 and report["misses_by_reason"] == {"no_trajectory": 1}
    engine.metrics.disable()
