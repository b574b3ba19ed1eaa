"""Signatures of stored records: the keys a signer takes, what a signature covers, rotation."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from cli_support import refund_trajectory
from muscle_mem.model.trajectory import to_record
from muscle_mem.stores import _records
from muscle_mem.stores.signing import (
    ENV,
    FIELD,
    MIN_KEY_BYTES,
    Signer,
    SigningKeyError,
    Verdict,
    env_keys,
    signer_from,
)

KEY = "signing-key-one-0123456789abcdef"
OLD_KEY = b"signing-key-two-0123456789abcdef"


def _parsed(text: str) -> dict[str, Any]:
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


def _signed_record(signer: Signer, **fields: Any) -> tuple[str, str, str]:
    """(text, task key, id) of a varied trajectory's record, signed."""
    t = refund_trajectory(**fields)
    return _records.dumps(t, signer), t.task_key, t.id


def test_a_signed_record_verifies_where_it_is_filed() -> None:
    """A record verifies against the task key and id it was signed for, after a JSON round trip."""
    signer = Signer(KEY)
    text, key, tid = _signed_record(signer)
    assert signer.verdict(_parsed(text), key, tid) is Verdict.SIGNED
    assert _parsed(text)[FIELD].startswith("hmac-sha256:")


def test_the_signature_covers_every_field_a_replay_uses() -> None:
    """Changing any field of the record (steps, args, snapshots, result, tags, tools, versions) fails it."""
    signer = Signer(KEY)
    text, key, tid = _signed_record(signer)
    record = _parsed(text)
    changes = {
        "task": lambda r: r.update(task="another task"),
        "tags": lambda r: r["tags"].append("extra"),
        "task_key": lambda r: r.update(task_key="task:other"),
        "tool": lambda r: r["steps"][0].update(tool="other_tool"),
        "version": lambda r: r["steps"][0].update(version="v9"),
        "arg constant": lambda r: r["steps"][1]["kwargs"][1][1].update(static=[1, 3]),
        "provenance": lambda r: r["steps"][0]["args"][0].update(param="other"),
        "pre snapshot": lambda r: r["steps"][1]["pre"].update(data={"status": "closed", "plan": "pro"}),
        "post snapshot": lambda r: r["steps"][2]["post"].update(data="refused"),
        "result": lambda r: r.update(result={"static": "the answer"}),
        "a step removed": lambda r: r["steps"].pop(),
        "a field added": lambda r: r.update(extra=1),
    }
    for name, change in changes.items():
        altered = json.loads(json.dumps(record))
        change(altered)
        assert signer.verdict(altered, key, tid) is Verdict.BAD, name


def test_a_record_filed_under_another_task_key_or_id_fails() -> None:
    """The signature binds the task key a row is filed under, and the row's id."""
    signer = Signer(KEY)
    text, key, tid = _signed_record(signer)
    assert signer.verdict(_parsed(text), "task:other", tid) is Verdict.BAD
    assert signer.verdict(_parsed(text), key, "another-id") is Verdict.BAD


@pytest.mark.parametrize("signature", [None, 42, "hmac-sha256:" + "0" * 64, "hmac-sha256:é", ""])
def test_a_missing_or_malformed_signature_is_not_accepted(signature: object) -> None:
    """No signature reads as unsigned; one of another type, value or alphabet as bad."""
    signer = Signer(KEY)
    text, key, tid = _signed_record(signer)
    record = _parsed(text)
    if signature is None:
        del record[FIELD]
    else:
        record[FIELD] = signature
    verdict = signer.verdict(record, key, tid)
    assert verdict is (Verdict.UNSIGNED if signature is None else Verdict.BAD)
    assert not verdict.accepted


def test_the_first_key_signs_and_every_key_verifies() -> None:
    """Key rotation: a record signed with a later key of the list verifies, as an older key's."""
    old = Signer(OLD_KEY)
    rotated = Signer([KEY, OLD_KEY])
    text, key, tid = _signed_record(old)
    assert rotated.verdict(_parsed(text), key, tid) is Verdict.OLDER_KEY
    assert Signer(KEY).verdict(_parsed(text), key, tid) is Verdict.BAD
    new_text, _, _ = _signed_record(rotated, id=tid)
    assert Signer(KEY).verdict(_parsed(new_text), key, tid) is Verdict.SIGNED
    assert old.verdict(_parsed(new_text), key, tid) is Verdict.BAD


