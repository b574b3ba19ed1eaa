"""The inspecting commands skip a row they cannot read, with one line saying so, and do the rest.

``ls``, ``show``, ``export``, ``report`` and ``stats`` on a store holding one good trajectory and one
hostile row (each kind of :data:`hostile_rows.ROWS`, and rows whose listing columns are not what a
store writes): every command succeeds, ``export`` still writes the good record.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from cli_support import run_cli
from conftest import StoreSpec, open_spec
from hostile_rows import ROWS, execute, plant, plant_hostile, record_good

COLUMNS = {
    "task_not_utf8": ("UPDATE {s}.trajectories SET task = CAST(%s AS TEXT) WHERE id = %s", b"say \xff"),
    "hits_not_a_number": ("UPDATE {s}.usage SET hits = %s WHERE id = %s", "many"),
    "tags_not_a_list": ("UPDATE {s}.trajectories SET tags = %s WHERE id = %s", '{"a": 1}'),
    "created_at_not_a_number": ("UPDATE {s}.trajectories SET created_at = %s WHERE id = %s", "soon"),
}
"""Rows whose listing columns an attacker rewrote (SQLite's columns take any type)."""


def _store_url(spec: StoreSpec) -> str:
    kind, location, schema = spec
    return f"sqlite:///{location}" if kind == "sqlite" else f"{location}?schema={schema}"


def _commands_skip_it(
    spec: StoreSpec,
    good: str,
    planted: str,
    readable: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    logs: pytest.LogCaptureFixture,
) -> None:
    store = ("--store", _store_url(spec))
    for argv in (("ls",), ("ls", "--json"), ("show", good), ("stats",), ("stats", "--json")):
        ran = run_cli(capsys, *argv, *store)
        assert ran.status == 0, (argv, ran.err)
    report = tmp_path / "report.html"
    ran = run_cli(capsys, "report", "--out", str(report), *store)
    assert ran.status == 0 and report.exists(), ran.err
    exported = tmp_path / "export.jsonl"
    logs.clear()
    ran = run_cli(capsys, "export", str(exported), *store)
    assert ran.status == 0, ran.err
    ids = [json.loads(line)["id"] for line in exported.read_text().splitlines()]
    assert good in ids and (planted in ids) == readable
    named = [r for r in logs.records if planted in r.getMessage() and r.levelno == logging.WARNING]
    assert len(named) == (0 if readable else 1), [r.getMessage() for r in named]


@pytest.mark.parametrize("kind", sorted(ROWS))
def test_a_row_whose_record_cannot_be_read_is_skipped_by_every_command(
    durable: StoreSpec,
    kind: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    logs: pytest.LogCaptureFixture,
) -> None:
    good, planted, refused = plant_hostile(durable, kind)
    _commands_skip_it(durable, good, planted, not refused, tmp_path, capsys, logs)


@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_a_row_whose_listing_columns_are_rewritten_is_skipped_by_every_command(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str], logs: pytest.LogCaptureFixture
) -> None:
    spec = ("sqlite", str(tmp_path / "cache.db"), "")
    store = open_spec(spec)
    good = record_good(store)
    store.close()
    planted = plant(spec, good, json.dumps)
    sql, value = COLUMNS[kind]
    execute(spec, sql, (value, planted))
    _commands_skip_it(spec, good, planted, False, tmp_path, capsys, logs)
