"""The ``muscle-mem`` command line: bad input is one clear line and a non-zero exit, never a traceback."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from muscle_mem.cli import main
from muscle_mem.cli.output import Output

ROOT = Path(__file__).resolve().parents[2]


def fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status != 0
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("muscle-mem: error: ")
    assert "Traceback" not in err
    return status, lines[0]


@pytest.mark.parametrize(
    ("argv", "status", "says"),
    [
        ([], 2, "required: COMMAND"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
        (["demo", "--bogus"], 2, "unrecognized arguments: --bogus"),
        (["demo", "--tasks", "0"], 2, "must be positive"),
        (["demo", "--tasks", "many"], 2, "not a number: 'many'"),
        (["demo", "--speed", "-1"], 2, "must be positive"),
        (["demo", "--store", "nope"], 1, "not a store URL: 'nope'"),
        (["demo", "--store", "ftp://host/x"], 1, "unknown store scheme 'ftp'"),
        (["demo", "--store", "sqlite://"], 1, "needs a path"),
        (["demo", "--no-checks", "--store", "memory://"], 2, "drop --store"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], status: int, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[:1] == ["demo"]:
        argv = [*argv, "--workdir", str(tmp_path / "work")]
    got, line = fails(argv, capsys)
    assert got == status
    assert says in line


def test_bad_store_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MUSCLE_MEM_STORE", "mysql://db/x")
    _, line = fails(["demo", "--workdir", str(tmp_path / "work")], capsys)
    assert "unknown store scheme 'mysql'" in line


def test_a_store_file_that_is_not_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("this is not a database\n" * 100)
    _, line = fails(["demo", "--store", f"sqlite:///{junk}", "--workdir", str(tmp_path / "work")], capsys)
    assert "junk.db" in line and "is not a usable SQLite database" in line


def test_a_workdir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    _, line = fails(["demo", "--store", "memory://", "--workdir", str(blocker)], capsys)
    assert "is not a directory" in line


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "demo" in capsys.readouterr().out
    assert main(["demo", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--store", "--tasks", "--seed", "--speed", "--fresh", "--no-checks"):
        assert option in out


@pytest.mark.parametrize(("args", "status"), [(["demo", "--bogus"], 2), (["demo", "--store", "bogus"], 1)])
def test_the_real_process_prints_no_traceback(args: list[str], status: int, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("MUSCLE_MEM_DEBUG", None)
    done = subprocess.run(
        [sys.executable, "-m", "muscle_mem.cli", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == status
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_plain_output_tables_and_progress() -> None:
    stream = io.StringIO()
    out = Output(stream, fancy=False)
    out.table("Title", ["name<", "count"], [["a", "1"], ["bbb", "22"]])
    with out.progress("work", 20) as bar:
        for _ in range(20):
            bar.advance("note")
    lines = stream.getvalue().splitlines()
    assert lines[:5] == ["Title", "name  count", "----  -----", "a         1", "bbb      22"]
    progress = lines[5:]
    assert len(progress) == 10
    assert progress[-1] == "work [########################] 20/20  note"


def test_rich_output_tables() -> None:
    pytest.importorskip("rich")
    stream = io.StringIO()
    Output(stream, fancy=True).table("Title", ["name<", "count"], [["alpha", "1"]])
    text = stream.getvalue()
    assert "Title" in text
    assert "alpha" in text
