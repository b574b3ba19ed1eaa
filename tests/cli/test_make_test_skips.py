"""``make test`` says why it skips tests: the reason, such as a missing PostgreSQL server, is printed."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make_test_pytest_args() -> list[str]:
    """The options ``make test`` passes to pytest, read from the Makefile's ``test`` recipe."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    recipe = lines[lines.index(next(line for line in lines if line.startswith("test:"))) + 1 :]
    command = next(line.strip() for line in recipe if "pytest" in line)
    return shlex.split(command)[1:]


def test_the_test_command_names_what_a_skip_is_missing() -> None:
    """Without ``MUSCLE_MEM_TEST_POSTGRES``, the summary names the variable, not only a skip count."""
    env = {k: v for k, v in os.environ.items() if k != "MUSCLE_MEM_TEST_POSTGRES"}
    args = [*_make_test_pytest_args(), "-p", "no:cacheprovider", "tests/stores/test_store_quiet_open.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert "SKIPPED" in done.stdout and "MUSCLE_MEM_TEST_POSTGRES" in done.stdout


def test_skips_are_summed_up_one_line_per_reason(tmp_path: Path) -> None:
    """Three tests skipped for one reason and one for another print two lines, each with its count."""
    (tmp_path / "test_skipping.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', range(3))\n"
        "def test_needs_a_server(n):\n"
        "    pytest.skip('needs a server')\n\n"
        "def test_needs_a_browser():\n"
        "    pytest.skip('needs a browser')\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *_make_test_pytest_args(),
            "-p",
            "skip_summary",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "tests"), str(ROOT / "src")))},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped == ["SKIPPED 3: needs a server", "SKIPPED 1: needs a browser"]
