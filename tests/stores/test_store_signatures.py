"""Stores with a signer: records written signed, refused at load unless signed for where they are filed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conftest import StoreSpec, open_spec, trajectory
from muscle_mem.stores import MemoryStore, Signable, Store, StoredRecord, StoreError, open_store
from muscle_mem.stores.signing import FIELD, Signer, Verdict

KEY = "store-signing-key-0123456789abcdef"
OTHER_KEY = "another-signing-key-0123456789abc"


@pytest.fixture
def signed(durable: StoreSpec) -> Iterator[Callable[[Signer | None], Store]]:
    """Opens handles on one durable store with a signer (or none), closing them all at the end."""
    handles: list[Store] = []

    def open_handle(signer: Signer | None) -> Store:
        handle = open_spec(durable)
        assert isinstance(handle, Signable)
        handle.signer = signer
        handles.append(handle)
        return handle

    yield open_handle
    for handle in handles:
        handle.close()


def _sig(store: Store, trajectory_id: str) -> Any:
    assert isinstance(store, Signable)
    texts = {r.id: r.text for r in store.records()}
    return json.loads(texts[trajectory_id]).get(FIELD)


def test_a_signed_store_writes_signed_records_and_loads_them(
    signed: Callable[[Signer | None], Store],
) -> None:
    """Records written with a signer carry a signature and load by task key and by id."""
    store = signed(Signer(KEY))
    t = trajectory("task-a")
    store.add(t)
    assert str(_sig(store, t.id)).startswith("hmac-sha256:")
    assert [x.id for x in store.changes("task-a", 0).added] == [t.id]
    assert store.get(t.id) == t


def test_unsigned_records_load_without_a_signer_and_are_refused_with_one(
    signed: Callable[[Signer | None], Store],
) -> None:
    """Rows from before signing load as before without a key; with a key they are refused, counted once."""
    plain = signed(None)
    t = trajectory("task-a")
    plain.add(t)
    assert _sig(plain, t.id) is None
    assert [x.id for x in plain.changes("task-a", 0).added] == [t.id]
    refused: list[None] = []
    strict = signed(Signer(KEY, on_refused=lambda: refused.append(None)))
    assert strict.changes("task-a", 0).added == ()
    assert strict.changes("task-a", 0).added == ()  # a full reload refuses it again, not counted again
    assert strict.get(t.id) is None
    assert len(refused) == 1


def test_signed_records_load_without_a_signer(signed: Callable[[Signer | None], Store]) -> None:
    """A store read without a key ignores the signatures (records stay readable by older engines)."""
    t = trajectory("task-a")
    signed(Signer(KEY)).add(t)
    assert signed(None).get(t.id) == t


def test_records_signed_with_another_key_are_refused(signed: Callable[[Signer | None], Store]) -> None:
    """A record signed with a key the reader does not hold is never loaded; the reader's own are."""
    theirs, ours = trajectory("task-a", n=1), trajectory("task-a", n=2)
    signed(Signer(OTHER_KEY)).add(theirs)
    store = signed(Signer(KEY))
    store.add(ours)
    assert [x.id for x in store.changes("task-a", 0).added] == [ours.id]


def test_replace_records_rewrites_only_unchanged_texts(signed: Callable[[Signer | None], Store]) -> None:
    """``replace_records`` rewrites a record whose text is as read, skips a stale one, keeps ``nbytes``."""
    plain = signed(None)
    a, b = trajectory("task-a", n=1), trajectory("task-a", n=2)
    plain.add_many([(a, None), (b, None)])
    assert isinstance(plain, Signable)
    signer = Signer(KEY)
    records = {r.id: r for r in plain.records()}
    stale = StoredRecord(b.id, "task-a", records[b.id].text + " ")
    replacements = [
        (records[a.id], signer.stamp("task-a", json.loads(records[a.id].text))),
        (stale, signer.stamp("task-a", json.loads(records[b.id].text))),
    ]
    assert plain.replace_records(replacements) == 1
    assert plain.nbytes() == sum(len(r.text) for r in plain.records())
    store = signed(signer)
    assert [x.id for x in store.changes("task-a", 0).added] == [a.id]
    verdicts = {r.id: signer.verdict(json.loads(r.text), r.task_key, r.id) for r in plain.records()}
    assert verdicts == {a.id: Verdict.SIGNED, b.id: Verdict.UNSIGNED}


def test_open_store_gives_a_store_object_its_signer(tmp_path: Any) -> None:
    """A durable store object given with a signer signs with it; a memory store has nothing to sign."""
    signer = Signer(KEY)
    durable = open_store(f"sqlite:///{tmp_path}/c.db")
    assert open_store(durable, signer=signer) is durable
    assert isinstance(durable, Signable) and durable.signer is signer
    memory = MemoryStore()
    assert open_store(memory, signer=signer) is memory
    t = trajectory("task-a")
    memory.add(t)
    assert memory.get(t.id) == t
    durable.close()


def test_a_store_that_cannot_sign_is_refused_with_a_signer() -> None:
    """A store object without signed records (a custom backend) and a signing key: a clear error."""

    class Custom:
        def __init__(self, inner: Store) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            if name in ("records", "replace_records", "signer"):
                raise AttributeError(name)
            return getattr(self._inner, name)

    custom = Custom(MemoryStore())
    assert open_store(custom) is custom  # type: ignore[call-overload]
    with pytest.raises(StoreError, match="cannot sign its records"):
        open_store(custom, signer=Signer(KEY))  # type: ignore[call-overload]
