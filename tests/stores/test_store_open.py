"""open_store: store objects, URLs and the MUSCLE_MEM_STORE default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import POSTGRES_URL, SKIP_POSTGRES, drop_schema, trajectory
from muscle_mem.stores import ENV, MemoryStore, PostgresStore, SQLiteStore, StoreError, open_store


def test_a_store_object_passes_through() -> None:
    store = MemoryStore()
    assert open_store(store) is store


def test_default_is_memory_unless_the_environment_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert isinstance(open_store(None), MemoryStore)
    assert isinstance(open_store("memory://"), MemoryStore)
    monkeypatch.setenv(ENV, f"sqlite:///{tmp_path}/env.db")
    store = open_store()
    try:
        assert isinstance(store, SQLiteStore) and store.path == tmp_path / "env.db"
    finally:
        store.close()


def test_sqlite_urls_take_relative_and_absolute_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = open_store("sqlite:///rel/dir/cache.db")
    absolute = open_store(f"sqlite:///{tmp_path}/abs/more/cache.db")
    try:
        assert isinstance(relative, SQLiteStore) and isinstance(absolute, SQLiteStore)
        assert (tmp_path / "rel" / "dir" / "cache.db").is_file()
        assert (tmp_path / "abs" / "more" / "cache.db").is_file()
        t = trajectory()
        relative.add(t)
        again = SQLiteStore(tmp_path / "rel" / "dir" / "cache.db")
        assert again.get(t.id) == t
        again.close()
    finally:
        relative.close()
        absolute.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis://localhost", "unknown store scheme 'redis'"),
        ("cache.db", "not a store URL"),
        ("sqlite://", "needs a path"),
        ("sqlite:///", "needs a path"),
        ("memory://somewhere", "takes nothing"),
    ],
)
def test_bad_urls_are_clear_errors(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        open_store(url)


def test_sqlite_path_that_cannot_be_created(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError):
        open_store(f"sqlite:///{tmp_path}/file/sub/cache.db")


@pytest.mark.postgres
@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_postgres_urls_with_a_schema(scheme: str) -> None:
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = f"mm_test_open_{scheme}"
    url = POSTGRES_URL.replace("postgresql://", f"{scheme}://", 1)
    store = open_store(f"{url}?schema={schema}")
    try:
        assert isinstance(store, PostgresStore) and store.schema == schema
        t = trajectory()
        store.add(t)
        assert store.get(t.id) == t
    finally:
        store.close()
        drop_schema(schema)


def test_invalid_postgres_schema_names_are_refused() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError, match="invalid PostgreSQL schema"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/none", schema='x"; DROP TABLE y; --')


def test_the_stores_import_without_psycopg() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None\n"
        "from muscle_mem.stores import open_store, StoreError\n"
        "open_store('memory://')\n"
        "try:\n"
        "    open_store('postgresql://u@127.0.0.1:1/db')\n"
        "except StoreError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'muscle-mem[postgres]'" in out
