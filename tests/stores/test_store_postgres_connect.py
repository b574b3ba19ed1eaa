"""A wrong PostgreSQL URL fails within seconds, in one line that names the server and the cause."""

from __future__ import annotations

import logging

import pytest

from cli_support import run_cli
from conftest import POSTGRES_URL, SKIP_POSTGRES
from muscle_mem.stores import PostgresStore, StoreError

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(20)]
"""The timeout bounds each test: opening used to wait 30 s before failing."""


def _variant(**changes: str) -> tuple[str, str]:
    """The test server's URL with some parts changed, and the ``host:port/db`` it names."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    from psycopg.conninfo import conninfo_to_dict

    info = {
        "host": "localhost",
        "port": "5432",
        "user": "postgres",
        **conninfo_to_dict(POSTGRES_URL),
        **changes,
    }
    login = f"{info['user']}:{info['password']}" if "password" in info else info["user"]
    query = f"?connect_timeout={info['connect_timeout']}" if "connect_timeout" in info else ""
    address = f"{info['host']}:{info['port']}/{info.get('dbname', '')}"
    return f"postgresql://{login}@{address}{query}", address


@pytest.mark.parametrize(
    ("changes", "cause"),
    [
        ({"dbname": "mm_no_such_database"}, 'database "mm_no_such_database" does not exist'),
        ({"user": "mm_no_such_role"}, 'role "mm_no_such_role" does not exist'),
        ({"host": "127.0.0.1", "port": "1"}, "Connection refused"),
        ({"host": "127.0.0.1", "port": "1", "connect_timeout": "1"}, "Connection refused"),
    ],
)
def test_a_wrong_url_fails_with_its_cause(
    changes: dict[str, str], cause: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The error names ``host:port/db`` and libpq's reason; nothing is logged at WARNING on the way."""
    url, address = _variant(**changes)
    with caplog.at_level(logging.WARNING), pytest.raises(StoreError) as raised:
        PostgresStore(url)
    assert str(raised.value) == f"cannot connect to PostgreSQL at {address}: {cause}"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_the_cli_reports_a_missing_database_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``muscle-mem ls --store URL`` with an unknown database: exit status 2 and one line naming it."""
    url, address = _variant(dbname="mm_no_such_database")
    ran = run_cli(capsys, "ls", "--store", url)
    assert ran.status == 2
    assert ran.err.startswith(
        f"muscle-mem: error: cannot connect to PostgreSQL at {address}: "
        'database "mm_no_such_database" does not exist: '
    )
    assert ran.err.count("\n") == 1
