"""PostgreSQL statements whose plan must not depend on the table's statistics (or on autovacuum)."""

from __future__ import annotations

import pytest

from conftest import StoreSpec
from muscle_mem.model.trajectory import Step, Trajectory, Usage
from muscle_mem.stores import PostgresStore
from muscle_mem.stores.postgres import EMPTIED_DROPPED

pytestmark = pytest.mark.postgres


def _plan(conn: object, sql: str) -> str:
    rows = conn.execute("EXPLAIN " + sql, (EMPTIED_DROPPED,)).fetchall()  # type: ignore[attr-defined]
    return "\n".join(row[0] for row in rows)


def test_a_removal_finds_emptied_tasks_by_their_index_with_or_without_statistics(
    postgres_spec: StoreSpec,
) -> None:
    """The sweep for emptied tasks reads the partial index, never every task (3.6 ms at 100,000)."""
    import psycopg

    _, url, schema = postgres_spec
    store = PostgresStore(url, schema=schema)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'ALTER TABLE "{schema}".tasks SET (autovacuum_enabled = off)')
        store.add_many(
            (Trajectory(task_key=f"task-{i}", steps=(Step("tool", "v1"),), id=f"t{i}"), Usage(last_used=1.0))
            for i in range(3_000)
        )
        store.remove(["t0"])  # empties one task: the sweep runs
        sql = store._sql["drop_emptied"]
        with psycopg.connect(url, autocommit=True) as conn:
            for analyzed in (False, True):
                if analyzed:
                    conn.execute(f'ANALYZE "{schema}".tasks')
                plan = _plan(conn, sql)
                assert "tasks_emptied" in plan, plan
                assert "Seq Scan on tasks" not in plan, plan
    finally:
        store.close()
