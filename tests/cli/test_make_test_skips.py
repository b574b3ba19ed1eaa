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
