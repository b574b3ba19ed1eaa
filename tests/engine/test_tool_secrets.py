"""A secret a tool returns never reaches the store, the events, the logs or the CLI's output.

An API key returned by a tool that nobody declared secret is found by its shape; a tool registered
with ``secret_outputs=True``, or returning a :class:`Secret`, has its outputs kept out by value. Either
way later steps and the answer refer to the output, so a replay passes the fresh value on.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from cli_support import run_cli
from muscle_mem import Check, Engine, NotStoredReason, Secret, current_run
from muscle_mem.model.trajectory import to_record
from muscle_mem.stores import SQLiteStore

API_KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"
"""The shape of an OpenAI key: found in any text without being declared."""


def everything_written(path: Path) -> bytes:
    """The bytes of a SQLite store, its write-ahead log included."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_an_api_key_a_tool_returns_stays_out_of_everything(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 8 end to end: the key is not in the check snapshots, the events, any log line, ``export``,
    ``export --python`` or ``show``, and replays still pass the tool's fresh key on."""
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "cache.db"
    url = f"sqlite:///{path}"
    vault = {"key": API_KEY, "rejected": False}
    used: list[str] = []
    engine = Engine(url)

    @engine.tool(post_check=Check.equal(lambda account: {"account": account, "key": vault["key"]}))
    def fetch_credentials(account: str) -> dict[str, str]:
        return {"account": account, "api_key": vault["key"]}

    @engine.tool(pre_check=Check.equal(lambda key, query: key))
    def search(key: str, query: str) -> str:
        used.append(key)
        if vault["rejected"]:
            raise PermissionError(f"the service rejected the key {key}")
        return f"42 results for {query}"

    def agent(task: str, account: str, query: str) -> str:
        credentials = fetch_credentials(account)
        try:
            found = search(credentials["api_key"], query)
        except PermissionError:
            return "the search service is unavailable"
        return f"{found} (searched with {credentials['api_key']})"

    engine.set_agent(agent)
    params = {"account": "acme", "query": "invoices"}
    first = engine("search the archive", "acme", "invoices", params=params)
    assert first.stored and first.output == f"42 results for invoices (searched with {API_KEY})"
    assert engine("search the archive", "acme", "invoices", params=params).hit
    vault["rejected"] = True
    third = engine("search the archive", "acme", "invoices", params=params)
    assert not third.hit and third.reason is not None and "PermissionError" in third.reason
    assert API_KEY not in third.reason and "[redacted: an OpenAI API key]" in third.reason
    vault.update(key=API_KEY.replace("Ab12", "Zz99"), rejected=False)  # the key rotated: the checks see it
    fourth = engine("search the archive", "acme", "invoices", params=params)
    assert fourth.miss_reason is not None and fourth.stored and used[-1] == vault["key"]
    assert engine("search the archive", "acme", "invoices", params=params).hit
    engine.close()

    for key in (API_KEY, vault["key"]):
        assert key.encode() not in everything_written(path)
    store = SQLiteStore(path)
    events = store.events()
    store.close()
    assert len(events) == 5 and any(e.reason and "[redacted: an OpenAI API key]" in e.reason for e in events)
    assert not any(API_KEY in json.dumps(dataclasses.asdict(e)) for e in events)
    for key in (API_KEY, vault["key"]):
        assert key not in caplog.text and all(key not in r.getMessage() for r in caplog.records)
    tid = str(first.trajectory_id)
    for argv in (["export"], ["export", "--python", tid], ["show", tid], ["show", tid, "--full"], ["ls"]):
        ran = run_cli(capsys, *argv, "--store", url)
        assert ran.status == 0, (argv, ran.err)
        assert API_KEY not in ran.out + ran.err and vault["key"] not in ran.out + ran.err, argv
    assert "stored as its hash only" in run_cli(capsys, "show", tid, "--store", url).out


