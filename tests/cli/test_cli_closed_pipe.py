"""A reader that stops early (``muscle-mem export | head``) ends the command quietly, with exit status 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import trajectory
from muscle_mem.stores import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def big_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A cache whose listing and export are far larger than a pipe's buffer."""
    path = tmp_path_factory.mktemp("pipe") / "cache.db"
    store = SQLiteStore(path)
    store.add_many((trajectory(f"task-{i}", n=i), None) for i in range(1500))
    store.close()
    return f"sqlite:///{path}"


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }


def _command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "muscle_mem.cli", *argv]


@pytest.mark.parametrize("command", [["export"], ["ls"], ["ls", "--json"]])
def test_a_reader_that_stops_after_one_line_ends_the_command_quietly(
    big_cache: str, command: list[str]
) -> None:
    """The reader takes one line of a long output and closes the pipe: exit status 0, nothing on stderr."""
    process = subprocess.Popen(
        _command(*command, "--store", big_cache), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read().decode()
    status = process.wait(timeout=60)
    assert first.strip()
    assert (status, err) == (0, "")


@pytest.mark.parametrize("command", [["export"], ["ls"], ["stats"], ["show", "--help"]])
def test_a_reader_gone_before_the_first_line_ends_the_command_quietly(
    big_cache: str, command: list[str]
) -> None:
    """Plain and rich output alike: every write meets a closed pipe, and the command still exits 0 silently."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            _command(*command, "--store", big_cache),
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=_env(),
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr.decode()) == (0, "")
