"""Signed records: an HMAC-SHA256 over each stored trajectory and the task key it is filed under.

A durable store given a :class:`Signer` writes every record with a field ``"sig"``: the HMAC of the
record's canonical JSON (sorted keys, every other field) and of the task key its row is filed
under. At load, a record whose signature is missing, or made with no accepted key, or for another
task key or id, is refused before it is decoded: it is never replayed; so is a record the store
lists as removed, or that this process saw removed (a row put back from an earlier copy). The first
key signs, every key verifies (key rotation). Use statistics live apart from the record and are not
signed: they may order and evict, never choose what replays.

Keys live outside the store: ``Engine(signing_key=...)`` or the environment variable
``MUSCLE_MEM_SIGNING_KEY`` (keys separated by commas). A key never reaches a log, a repr or a record.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from muscle_mem.errors import MuscleMemError

log = logging.getLogger(__name__)

ENV = "MUSCLE_MEM_SIGNING_KEY"
FIELD = "sig"
"""The record field that holds the signature."""
SCHEME = "hmac-sha256:"
MIN_KEY_BYTES = 16
_PURPOSE = b"muscle-mem record 1\n"
_NAMED_AT_MOST = 100_000
"""Refused ids remembered, so that each is named (and counted) once."""
REMOVED_KEPT = 100_000
"""Removed ids a signer remembers (the newest), refused if their row comes back whatever the store says."""

Key = str | bytes
"""A signing key: a text (its UTF-8 bytes) or bytes, at least :data:`MIN_KEY_BYTES` long."""
Keys = Key | Sequence[Key]
"""One key, or several: the first signs, all verify."""


class SigningKeyError(MuscleMemError, ValueError):
    """A signing key is missing, empty or too short."""


class Verdict(enum.Enum):
    """How a stored record stands against the keys of a :class:`Signer`."""

    SIGNED = "signed"
    OLDER_KEY = "signed with an older key"
    UNSIGNED = "not signed"
    BAD = "its signature does not match its content, task key or id"
    UNREADABLE = "not a JSON object"
    REMOVED = "it was removed, then put back"

    @property
    def accepted(self) -> bool:
        """Whether a record with this verdict may be replayed."""
        return self in (Verdict.SIGNED, Verdict.OLDER_KEY)


class Signer:
    """Signs records with the first of its keys and accepts those signed with any of them.

    ``on_refused`` is called once for each record refused at load (the engine counts them).
    """

    def __init__(self, keys: Keys, *, on_refused: Callable[[], None] | None = None) -> None:
        self._macs = tuple(hmac.new(key, _PURPOSE, hashlib.sha256) for key in checked_keys(keys))
        self._on_refused = on_refused
        self._named: set[str] = set()
        self._removed: dict[str, None] = {}
        """Ids this process saw removed (its own removals, those the store reported), newest last."""
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        n = len(self._macs)
        return f"Signer({n} key{'' if n == 1 else 's'})"

    def stamp(self, task_key: str, record: dict[str, Any]) -> str:
        """The stored text of a record (a JSON object, not empty) filed under ``task_key``, signed."""
        body = canonical(record)
        return f'{{"{FIELD}":"{self._signature(0, task_key, body)}",{body[1:]}'

    def verdict(self, data: dict[str, Any], task_key: str, row_id: str) -> Verdict:
        """How a parsed record filed under ``task_key`` and ``row_id`` stands; its signature is removed."""
        signature = data.pop(FIELD, None)
        if signature is None:
            return Verdict.UNSIGNED
        if type(signature) is not str or not signature.isascii() or data.get("id") != row_id:
            return Verdict.BAD
        try:
            body = canonical(data)
        except (ValueError, TypeError, RecursionError):
            return Verdict.BAD
        for i in range(len(self._macs)):
            if hmac.compare_digest(signature, self._signature(i, task_key, body)):
                return Verdict.SIGNED if i == 0 else Verdict.OLDER_KEY
        return Verdict.BAD

    def accepts(
        self, data: dict[str, Any], task_key: str, row_id: str, where: str, removed: bool = False
    ) -> bool:
        """Whether a loaded record may be used; one refused is named once in the log (by id) and counted.

        ``removed``: the store lists the id as removed. A record removed, by the store's account or as
        this process saw, is refused however well it is signed (a row put back).
        """
        if removed or row_id in self._removed:
            verdict = Verdict.REMOVED
        else:
            verdict = self.verdict(data, task_key, row_id)
            if verdict.accepted:
                return True
        with self._lock:
            if row_id in self._named:
                return False
            if len(self._named) < _NAMED_AT_MOST:
                self._named.add(row_id)
        log.warning("refusing trajectory %r in %s: %s", row_id, where, verdict.value)
        if self._on_refused is not None:
            self._on_refused()
        return False

    def saw_removed(self, trajectory_ids: Iterable[str]) -> None:
        """Remember removed ids (the newest :data:`REMOVED_KEPT`): a row put back later is refused."""
        with self._lock:
            for tid in trajectory_ids:
                self._removed.pop(tid, None)
                self._removed[tid] = None
            while len(self._removed) > REMOVED_KEPT:
                del self._removed[next(iter(self._removed))]

    def was_removed(self, trajectory_id: str) -> bool:
        """Whether this process saw the trajectory removed (among the newest :data:`REMOVED_KEPT`)."""
        return trajectory_id in self._removed

    def _signature(self, index: int, task_key: str, body: str) -> str:
        mac = self._macs[index].copy()
        mac.update(json.dumps(task_key).encode("ascii"))
        mac.update(b"\n")
        mac.update(body.encode("ascii"))
        return SCHEME + mac.hexdigest()


def canonical(record: dict[str, Any]) -> str:
    """The canonical JSON of a record: sorted keys, no spaces, ASCII (what a signature covers)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def checked_keys(keys: Keys) -> tuple[bytes, ...]:
    """The keys as bytes; raises :class:`SigningKeyError` on none, a non-key or a short one."""
    listed = [keys] if isinstance(keys, str | bytes) else list(keys)
    if not listed:
        raise SigningKeyError("no signing key given")
    found = []
    for number, key in enumerate(listed, start=1):
        if isinstance(key, str):
            key = key.encode("utf-8")
        elif not isinstance(key, bytes):
            raise SigningKeyError(f"signing key {number} is a {type(key).__name__}, not a str or bytes")
        if len(key) < MIN_KEY_BYTES:
            raise SigningKeyError(
                f"signing key {number} has {len(key)} bytes, fewer than {MIN_KEY_BYTES}: make one with "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
            )
        found.append(key)
    return tuple(found)


def env_keys() -> list[str] | None:
    """The keys of ``$MUSCLE_MEM_SIGNING_KEY`` (separated by commas, spaces around them dropped), or None."""
    text = os.environ.get(ENV, "")
    if not text.strip():
        return None
    keys = [key.strip() for key in text.split(",")]
    if not all(keys):
        raise SigningKeyError(f"${ENV} holds an empty key (keys are separated by single commas)")
    return keys


def signer_from(keys: Keys | None, *, on_refused: Callable[[], None] | None = None) -> Signer | None:
    """The signer of ``keys``, else of ``$MUSCLE_MEM_SIGNING_KEY``, else None (records are not signed)."""
    if keys is None:
        keys = env_keys()
    return None if keys is None else Signer(keys, on_refused=on_refused)
