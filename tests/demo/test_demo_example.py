"""``examples/support_desk.py``: the guided tour runs and shows each behaviour once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_support_desk_example_runs(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("MUSCLE_MEM_STORE", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "support_desk.py"), "--speed", "1000"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    kinds = [line.split()[0] for line in done.stdout.splitlines() if line[:4] in ("MISS", "HIT ", "PART")]
    assert kinds == ["MISS", "HIT", "PART", "PART", "PART", "PART", "HIT", "HIT"]
    out = done.stdout
    assert "step 0 lookup_customer output['status']: 'suspended', recorded 'active'" in out
    assert "step 1 refund_policy output['Growth']: 20, recorded 100" in out
    assert "post-check of tool 'issue_refund' failed" in out
    assert "step 1 refund_policy output['Starter'] against param 'amount': below, recorded above" in out
    assert out.splitlines()[-1] == "hits 3, misses 5 (4 partial), steps replayed 27"
    assert not list(tmp_path.iterdir())  # nothing left behind
