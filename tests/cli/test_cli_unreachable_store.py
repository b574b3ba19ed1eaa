"""The CLI on a store it cannot reach: one line on stderr and a non-zero exit, never library noise."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PYTHON = sys.executable


def test_an_unreachable_postgres_is_one_line_on_stderr() -> None:
    """With a PostgreSQL store that cannot be reached, the CLI prints only its own error line (the pool's
    retry warnings are silenced) and exits non-zero. The pool timeout is lowered to 1 s to keep the
    test quick."""
    code = textwrap.dedent(
        """
        import sys
        from muscle_mem.stores.postgres import PostgresStore
        PostgresStore.__init__.__kwdefaults__["timeout"] = 1.0
        from muscle_mem.cli import main
        sys.exit(main(["ls", "--store", "postgresql://nobody@127.0.0.1:1/db"]))
        """
    )
    proc = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("muscle-mem: error:")
