"""A SQLite store on a disk that fills: an outage the agent serves through, never a crash or a loss."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

WORKER = textwrap.dedent(
    """
    import json, logging, os, sys
    from pathlib import Path
    from muscle_mem import Engine

    disk, calls = Path(sys.argv[1]), int(sys.argv[2])
    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logging.getLogger("muscle_mem").addHandler(handler)
    engine = Engine(f"sqlite:///{disk / 'cache.db'}", store_retry=0.05)

    @engine.tool()
    def note(text: str) -> str:
        return text.upper()

    engine.set_agent(lambda task: note(task * 200))
    stored, served = [], 0
    for n in range(8):  # recorded while there is room
        result = engine(f"note {n}")
        stored += [result.trajectory_id] if result.stored else []
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # the rest of the disk, to its last block
    try:
        while True:
            os.write(fd, bytes(4096))
    except OSError:
        os.close(fd)
    for n in range(calls):  # known tasks and new ones, on a full disk
        task = f"note {n % 16}"
        result = engine(task)
        served += result.output == (task * 200).upper()
        stored += [result.trajectory_id] if result.stored else []
    engine.close()
    filler.unlink()
    print(json.dumps({"served": served, "stored": stored, "warnings": warnings}))
    """
)


def _mount(kind: str, where: Path, scratch: Path) -> None:
    """Mount a small disk of ``kind`` (tmpfs, or ext4 on a loop device) at ``where``; skip if it cannot be."""
    if os.geteuid() != 0:
        pytest.skip(f"mounting a small {kind} needs root")
    if kind == "tmpfs":
        command = ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)]
    else:
        image = scratch / "disk.img"
        with open(image, "wb") as out:
            out.truncate(4 * 2**20)
        made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True, check=False)
        if made.returncode != 0:
            pytest.skip(f"mkfs.ext4 is not available here: {made.stderr.decode().strip()}")
        command = ["mount", "-o", "loop", str(image), str(where)]
    mounted = subprocess.run(command, capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small {kind} here: {mounted.stderr.decode().strip()}")


@pytest.fixture(params=["tmpfs", "ext4"])
def small_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A directory on a small disk of its own (2 MiB tmpfs, 4 MiB ext4), unmounted afterwards."""
    where = tmp_path / "disk"
    where.mkdir()
    _mount(request.param, where, tmp_path)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_is_an_outage_the_agent_serves_through(small_disk: Path) -> None:
    """On a disk that fills, every call is answered, the process lives, nothing stored is lost.

    The change marks beside the database are allocated when made, so no mapped page meets the full
    disk (that was a SIGBUS); a write that fails is an outage of the store, logged once.
    """
    calls = 40
    ran = subprocess.run(
        [sys.executable, "-c", WORKER, str(small_disk), str(calls)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    report = json.loads(ran.stdout)
    assert report["served"] == calls
    outages = [w for w in report["warnings"] if w.startswith("the store is unavailable")]
    assert len(outages) == 1, report["warnings"]
    with sqlite3.connect(small_disk / "cache.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        kept = {row[0] for row in db.execute("SELECT id FROM trajectories")}
    assert set(report["stored"]) <= kept and len(report["stored"]) >= 8
