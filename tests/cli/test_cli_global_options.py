"""Options every command shares: ``--version``, and ``--store`` before or after the command's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_support import make_cache, run_cli
from conftest import trajectory
from muscle_mem import __version__
from muscle_mem.stores import SQLiteStore


def test_version_prints_the_library_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``muscle-mem --version`` prints ``muscle-mem X.Y.Z``, the library's ``__version__``, and exits 0."""
    ran = run_cli(capsys, "--version")
    assert ran.status == 0
    assert ran.out == f"muscle-mem {__version__}\n"
    assert re.fullmatch(r"muscle-mem \d+\.\d+\.\d+\S*\n", ran.out)


@pytest.fixture
def two_caches(tmp_path: Path) -> tuple[str, str]:
    """A cache of three trajectories and one of a single trajectory."""
    make_cache(tmp_path / "three.db")
    store = SQLiteStore(tmp_path / "one.db")
    store.add(trajectory())
    store.close()
    return f"sqlite:///{tmp_path / 'three.db'}", f"sqlite:///{tmp_path / 'one.db'}"


@pytest.mark.parametrize("where", ["before", "after"])
def test_store_is_accepted_before_or_after_the_command(
    two_caches: tuple[str, str], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``muscle-mem --store URL ls`` and ``muscle-mem ls --store URL`` read the same store."""
    three, _ = two_caches
    argv = ["--store", three, "ls"] if where == "before" else ["ls", "--store", three]
    ran = run_cli(capsys, *argv)
    assert ran.status == 0, ran.err
    assert ran.out.startswith(f"3 trajectories in {three}")


def test_store_after_the_command_wins_over_store_before_it(
    two_caches: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Given twice, the value after the command's name is used."""
    three, one = two_caches
    ran = run_cli(capsys, "--store", three, "ls", "--store", one)
    assert ran.status == 0, ran.err
    assert ran.out.startswith(f"1 trajectory in {one}")


def test_store_before_the_command_wins_over_the_environment(
    two_caches: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An explicit ``--store`` anywhere on the line beats ``$MUSCLE_MEM_STORE``."""
    three, one = two_caches
    monkeypatch.setenv("MUSCLE_MEM_STORE", one)
    ran = run_cli(capsys, "--store", three, "stats", "--json")
    assert ran.status == 0, ran.err
    assert '"trajectories": 3' in ran.out
