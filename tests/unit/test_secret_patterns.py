"""Secret-looking texts are found by their shape and redacted; ordinary texts are left alone."""

from __future__ import annotations

import itertools

import pytest

from muscle_mem.secrecy import patterns as secret_patterns
from muscle_mem.secrecy.patterns import find, kind_of, scrub

SECRETS = {
    "an OpenAI API key": "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
    "an Anthropic API key": "sk-ant-api03-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
    "an AWS access key id": "AKIAIOSFODNN7EXAMPLE",
    "a GitHub token": "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "a Slack token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
    "a Google API key": "AIzaSyA-1234567890abcdefghijklmnopqrstu",
    "a Stripe secret key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "a JSON web token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "a private key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_a_provider_key_is_found_inside_a_message(kind: str) -> None:
    secret = SECRETS[kind]
    text = f"PermissionError('the service rejected {secret}: try again')"
    assert kind_of(text) == kind
    assert scrub(text) == f"PermissionError('the service rejected [redacted: {kind}]: try again')"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("Authorization: Bearer abcDEF123456ghiJKL789", "Authorization: [redacted: a bearer token]"),
        ("api_key=x8Fj3kLm9Qp2Zr7T", "api_key=[redacted: a secret value]"),
        ('{"password": "S3cr3t!Passw0rd"}', '{"password": "[redacted: a secret value]"}'),
        ("client_secret: 9fK2mQ7xL4pW8zR1", "client_secret: [redacted: a secret value]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[redacted: a GitHub token]"),
    ],
)
def test_tokens_and_values_named_secret_are_redacted(text: str, redacted: str) -> None:
    assert scrub(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "process the queue",
        "refund 42 to ann@example.org for order 1234",
        "task-risk-assessment-report-2024-final",  # holds "sk-" inside a word
        "desk-abcdefghij0123456789xyz",
        "token: abcdefghijklmnop",  # after a secret's name, but a word, not generated
        "password: correcthorsebattery",
        "key=customer",
        "the customer_id is CUST-000417",
        "sk-learn-compatible-estimators",  # no digits: a phrase, not a key
        "Bearer of bad news",
    ],
)
def test_ordinary_texts_are_left_alone(text: str) -> None:
    assert kind_of(text) is None and scrub(text) == text


def test_spans_do_not_overlap_and_come_in_order() -> None:
    text = f"a {SECRETS['an AWS access key id']} b api_key={SECRETS['an OpenAI API key']} c"
    found = list(find(text))
    assert [f.kind for f in found] == ["an AWS access key id", "an OpenAI API key"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


def test_long_texts_are_redacted_without_the_cache() -> None:
    text = "x " * secret_patterns.CACHED_LENGTH + SECRETS["an OpenAI API key"]
    assert scrub(text).endswith("[redacted: an OpenAI API key]")


def test_texts_built_to_make_the_patterns_backtrack_are_still_answered() -> None:
    """Long runs of what the patterns start with (``key=``, ``sk-``, word boundaries) find nothing."""
    for text in (
        "a.a." * 20_000,
        "sk-" * 30_000,
        "key=" * 20_000,
        "bearer " * 20_000,
        "-----BEGIN PRIVATE KEY-----",
    ):
        assert kind_of(text) in (None, "a private key")


def test_a_secret_looking_task_text_is_found_every_time() -> None:
    """The search of a trajectory's task text, remembered per text, finds it on every run of the task."""
    from muscle_mem.model.trajectory import Step, Trajectory
    from muscle_mem.secrecy.declared import looks_secret

    key = "sk-ant-" + "a1B2c3D4e5" * 3
    leaky = Trajectory(task_key="k", steps=(Step("t", "1"),), task=f"call with {key}")
    clean = Trajectory(task_key="k", steps=(Step("t", "1"),), task="call with the usual key")
    for _ in range(2):
        assert looks_secret(leaky) == "an Anthropic API key"
        assert looks_secret(clean) is None