def test_a_key_held_in_a_stored_value_keeps_the_run_from_being_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A key the agent passes as a constant, or a compare Check captures, is not stored in clear: the run
    is not stored, and the reason says what it looks like without quoting it."""
    caplog.set_level(logging.DEBUG)
    engine = Engine()

    @engine.tool(pre_check=Check(lambda key: {"key": key}, lambda a, b: a == b))
    def connect(key: str) -> str:
        return "connected"

    engine.set_agent(lambda task: connect(API_KEY))
    result = engine("connect to the service")
    assert result.output == "connected" and not result.stored
    assert result.not_stored_reason is NotStoredReason.SECRET_LEAK
    assert result.not_stored is not None and "an OpenAI API key" in result.not_stored
    assert API_KEY not in result.not_stored and API_KEY not in caplog.text
    assert len(engine.store) == 0


def test_a_secret_in_the_task_text_is_redacted_before_anything_keeps_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    engine = Engine()
    echo = engine.register(lambda text: text, name="echo")
    engine.set_agent(lambda task: echo("hello"))
    result = engine(f"say hello using {API_KEY}")
    assert result.stored
    [summary] = engine.store.summaries()
    assert summary.task == "say hello using [redacted: an OpenAI API key]"
    assert API_KEY not in caplog.text


def tokens_engine(**register: Any) -> tuple[Engine, dict[str, Any], list[str]]:
    """An engine whose first tool hands out a session token the second one is called with."""
    engine = Engine()
    state: dict[str, Any] = {"token": "tok-00017-alpha"}
    sent: list[str] = []

    def open_session(user: str) -> Any:
        return Secret(state["token"]) if register.get("wrap") else state["token"]

    def send(token: str, text: str) -> str:
        sent.append(token)
        if state.get("fail"):
            raise ConnectionError(f"session {token} expired")
        return "sent"

    opener = engine.register(open_session, secret_outputs=register.get("secret_outputs", False))
    sender = engine.register(send)

    def agent(task: str, user: str) -> str:
        token = opener(user)
        plain = token.get() if isinstance(token, Secret) else token
        try:
            return sender(plain, f"hello {user}")
        except ConnectionError:
            return "not sent"

    engine.set_agent(agent)
    return engine, state, sent


@pytest.mark.parametrize(
    "register", [{"secret_outputs": True}, {"wrap": True}], ids=["secret_outputs", "Secret"]
)
def test_a_secret_output_replays_by_reference_and_is_never_stored(
    register: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """A token a secret tool returns is stored as a reference to its output: a replay sends the fresh token,
    and the token is in no record, reason or log line."""
    caplog.set_level(logging.DEBUG)
    engine, state, sent = tokens_engine(**register)
    first = engine("greet", "ann", params={"user": "ann"})
    assert first.stored and sent == ["tok-00017-alpha"]
    state["token"] = "tok-00018-bravo"
    assert engine("greet", "ann", params={"user": "ann"}).hit and sent[-1] == "tok-00018-bravo"
    state["fail"] = True
    failed = engine("greet", "ann", params={"user": "ann"})
    assert failed.reason is not None and "{output of open_session}" in failed.reason
    records = json.dumps([to_record(engine.store.get(s.id)) for s in engine.store.summaries()])  # type: ignore[arg-type]
    for token in ("tok-00017-alpha", "tok-00018-bravo"):
        assert token not in records and token not in caplog.text and token not in failed.reason


def test_a_secret_output_written_into_a_constant_keeps_the_run_from_being_stored() -> None:
    """An answer the replay could not rebuild from the output (the token in capitals) would hold the
    secret in clear: the run is not stored."""
    engine = Engine()
    opener = engine.register(lambda user: "tok-00017-alpha", name="open_session", secret_outputs=True)
    engine.set_agent(lambda task: opener("ann").upper())
    result = engine("shout the token")
    assert result.output == "TOK-00017-ALPHA" and not result.stored
    assert result.not_stored_reason is NotStoredReason.SECRET_LEAK
    assert result.not_stored is not None and "TOK-00017" not in result.not_stored


def test_secret_outputs_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="secret_outputs must be True or False"):
        Engine().register(lambda: 1, secret_outputs="yes")  # type: ignore[arg-type]


def test_a_secret_output_that_cannot_be_walked_is_returned_and_not_stored() -> None:
    """A secret output whose values cannot be read (its items raise) still reaches the agent; the
    run is not stored, since its secrets are unknown."""

    class Vault(dict[str, str]):
        def items(self) -> Any:
            raise RuntimeError("locked")

    engine = Engine()
    opener = engine.register(lambda: Vault(), name="open_vault", secret_outputs=True)
    engine.set_agent(lambda task: type(opener()).__name__)
    result = engine("open the vault")
    assert result.output == "Vault" and not result.stored
    assert result.not_stored_reason is NotStoredReason.SECRET_LEAK


RESET_LINK = "https://accounts.example.com/reset?token=9f8Qz7LmXw2Rt5Vb"


def inbox_engine(path: Path) -> tuple[Engine, dict[str, str], list[str]]:
    """An agent that reads an e-mail and forwards the reset link written inside its body."""
    inbox = {"body": f"Hello, click {RESET_LINK} to reset your password. It expires in an hour."}
    forwarded: list[str] = []
    engine = Engine(f"sqlite:///{path}")

    @engine.tool()
    def read_email() -> dict[str, str]:
        return dict(inbox)

    @engine.tool()
    def forward(link: str) -> str:
        forwarded.append(link)
        return "forwarded"

    def agent(task: str) -> str:
        done = current_run().steps
        body = done[0].output["body"] if done else read_email()["body"]
        link = body.split()[2]
        forward(link)
        return f"I forwarded {link}"

    engine.set_agent(agent)
    return engine, inbox, forwarded


def test_a_secret_looking_value_read_out_of_an_output_text_is_kept_as_a_reference(tmp_path: Path) -> None:
    """The token inside a link an e-mail holds is stored as "the secret-looking value of that text",
    never in clear: the run is stored and replays the same link while the e-mail is the same."""
    path = tmp_path / "cache.db"
    engine, _, forwarded = inbox_engine(path)
    first = engine("forward the reset link")
    assert first.stored, first.not_stored
    assert b"9f8Qz7LmXw2Rt5Vb" not in everything_written(path)
    replay = engine("forward the reset link")
    assert replay.hit and replay.output == f"I forwarded {RESET_LINK}"
    assert forwarded == [RESET_LINK, RESET_LINK]


def test_a_new_e_mail_stops_the_replay_and_the_agent_reads_the_new_link(tmp_path: Path) -> None:
    """The text the value was read out of is compared like any output: another e-mail hands the
    task back to the agent after the read, and it forwards the link it finds there."""
    engine, inbox, forwarded = inbox_engine(tmp_path / "cache.db")
    engine("forward the reset link")
    other = RESET_LINK.replace("9f8Qz7LmXw2Rt5Vb", "Zq81kLm0PxW3rT7y")
    inbox["body"] = f"Hello, click {other} to reset your password. It expires in an hour."
    result = engine("forward the reset link")
    assert not result.hit and result.steps_replayed == 1
    assert forwarded[-1] == other and result.output == f"I forwarded {other}"
