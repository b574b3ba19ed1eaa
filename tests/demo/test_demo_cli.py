"""``muscle-mem demo`` end to end, on a real SQLite store, with a fast "LLM"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from muscle_mem.cli import main
from muscle_mem.stores import SQLiteStore


def row(output: str, label: str) -> list[str]:
    """The cells of the summary row that starts with ``label`` (plain or rich table)."""
    for line in output.splitlines():
        cells = [c for c in re.split(r"\s{2,}|│|┃", line) if c.strip()]
        if cells and cells[0].strip() == label:
            return [c.strip() for c in cells]
    raise AssertionError(f"no row {label!r} in:\n{output}")


def demo(tmp_path: Path, *extra: str) -> list[str]:
    return ["demo", "--speed", "100000", "--workdir", str(tmp_path / "work"), *extra]


def test_demo_runs_to_a_safe_summary_and_remembers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'cache.db'}"
    assert main([*demo(tmp_path, "--tasks", "30", "--store", store, "--plain")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "Summary of 30 tasks" in out
    hits, partial, fallbacks = (
        int(row(out, label)[1]) for label in ("full hits", "partial replays", "fallbacks")
    )
    assert hits > 0
    assert partial > 0
    assert hits + partial + fallbacks == 30
    assert row(out, "unsafe replays")[1] == "0"
    assert "requests [########################] 30/30" in out
    for section in ("Agent cost", "Wall time of the tasks", "Why the cache was not, or not fully, used"):
        assert section in out
    stored = len(SQLiteStore(tmp_path / "cache.db"))
    assert stored > 0

    # a second process-like run starts from the same store: the same stream now hits throughout
    assert main([*demo(tmp_path, "--tasks", "30", "--store", store, "--plain")]) == 0
    out, _ = capsys.readouterr()
    assert f"({stored} trajectories cached)" in out
    assert int(row(out, "full hits")[1]) > hits
    assert row(out, "unsafe replays")[1] == "0"

    # --fresh starts from an empty store
    assert main([*demo(tmp_path, "--tasks", "5", "--store", store, "--plain", "--fresh")]) == 0
    assert "(0 trajectories cached)" in capsys.readouterr().out


def test_demo_uses_a_file_under_the_working_directory_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MUSCLE_MEM_STORE", raising=False)
    assert main(["demo", "--tasks", "8", "--speed", "100000"]) == 0
    out = capsys.readouterr().out
    assert "sqlite:///.muscle-mem/cache.db" in out
    assert (tmp_path / ".muscle-mem" / "cache.db").is_file()
    assert (tmp_path / ".muscle-mem" / "demo" / "desk.db").is_file()
    assert not (tmp_path / ".muscle-mem" / "demo" / "copies").exists()  # the copies are cleaned up


def test_demo_honours_the_store_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MUSCLE_MEM_STORE", f"sqlite:///{tmp_path / 'env.db'}")
    assert main(demo(tmp_path, "--tasks", "5", "--plain")) == 0
    assert (tmp_path / "env.db").is_file()
    assert str(tmp_path / "env.db") in capsys.readouterr().out


def test_demo_with_rich_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("rich")
    assert main(demo(tmp_path, "--tasks", "10", "--store", "memory://", "-v")) == 0
    out = capsys.readouterr().out
    assert "Summary of 10 tasks" in out
    assert row(out, "unsafe replays")[1] == "0"
    assert re.search(r"^\s+1 miss\s+0 replayed  ", out, re.MULTILINE)


def test_demo_without_checks_replays_safely_on_what_the_tools_return(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(demo(tmp_path, "--tasks", "30", "--no-checks", "--plain")) == 0
    out = capsys.readouterr().out
    assert "WITHOUT Checks, " in out
    assert int(row(out, "unsafe replays")[1]) == 0
    assert int(row(out, "full hits")[1]) > 0


def test_demo_without_checks_or_observations_reports_unsafe_replays_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(demo(tmp_path, "--tasks", "30", "--no-checks", "--ignore-observations", "--plain")) == 1
    out = capsys.readouterr().out
    assert "WITHOUT Checks or observations" in out
    assert int(row(out, "unsafe replays")[1]) > 0
    assert "UNSAFE replay on task" in out
    assert "only after the replay" in out


def test_demo_ignoring_observations_takes_no_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A demo with observations ignored runs on a throwaway store only: a store given is refused, untouched."""
    store = f"sqlite:///{tmp_path / 'kept.db'}"
    assert main(demo(tmp_path, "--ignore-observations", "--store", store, "--plain")) == 2
    assert "--ignore-observations always use a throwaway in-memory store" in capsys.readouterr().err
    assert not (tmp_path / "kept.db").exists()


def test_demo_in_shadow_mode_prints_its_agreement_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every request goes to the agent; the summary says how many runs a replay would have matched."""
    store = f"sqlite:///{tmp_path / 'cache.db'}"
    assert main([*demo(tmp_path, "--tasks", "30", "--store", store, "--plain", "--mode", "shadow")]) == 0
    out = capsys.readouterr().out
    assert int(row(out, "full hits")[1]) == 0 and row(out, "fallbacks")[1] == "30"
    found = re.search(r"Shadow: 30 agent runs compared with what a replay would have done: (\d+) agreed", out)
    assert found is not None and int(found.group(1)) > 0
    assert "mode shadow" in out


def test_demo_in_frozen_mode_replays_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'cache.db'}"
    assert main([*demo(tmp_path, "--tasks", "20", "--store", store, "--plain")]) == 0
    stored = len(SQLiteStore(tmp_path / "cache.db"))
    capsys.readouterr()
    assert main([*demo(tmp_path, "--tasks", "20", "--store", store, "--plain", "--mode", "frozen")]) == 0
    assert int(row(capsys.readouterr().out, "full hits")[1]) > 0
    assert len(SQLiteStore(tmp_path / "cache.db")) == stored
    assert main([*demo(tmp_path, "--store", store, "--mode", "frozen", "--fresh")]) == 2


def test_demo_shows_how_each_kind_of_request_earned_its_generality(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per kind of request: its families, the runs stored, the ways they went, the leaves they freed."""
    store = f"sqlite:///{tmp_path / 'cache.db'}"
    assert main([*demo(tmp_path, "--tasks", "40", "--store", store, "--plain")]) == 0
    out = capsys.readouterr().out
    assert "How the families earned their generality" in out
    kinds = {label: row(out, label) for label in ("refund", "plan", "signup", "close")}
    stored = len(SQLiteStore(tmp_path / "cache.db"))
    assert sum(int(cells[2]) for cells in kinds.values()) == stored  # every stored run belongs to one kind
    for cells in kinds.values():
        families, runs, ways, free = (int(c) for c in cells[1:5])
        assert 1 <= families <= runs and 1 <= ways <= runs and free >= 0
    assert int(kinds["refund"][4]) > 0  # a customer's id, a ticket's id: freed by the runs themselves
    assert "The first stop on a changed observation, per kind of request:" in out
    assert re.search(r"^  refund, request \d+: step \d \w+ output\[", out, re.MULTILINE)
