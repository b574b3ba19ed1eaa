"""``muscle-mem verify`` and ``muscle-mem sign``: signatures checked and adopted from the command line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cli_support import run_cli
from conftest import trajectory
from muscle_mem.stores import SQLiteStore
from muscle_mem.stores.signing import ENV, Signer

KEY = "cli-signing-key-0123456789abcdef"
NEW_KEY = "cli-signing-key-two-0123456789ab"


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def _store(path: Path, key: str | None, *kinds: str) -> list[str]:
    """A SQLite store at ``path`` with one trajectory per task kind, signed with ``key``; their ids."""
    store = SQLiteStore(path, signer=Signer(key) if key else None)
    made = [trajectory(f"task-{kind}", n=i) for i, kind in enumerate(kinds)]
    store.add_many([(t, None) for t in made])
    store.close()
    return [t.id for t in made]


def test_verify_exits_0_when_every_record_is_signed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """All records signed with the key: status 0 and a summary."""
    path = tmp_path / "c.db"
    _store(path, KEY, "a", "b")
    ran = run_cli(capsys, "verify", "--store", f"sqlite:///{path}", "--key", KEY)
    assert ran.status == 0, ran.err
    assert "Checked 2 trajectories" in ran.out and "2 signed" in ran.out and "0 unsigned or bad" in ran.out


def test_verify_lists_and_fails_on_unsigned_and_rewritten_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unsigned record and one rewritten by SQL are listed by id, and the status is 1 (key from the env)."""
    path = tmp_path / "c.db"
    good, tampered = _store(path, KEY, "a", "b")
    (unsigned,) = _store(path, None, "c")
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE trajectories SET record = replace(record, '\"x\"', '\"y\"') WHERE id = ?", (tampered,)
        )
    monkeypatch.setenv(ENV, KEY)
    ran = run_cli(capsys, "verify", "--store", f"sqlite:///{path}")
    assert ran.status == 1
    assert f"{tampered}  its signature does not match" in ran.out
    assert f"{unsigned}  not signed" in ran.out
    assert good not in ran.out
    assert "2 unsigned or bad" in ran.out
    assert KEY not in ran.out + ran.err


def test_verify_with_a_wrong_key_fails_and_without_a_key_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another key: every record is bad (status 1); no key at all, or a short one: status 2."""
    path = tmp_path / "c.db"
    _store(path, KEY, "a")
    assert run_cli(capsys, "verify", "--store", f"sqlite:///{path}", "--key", NEW_KEY).status == 1
    ran = run_cli(capsys, "verify", "--store", f"sqlite:///{path}")
    assert ran.status == 2 and "no signing key" in ran.err
    ran = run_cli(capsys, "verify", "--store", f"sqlite:///{path}", "--key", "short-key")
    assert ran.status == 2 and "fewer than 16" in ran.err and "short-key" not in ran.err
    ran = run_cli(capsys, "verify", "--store", "memory://", "--key", KEY)
    assert ran.status == 2 and "keeps no records" in ran.err


def test_verify_escapes_an_id_that_does_not_print(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stored id with control characters is listed escaped, never written raw to the terminal."""
    path = tmp_path / "c.db"
    (tid,) = _store(path, None, "a")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE trajectories SET id = ? WHERE id = ?", ("evil\x1b[2J", tid))
    ran = run_cli(capsys, "verify", "--store", f"sqlite:///{path}", "--key", KEY)
    assert ran.status == 1 and "\x1b" not in ran.out and "'evil\\x1b[2J'" in ran.out


def test_sign_adopts_signing_then_verify_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``sign --yes`` signs unsigned records and re-signs older-key ones; a bad one is left and named."""
    path = tmp_path / "c.db"
    url = f"sqlite:///{path}"
    unsigned_a, unsigned_b = _store(path, None, "a", "b")
    (older,) = _store(path, KEY, "c")
    (bad,) = _store(path, NEW_KEY, "d")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE trajectories SET record = replace(record, '\"x\"', '\"y\"') WHERE id = ?", (bad,))
    ran = run_cli(capsys, "sign", "--store", url, "--key", f"{NEW_KEY},{KEY}")
    assert ran.status == 2 and "add --yes" in ran.err and "2 unsigned trajectories" in ran.err
    ran = run_cli(capsys, "sign", "--store", url, "--key", NEW_KEY, "--key", KEY, "--yes")
    assert ran.status == 1
    assert "Signed 3 trajectories" in ran.out and f"{bad}  left unchanged" in ran.out
    ran = run_cli(capsys, "verify", "--store", url, "--key", NEW_KEY)
    assert ran.status == 1 and ran.out.count("  its signature does not match") == 1
    store = SQLiteStore(path, signer=Signer(NEW_KEY))
    assert {t.id for k in "abc" for t in store.changes(f"task-{k}", 0).added} == {
        unsigned_a,
        unsigned_b,
        older,
    }
    assert store.nbytes() == sum(len(r.text) for r in store.records())
    store.close()
