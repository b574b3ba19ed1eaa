"""The inspecting commands never trust a stored row: escapes stay text, odd figures are skipped, not fatal.

Rows are rewritten by SQL in a real SQLite file, as anyone who can write the file could.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from cli_support import make_cache, run_cli
from muscle_mem.cli import report
from muscle_mem.cli.output import Output
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.stores import SQLiteStore

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202e\r"
"""A window title, a screen clear, a C1 control sequence, a bidi override and a carriage return."""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Trajectory]:
    monkeypatch.setenv("MUSCLE_MEM_STORE", f"sqlite:///{tmp_path / 'cache.db'}")
    monkeypatch.setenv("COLUMNS", "400")  # rich tables on one line each
    return make_cache(tmp_path / "cache.db")


def sql(tmp_path: Path, statement: str, *args: object) -> None:
    with sqlite3.connect(tmp_path / "cache.db") as db:
        db.execute(statement, args)
    db.close()


def rewrite_record(tmp_path: Path, tid: str, **fields: object) -> None:
    """Change fields of a trajectory's stored record (NaN written as JSON allows)."""
    with sqlite3.connect(tmp_path / "cache.db") as db:
        [(text,)] = db.execute("SELECT record FROM trajectories WHERE id = ?", (tid,)).fetchall()
        record = json.loads(text) | fields
        db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(record), tid))
    db.close()


