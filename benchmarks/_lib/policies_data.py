"""Real agent task texts for the policy benchmark: the user requests shipped in the ``bfcl-eval`` wheel.

The wheel (Berkeley Function-Calling Leaderboard, Apache-2.0) is fetched with ``pip download --no-deps``
into a cache directory and its JSON-lines data files are read straight from the zip: it is never
installed nor run. Pinned to one version so that every run sees the same texts.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

BFCL = "bfcl-eval==2026.3.23"
FILES = (
    "BFCL_v4_simple_python",
    "BFCL_v4_multiple",
    "BFCL_v4_parallel",
    "BFCL_v4_parallel_multiple",
    "BFCL_v4_live_simple",
    "BFCL_v4_live_multiple",
    "BFCL_v4_live_parallel",
    "BFCL_v4_live_parallel_multiple",
    "BFCL_v4_multi_turn_base",
)
CACHE = Path(os.environ.get("MUSCLE_MEM_BENCH_CACHE", Path(tempfile.gettempdir()) / "muscle-mem-bench"))


def wheel() -> Path:
    """The bfcl-eval wheel, downloaded once (a package registry is the only network used)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    name, _, version = BFCL.partition("==")
    found = sorted(CACHE.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(CACHE), BFCL],
            check=True,
        )
        found = sorted(CACHE.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return found[0]


def task_texts() -> list[str]:
    """Every distinct user request of the files above, in file order (one line, 8 to 300 characters)."""
    seen: dict[str, None] = {}
    with zipfile.ZipFile(wheel()) as archive:
        for name in FILES:
            for line in archive.read(f"bfcl_eval/data/{name}.json").decode().splitlines():
                question = json.loads(line)["question"]
                if isinstance(question, str):  # some files store the turns as a Python literal
                    question = ast.literal_eval(question)
                for turn in question:
                    for message in turn:
                        text = " ".join(str(message["content"]).split())
                        if message["role"] == "user" and 8 <= len(text) <= 300:
                            seen.setdefault(text, None)
    return list(seen)
