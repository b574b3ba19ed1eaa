"""``muscle-mem ls``, ``show``, ``stats``, ``rm`` and ``clear`` on a real SQLite cache, bad input included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import NOW, make_cache, run_cli
from conftest import trajectory
from muscle_mem.cli import COMMANDS
from muscle_mem.model.provenance import Const
from muscle_mem.model.trajectory import Step, Trajectory, Usage, to_record
from muscle_mem.stores import SQLiteStore


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Trajectory]:
    """A cache named by $MUSCLE_MEM_STORE, with wide terminal output so tables do not fold."""
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setenv("MUSCLE_MEM_STORE", f"sqlite:///{tmp_path / 'cache.db'}")
    return make_cache(tmp_path / "cache.db")


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("ls", "show", "stats", "rm", "clear", "export", "import", "report"):
        assert name in {m.NAME for m in COMMANDS}
        ran = run_cli(capsys, name, "--help")
        assert ran.status == 0 and "--store" in ran.out


# ls


def test_ls_lists_most_recently_used_first(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(capsys, "ls")
    assert ran.status == 0, ran.err
    lines = ran.out.splitlines()
    order = [next(i for i, line in enumerate(lines) if t.id[:12] in line) for t in cache.values()]
    assert order[1] < order[2] < order[0]  # refund (used 10 s ago), unused (recorded 60 s ago), plain
    refund = next(line for line in lines if cache["refund"].id[:12] in line)
    for cell in ("Refund ${amount} to {email}: {reason}", "refund, billing", "32", "2 min 08 s"):
        assert cell in refund
    assert "never" in next(line for line in lines if cache["unused"].id[:12] in line)


def test_ls_json_has_full_ids_and_figures(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(capsys, "ls", "--json")
    rows = json.loads(ran.out)
    assert [r["id"] for r in rows] == [cache["refund"].id, cache["unused"].id, cache["plain"].id]
    refund = rows[0]
    assert refund == {
        "id": cache["refund"].id,
        "task": "Refund ${amount} to {email}: {reason}",
        "tags": ["refund", "billing"],
        "steps": 3,
        "created_at": NOW - 3600,
        "hits": 32,
        "last_used": NOW - 10,
        "saved_seconds": 128.0,
        "priority": 2.0,
        "attention": 0.5,
    }


def test_ls_filters_by_tag_and_limits(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [r["id"] for r in json.loads(run_cli(capsys, "ls", "--json", "--tag", "signup").out)]
    assert ids == [cache["unused"].id, cache["plain"].id]
    ids = [
        r["id"] for r in json.loads(run_cli(capsys, "ls", "--json", "--tag", "signup", "--tag", "new").out)
    ]
    assert ids == [cache["unused"].id]
    assert len(json.loads(run_cli(capsys, "ls", "--json", "--limit", "1").out)) == 1
    assert "No trajectories" in run_cli(capsys, "ls", "--tag", "nope").out


def test_ls_on_an_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    SQLiteStore(tmp_path / "empty.db").close()
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    assert run_cli(capsys, "ls", "--store", url).out.startswith(f"No trajectories in {url}")
    assert json.loads(run_cli(capsys, "ls", "--store", url, "--json").out) == []


def test_a_missing_cache_file_is_a_clear_error_and_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope" / "cache.db"
    for command in (
        ["ls"],
        ["show", "abcd"],
        ["stats"],
        ["rm", "abcd"],
        ["clear", "--yes"],
        ["export"],
        ["report"],
    ):
        ran = run_cli(capsys, *command, "--store", f"sqlite:///{missing}")
        assert ran.status == 2
        assert (
            ran.err
            == f"muscle-mem: error: no cache at {missing}: run `muscle-mem demo`, or name one with --store URL or $MUSCLE_MEM_STORE\n"
        )
    assert not missing.parent.exists()


def test_bad_store_urls_and_arguments_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_store = tmp_path / "other.db"
    not_a_store.write_text("this is not SQLite at all, just text" * 100)
    cases = [
        (["ls", "--store", "redis://localhost"], 1, "unknown store scheme"),
        (["ls", "--store", f"sqlite:///{not_a_store}"], 1, "not a usable SQLite database"),
        (["ls", "--limit", "-1", "--store", "memory://"], 2, "--limit must be 0 or more"),
        (["ls", "--limit", "many"], 2, "invalid int value"),
        (["stats", "--since", "yesterday"], 2, "not a duration"),
        (["show"], 2, "the following arguments are required: id"),
        (["rm"], 2, "the following arguments are required: ID"),
        (["frobnicate"], 2, "invalid choice"),
    ]
    for argv, status, message in cases:
        ran = run_cli(capsys, *argv)
        assert ran.status == status, (argv, ran.err)
        assert message in ran.err and ran.err.count("\n") == 1 and "Traceback" not in ran.err, ran.err


# show


def test_show_describes_each_step(cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]) -> None:
    t = cache["refund"]
    ran = run_cli(capsys, "show", t.id[:6])
    assert ran.status == 0, ran.err
    out = " ".join(ran.out.split())  # labels are padded to each step's longest
    for text in (
        f"trajectory {t.id}",
        "task key    task:refund",
        "tags        refund, billing",
        "3 steps, 4.5 s of agent time, 3,200 tokens",
        "usage       32 hits",
        "2 min 08 s of agent time saved",
        "step 0  lookup_customer  version v1  (2.0 ms when recorded)",
        "arg 0              params['email']  [param]",
        "step 1  Desk.create_ticket  version v2",
        "step0.output['id']  [data flow from step 0]",
        """f'Refund {{"now"}}: {reason}'  [template of params]""",
        "amount             params['amount']  [param]",
        "not an identifier  [1, 2]  [static value]",
        "pre-check          {'status': 'active', 'plan': 'pro'}  (key ",
        "{'ticket': step1.output, 'who': params['customer email'], 'n': 3}  [dict with data flow and params]",
        "post-check         'issued'  (key ",
        "answer      tuple([step2.output.refund_id])  [tuple with data flow]",
    ):
        assert " ".join(text.split()) in out, text
    assert out.count("post-check none") == 2


def test_show_clips_long_values_unless_full(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    store = SQLiteStore(tmp_path / "c.db")
    long = Trajectory(task_key="k", steps=(Step(tool="x", version="1", args=(Const("z" * 500),)),))
    store.add(long)
    store.close()
    clipped = run_cli(capsys, "show", long.id, "--store", url).out
    assert "z" * 500 not in clipped and "…" in clipped
    assert "z" * 500 in run_cli(capsys, "show", long.id, "--store", url, "--full").out


def test_show_json_is_the_export_record(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    t = cache["refund"]
    record = json.loads(run_cli(capsys, "show", t.id, "--json").out)
    usage = record.pop("usage")
    assert record == json.loads(json.dumps(to_record(t)))
    assert usage == {
        "hits": 32,
        "last_used": NOW - 10,
        "saved_seconds": 128.0,
        "priority": 2.0,
        "attention": 0.5,
    }


def test_show_unknown_short_and_ambiguous_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    store = SQLiteStore(tmp_path / "c.db")
    for suffix in ("1111", "2222"):
        t = trajectory()
        store.add(Trajectory(task_key=t.task_key, steps=t.steps, id="abcd" + suffix * 7))
    store.close()
    cases = [
        ("ffff0000", "no trajectory 'ffff0000' in this store (see `muscle-mem ls`)"),
        ("abc", "no trajectory 'abc' (an id prefix needs at least 4 characters)"),
        ("abcd", "'abcd' is ambiguous: 2 trajectory ids start with it"),
    ]
    for ref, message in cases:
        ran = run_cli(capsys, "show", ref, "--store", url)
        assert (ran.status, ran.err) == (2, f"muscle-mem: error: {message}\n")
    assert run_cli(capsys, "show", "abcd1", "--store", url).status == 0


# stats


def test_stats_json_adds_up_the_events(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    figures = json.loads(run_cli(capsys, "stats", "--json").out)
    assert figures["cache"] == {
        "trajectories": 3,
        "tasks": 3,
        "steps": 9,
        "bytes": figures["cache"]["bytes"],
        "hits": 34,
        "saved_seconds": 131.0,
    }
    assert figures["cache"]["bytes"] > 1000
    calls = figures["calls"]
    assert (calls["calls"], calls["hits"], calls["misses"], calls["partial_replays"]) == (42, 32, 10, 9)
    assert calls["hit_rate"] == pytest.approx(32 / 42)
    # each hit saves the median of the family's runs made by the agent from the start: the one of 3,000
    assert calls["saved_seconds"] == 128.0 and calls["tokens_saved"] == 32 * 3000
    assert calls["tokens_spent"] == 3000 + 900 + 8 * 700 and calls["agent_seconds"] == 15.0
    assert calls["first"] == NOW - 7200 and calls["last"] == NOW - 6000 + 39 * 100
    assert figures["miss_reasons"] == [
        ["post_check_failed", 8],
        ["no_trajectory", 1],
        ["pre_check_failed", 1],
    ]
    assert figures["miss_tools"] == [["issue refund", 9]]
    assert (calls["stored"], calls["not_stored"]) == (8, 1)
    assert figures["not_stored_reasons"] == [["unstorable_value", 1]]


def test_stats_text_and_since(cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]) -> None:
    out = run_cli(capsys, "stats").out
    for text in (
        "3 for 3 tasks, 9 steps in all",
        "32 (76.2% hit rate)",
        "10, of which 9 partial replays",
        "15.0 s spent, 2 min 08 s saved",
        "9,500 spent, 96.0k saved",  # each hit saves the median full run: 3,000
        "Top miss reasons",
        "Misses by tool",
        "8 stored, 1 not stored",
        "Why runs were not stored",
    ):
        assert text in out, text
    assert "No engine calls recorded in that period." in run_cli(capsys, "stats", "--since", "1h").out


# rm and clear


def test_rm_deletes_by_id_and_prefix(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(capsys, "rm", cache["plain"].id, cache["refund"].id[:8])
    assert (ran.status, ran.out) == (0, "Removed 2 trajectories.\n")
    assert [r["id"] for r in json.loads(run_cli(capsys, "ls", "--json").out)] == [cache["unused"].id]


def test_rm_checks_every_id_before_deleting_any(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(capsys, "rm", cache["plain"].id, "0000ffff")
    assert ran.status == 2 and "no trajectory '0000ffff'" in ran.err
    assert len(json.loads(run_cli(capsys, "ls", "--json").out)) == 3


def test_clear_asks_for_yes(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(capsys, "clear")
    assert ran.status == 2
    assert (
        ran.err
        == f"muscle-mem: error: this deletes all 3 trajectories in sqlite:///{tmp_path / 'cache.db'}: add --yes to confirm\n"
    )
    assert len(json.loads(run_cli(capsys, "ls", "--json").out)) == 3
    ran = run_cli(capsys, "clear", "--yes")
    assert ran.status == 0 and ran.out.startswith("Deleted 3 trajectories")
    assert json.loads(run_cli(capsys, "ls", "--json").out) == []
    assert json.loads(run_cli(capsys, "stats", "--json").out)["calls"]["calls"] == 42  # the history stays


def test_store_flag_wins_over_the_environment(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.db"
    store = SQLiteStore(other)
    store.add(trajectory("only"), Usage(hits=1))
    store.close()
    rows = json.loads(run_cli(capsys, "ls", "--json", "--store", f"sqlite:///{other}").out)
    assert [r["task"] for r in rows] == ["do only"]


def test_passwords_are_masked_in_output() -> None:
    from muscle_mem.cli._store_access import display_url

    assert display_url("postgresql://app:s3cret@db:5432/agents") == "postgresql://app:***@db:5432/agents"
    assert display_url("sqlite:///x.db") == "sqlite:///x.db"


def test_stats_and_report_after_a_demo_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: the engine's own events (written by the demo's engine) are what stats counts."""
    store = f"sqlite:///{tmp_path / 'demo.db'}"
    demo = [
        "demo",
        "--tasks",
        "16",
        "--text-only",
        "4",
        "--speed",
        "200",
        "--plain",
        "--workdir",
        str(tmp_path / "desk"),
        "--store",
        store,
    ]
    assert run_cli(capsys, *demo).status == 0
    figures = json.loads(run_cli(capsys, "stats", "--json", "--store", store).out)
    calls = figures["calls"]
    assert calls["calls"] == 20 and calls["hits"] + calls["misses"] == 20  # and the 4 asked as plain text
    assert "no_trajectory" in dict(figures["miss_reasons"])  # the first request is new
    assert calls["tokens_spent"] > 0
    if calls["hits"]:
        assert calls["tokens_saved"] > 0 and calls["saved_seconds"] > 0
    rows = json.loads(run_cli(capsys, "ls", "--json", "--store", store).out)
    assert rows and sum(r["hits"] for r in rows) == figures["cache"]["hits"]
    out = tmp_path / "report.html"
    assert run_cli(capsys, "report", "--store", store, "--out", str(out)).status == 0
    assert out.read_text().count("<svg") == 5
