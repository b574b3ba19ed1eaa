"""The CLI writes counts in words: one of a thing in the singular, any other number in the plural."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_support import run_cli
from conftest import trajectory
from muscle_mem.cli.phrases import plural
from muscle_mem.model.trajectory import Usage
from muscle_mem.stores import SQLiteStore

WRONG_PLURAL = re.compile(
    r"(?<![\d,.])1 (\w+ )?(trajectories|tasks|steps|hits|calls|tokens|times|replays|misses)\b"
)


@pytest.mark.parametrize(
    ("n", "noun", "text"),
    [
        (1, "trajectory", "1 trajectory"),
        (0, "trajectory", "0 trajectories"),
        (2, "miss", "2 misses"),
        (1, "miss", "1 miss"),
        (1200, "tool call", "1,200 tool calls"),
        (3, "day", "3 days"),
    ],
)
def test_a_count_takes_the_singular_only_for_one(n: int, noun: str, text: str) -> None:
    """``plural`` writes the number with separators and the noun in the number it agrees with."""
    assert plural(n, noun) == text


def test_a_cache_of_one_trajectory_reads_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ls, stats, show, export, rm and clear on one trajectory of one step with one hit say "1 x", never "1 xs"."""
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    t = trajectory(steps=1, created_at=1_700_000_000.0)
    store = SQLiteStore(tmp_path / "cache.db")
    store.add(t, Usage(hits=1, last_used=1_700_000_100.0, saved_seconds=1.0, priority=1.0))
    store.close()
    said = {
        "ls": run_cli(capsys, "ls", "--store", url),
        "stats": run_cli(capsys, "stats", "--store", url),
        "show": run_cli(capsys, "show", t.id, "--store", url),
        "export": run_cli(capsys, "export", str(tmp_path / "out.jsonl"), "--store", url),
        "clear": run_cli(capsys, "clear", "--store", url),
        "rm": run_cli(capsys, "rm", t.id, "--store", url),
    }
    text = {name: " ".join((ran.out + ran.err).split()) for name, ran in said.items()}
    assert "1 trajectory in" in text["ls"]
    assert "1 for 1 task, 1 step in all" in text["stats"]
    assert "1 step," in text["show"] and "1 hit," in text["show"]
    assert "Exported 1 trajectory to" in text["export"]
    assert "this deletes all 1 trajectory in" in text["clear"]
    assert "Removed 1 trajectory." in text["rm"]
    for name, words in text.items():
        assert WRONG_PLURAL.search(words) is None, (name, words)