def test_signing_is_stable_over_values_of_every_kind() -> None:
    """A record with odd texts, floats and nested values verifies after being parsed again."""
    signer = Signer(KEY)
    t = refund_trajectory(task='Ünïcode \u2028 \x00 "quoted" {x}', agent_seconds=1e-320, created_at=1e16)
    record = to_record(t)
    text = signer.stamp(t.task_key, record)
    assert signer.verdict(_parsed(text), t.task_key, t.id) is Verdict.SIGNED


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("short", "has 5 bytes"),
        ([], "no signing key"),
        ([KEY, b""], "signing key 2 has 0 bytes"),
        ([KEY, 12345], "signing key 2 is a int"),
    ],
)
def test_a_bad_key_is_refused_without_echoing_it(keys: Any, message: str) -> None:
    """A key too short, missing or of another type is a clear error that never shows a key."""
    with pytest.raises(SigningKeyError, match=message) as caught:
        Signer(keys)
    assert KEY not in str(caught.value) and "short" not in str(caught.value)


def test_a_key_needs_the_minimum_length() -> None:
    """A key of exactly the minimum length is accepted, one byte less is not."""
    Signer(b"k" * MIN_KEY_BYTES)
    with pytest.raises(SigningKeyError):
        Signer(b"k" * (MIN_KEY_BYTES - 1))


def test_the_environment_variable_lists_keys_separated_by_commas(monkeypatch: pytest.MonkeyPatch) -> None:
    """``$MUSCLE_MEM_SIGNING_KEY``: keys separated by commas, spaces around them dropped."""
    monkeypatch.delenv(ENV, raising=False)
    assert env_keys() is None and signer_from(None) is None
    monkeypatch.setenv(ENV, f" {KEY} , {OLD_KEY.decode()}")
    assert env_keys() == [KEY, OLD_KEY.decode()]
    signer = signer_from(None)
    assert signer is not None and repr(signer) == "Signer(2 keys)"
    monkeypatch.setenv(ENV, f"{KEY},,{KEY}")
    with pytest.raises(SigningKeyError, match="empty key"):
        env_keys()


def test_explicit_keys_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys given to ``signer_from`` are used, not the variable's."""
    monkeypatch.setenv(ENV, KEY)
    signer = signer_from(OLD_KEY)
    assert signer is not None
    text, key, tid = _signed_record(signer)
    assert Signer(OLD_KEY).verdict(_parsed(text), key, tid) is Verdict.SIGNED


def test_a_refused_record_is_named_once_and_counted_once(caplog: pytest.LogCaptureFixture) -> None:
    """``accepts`` logs one warning naming the record's id (and nothing of it) and calls the hook once."""
    refused: list[None] = []
    signer = Signer(KEY, on_refused=lambda: refused.append(None))
    text, key, tid = _signed_record(Signer(OLD_KEY))
    caplog.set_level(logging.DEBUG, logger="muscle_mem")
    for _ in range(3):
        assert not signer.accepts(_parsed(text), key, tid, "the store")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and tid in warnings[0].getMessage()
    assert "Refund" not in caplog.text and len(refused) == 1
    good = _records.dumps(refund_trajectory(id=tid), signer)
    assert signer.accepts(_parsed(good), key, tid, "the store") and len(refused) == 1


def test_a_record_seen_removed_is_refused_however_well_signed() -> None:
    """A signer that saw an id removed refuses its record, counts it and names it once."""
    refused: list[None] = []
    signer = Signer("a-signing-key-0123456789", on_refused=lambda: refused.append(None))
    record = {"id": "t1", "task_key": "k", "steps": []}
    text = signer.stamp("k", dict(record))
    assert signer.accepts(json.loads(text), "k", "t1", "here")
    signer.saw_removed(["t1"])
    assert signer.was_removed("t1")
    assert not signer.accepts(json.loads(text), "k", "t1", "here")
    assert not signer.accepts(json.loads(text), "k", "t1", "here")
    assert not signer.accepts(json.loads(text), "k", "t2", "here", removed=True)
    assert len(refused) == 2
