"""Trajectory ids are random version 4 UUIDs, distinct across threads and forked processes."""

from __future__ import annotations

import os
import threading
import uuid

from muscle_mem.model._ids import _BATCH, new_id
from muscle_mem.model.trajectory import Trajectory


def test_an_id_is_the_hex_of_a_version_4_uuid() -> None:
    """As ``uuid.uuid4().hex`` writes it: 32 lower-case hex digits, version 4, the RFC 4122 variant."""
    for _ in range(3 * _BATCH):  # past the refills of the random bytes
        made = new_id()
        parsed = uuid.UUID(made)
        assert made == parsed.hex
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122


def test_ids_do_not_repeat_across_threads() -> None:
    """Threads making ids at once share the random bytes without handing out the same ones twice."""
    made: list[list[str]] = [[] for _ in range(4)]

    def make(into: list[str]) -> None:
        into.extend(new_id() for _ in range(2 * _BATCH))

    threads = [threading.Thread(target=make, args=(into,)) for into in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [i for ids in made for i in ids]
    assert len(set(everything)) == len(everything) == 8 * _BATCH


def test_a_forked_child_makes_ids_its_parent_does_not() -> None:
    """The random bytes a child inherits are dropped: parent and child would otherwise make the same ids."""
    new_id()  # bytes left in the pool at the fork
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        os.write(write, " ".join(new_id() for _ in range(8)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        theirs = set(pipe.read().split())
    os.waitpid(child, 0)
    ours = {new_id() for _ in range(8)}
    assert len(theirs) == 8
    assert not ours & theirs


def test_a_trajectory_gets_a_new_id_by_default() -> None:
    first, second = Trajectory(task_key="k", steps=()), Trajectory(task_key="k", steps=())
    assert first.id != second.id
    assert uuid.UUID(first.id).version == 4