def test_show_and_ls_print_terminal_escapes_as_text(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Control characters in a stored task, tag, tool name or value reach the terminal escaped (``\\x1b``)."""
    tid = cache["refund"].id
    sql(
        tmp_path,
        "UPDATE trajectories SET task = ?, tags = ? WHERE id = ?",
        f"task{ESCAPES}",
        json.dumps([f"t{ESCAPES}"]),
        tid,
    )
    record = json.loads(
        sqlite3.connect(tmp_path / "cache.db")
        .execute("SELECT record FROM trajectories WHERE id = ?", (tid,))
        .fetchone()[0]
    )
    record["task"] = f"task{ESCAPES}"
    record["steps"][0]["tool"] = f"tool{ESCAPES}"
    record["steps"][0]["version"] = f"v{ESCAPES}\nstep 9  forged line"
    rewrite_record(tmp_path, tid, task=record["task"], steps=record["steps"], tags=[f"tag{ESCAPES}"])
    for argv in (["ls"], ["show", tid], ["show", tid, "--full"]):
        ran = run_cli(capsys, *argv)
        assert ran.status == 0, ran.err
        for char in "\x1b\x07\x9b\u202e\r":
            assert char not in ran.out, (argv, repr(char))
        assert "\\x1b]0;owned\\x07" in ran.out and "\\u202e" in ran.out
    assert "\nstep 9  forged line" not in run_cli(capsys, "show", tid).out


def test_rich_markup_in_a_stored_text_is_printed_as_it_is(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task holding rich markup or an emoji code is shown literally, in tables too."""
    text = "[link=https://e.x]click[/link] [bold]now[/] :warning:"
    sql(tmp_path, "UPDATE trajectories SET task = ? WHERE id = ?", text, cache["plain"].id)
    ran = run_cli(capsys, "ls")
    assert ran.status == 0 and text in ran.out
    lines: list[str] = []

    class Stream:
        def write(self, part: str) -> int:
            lines.append(part)
            return len(part)

        def flush(self) -> None:
            pass

    out = Output(Stream(), fancy=True)  # type: ignore[arg-type]
    out.table("t", ["task<"], [[text]])
    out.line(text)
    printed = "".join(lines)
    assert printed.count("[link=") == printed.count(":warning:") == 2 and "\x1b" not in printed


def test_printable_keeps_line_feeds_only_when_asked() -> None:
    from muscle_mem.cli.untrusted import printable

    assert printable("a\nb\x1b") == "a\\nb\\x1b"
    assert printable("a\nb\x1b", lines=True) == "a\nb\\x1b"
    assert printable("é ü 中 ✓") == "é ü 中 ✓"


def test_text_in_numeric_columns_neither_crashes_nor_counts(
    cache: dict[str, Trajectory],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A text ``hits`` or ``steps`` (SQLite keeps any type in any column) skips its row with a warning:
    ``ls``, ``stats``, ``report`` and ``export`` still answer for the others."""
    sql(tmp_path, "UPDATE usage SET hits = ? WHERE id = ?", "<b>many</b>", cache["refund"].id)
    sql(
        tmp_path, "UPDATE trajectories SET steps = ? WHERE id = ?", "<svg onload=alert(1)>", cache["plain"].id
    )
    ls = run_cli(capsys, "ls", "--json")
    assert ls.status == 0 and [r["id"] for r in json.loads(ls.out)] == [cache["unused"].id]
    assert caplog.text.count("skipping trajectory") == 2
    stats = run_cli(capsys, "stats", "--json")
    assert stats.status == 0 and json.loads(stats.out)["cache"]["trajectories"] == 1
    assert run_cli(capsys, "stats").status == 0
    out = tmp_path / "r.html"
    ran = run_cli(capsys, "report", "--out", str(out))
    assert ran.status == 0, ran.err
    assert "onload" not in out.read_text() and "<b>many" not in out.read_text()
    exported = run_cli(capsys, "export")
    assert exported.status == 0 and len(exported.out.splitlines()) == 1


@pytest.mark.parametrize("where", ["record", "record and column"])
def test_a_nan_creation_time_skips_only_its_trajectory(
    where: str,
    cache: dict[str, Trajectory],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``export`` writes every other trajectory when one was created at NaN, and says it skipped one."""
    rewrite_record(tmp_path, cache["plain"].id, created_at=math.nan)
    if where == "record and column":
        sql(tmp_path, "UPDATE trajectories SET created_at = ? WHERE id = ?", "NaN", cache["plain"].id)
    ran = run_cli(capsys, "export")
    assert ran.status == 0, ran.err
    written = [json.loads(line)["id"] for line in ran.out.splitlines()]
    assert sorted(written) == sorted([cache["refund"].id, cache["unused"].id])
    assert f"skipping trajectory {cache['plain'].id}" in caplog.text
    shown = run_cli(capsys, "show", cache["plain"].id)  # a NaN time is refused when the record is read
    assert shown.status == 2 and "cannot be decoded" in shown.err and shown.out == ""


def test_figures_that_are_not_finite_read_as_unknown() -> None:
    """A duration or time read as NaN, infinity or a text is shown as ``?``, never a crash."""
    from muscle_mem.cli import _store_access as formats

    for value in (math.nan, math.inf, -math.inf, "12", None, 10**400):
        assert formats.seconds(value) == formats.timestamp(value) == formats.ago(value) == "?"  # type: ignore[arg-type]
        assert formats.zoned_timestamp(value) == formats.count(value) == "?"  # type: ignore[arg-type]


def test_the_report_escapes_every_stored_text(cache: dict[str, Trajectory], tmp_path: Path) -> None:
    """Markup in a stored task, tag and miss kind stays text on the page."""
    sql(
        tmp_path,
        "UPDATE trajectories SET task = ?, tags = ? WHERE id = ?",
        "<script>alert('pwned')</script>",
        json.dumps(["<img src=x onerror=alert(1)>"]),
        cache["refund"].id,
    )
    store = SQLiteStore(tmp_path / "cache.db")
    try:
        page = report.render(store, "sqlite:///x", now=1_700_000_000.0)
    finally:
        store.close()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page


def test_a_stored_secret_is_redacted_or_left_out_by_every_command(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row written before secrets were scanned (a key in its task and in a constant) is shown redacted,
    left out of ``export``, refused by ``show --json`` and written as ``_secret(...)`` by ``export --python``."""
    key = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"
    tid = cache["refund"].id
    sql(tmp_path, "UPDATE trajectories SET task = ? WHERE id = ?", f"use {key}", tid)
    with sqlite3.connect(tmp_path / "cache.db") as db:
        [(text,)] = db.execute("SELECT record FROM trajectories WHERE id = ?", (tid,)).fetchall()
    db.close()
    record = json.loads(text)
    record["steps"][1]["kwargs"][1][1] = {"static": {"api_key": key}}
    rewrite_record(tmp_path, tid, task=f"use {key}", steps=record["steps"])
    for argv in (
        ["ls"],
        ["ls", "--json"],
        ["show", tid],
        ["show", tid, "--full"],
        ["export"],
        ["export", "--python", tid],
    ):
        ran = run_cli(capsys, *argv)
        assert ran.status == 0, (argv, ran.err)
        assert key not in ran.out + ran.err, argv
    assert "[redacted: an OpenAI API key]" in run_cli(capsys, "show", tid).out
    exported = run_cli(capsys, "export")
    assert (
        tid not in exported.out and "Left out 1 trajectory holding what looks like a secret" in exported.err
    )
    assert "_secret('an OpenAI API key')" in run_cli(capsys, "export", "--python", tid).out
    refused = run_cli(capsys, "show", tid, "--json")
    assert refused.status == 2 and "looks like an OpenAI API key" in refused.err and key not in refused.err


def test_the_cli_log_lines_are_one_printable_line_without_secrets() -> None:
    """A warning quoting a stored row (its id, its decoding error) reaches stderr escaped and redacted."""
    import logging

    from muscle_mem.cli import _OneLine

    record = logging.LogRecord(
        "muscle_mem.stores",
        logging.WARNING,
        __file__,
        1,
        "skipping trajectory %s: %s",
        ("x\x1b[2J\ny", "sk-proj-Ab12Cd34Ef56Gh78Ij90"),
        None,
    )
    line = _OneLine("%(message)s").format(record)
    assert line == "skipping trajectory x\\x1b[2J\\ny: [redacted: an OpenAI API key]"
