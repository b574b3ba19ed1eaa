"""``muscle-mem export`` / ``import`` (JSON Lines, lossless) and ``export --python`` (a reviewable function)."""

from __future__ import annotations

import ast
import datetime
import io
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cli_support import make_cache, refund_trajectory, run_cli
from conftest import StoreSpec, trajectory
from muscle_mem import Check, Engine, current_run
from muscle_mem.cli import script
from muscle_mem.model.trajectory import Trajectory, Usage, to_record
from muscle_mem.stores import SQLiteStore


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Trajectory]:
    monkeypatch.setenv("MUSCLE_MEM_STORE", f"sqlite:///{tmp_path / 'cache.db'}")
    return make_cache(tmp_path / "cache.db")


def url(path: Path) -> str:
    return f"sqlite:///{path}"


# export / import


def test_export_import_export_is_identical(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    ran = run_cli(capsys, "export", str(first))
    assert (ran.status, ran.err) == (0, f"Exported 3 trajectories to {first}.\n")
    ran = run_cli(capsys, "import", str(first), "--store", url(tmp_path / "new" / "copy.db"))
    assert ran.status == 0 and ran.out.startswith("Imported 3 trajectories into")
    assert run_cli(capsys, "export", str(second), "--store", url(tmp_path / "new" / "copy.db")).status == 0
    assert first.read_bytes() == second.read_bytes()
    copy = SQLiteStore(tmp_path / "new" / "copy.db")
    try:
        for t in cache.values():
            assert copy.get(t.id) == t  # nothing lost: every value, snapshot and reference
        assert copy.usage(cache["refund"].id) == Usage(
            hits=32, last_used=1_700_000_000.0 - 10, saved_seconds=128.0, priority=2.0, attention=0.5
        )
    finally:
        copy.close()


@pytest.mark.postgres
def test_round_trip_through_postgres(
    cache: dict[str, Trajectory], postgres_spec: StoreSpec, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, location, schema = postgres_spec
    shared = f"{location}?schema={schema}"
    run_cli(capsys, "export", str(tmp_path / "a.jsonl"))
    assert run_cli(capsys, "import", str(tmp_path / "a.jsonl"), "--store", shared).status == 0
    assert run_cli(capsys, "export", str(tmp_path / "b.jsonl"), "--store", shared).status == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    rows = json.loads(run_cli(capsys, "ls", "--json", "--store", shared).out)
    assert {r["id"] for r in rows} == {t.id for t in cache.values()}
    assert run_cli(capsys, "rm", cache["plain"].id, "--store", shared).status == 0
    assert run_cli(capsys, "clear", "--yes", "--store", shared).out.startswith("Deleted 2 trajectories")


def test_export_to_stdout_and_import_from_stdin(
    cache: dict[str, Trajectory],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran = run_cli(capsys, "export")
    lines = ran.out.splitlines()
    assert len(lines) == 3 and ran.err == ""
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == [
        cache["plain"].id,
        cache["refund"].id,
        cache["unused"].id,
    ]  # oldest first
    assert records[1]["usage"]["hits"] == 32
    monkeypatch.setattr("sys.stdin", io.StringIO(ran.out))
    ran = run_cli(capsys, "import", "-", "--store", url(tmp_path / "copy.db"))
    assert ran.status == 0 and "Imported 3 trajectories" in ran.out


def test_import_skips_ids_already_stored(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = tmp_path / "all.jsonl"
    run_cli(capsys, "export", str(exported))
    ran = run_cli(capsys, "import", str(exported))
    assert ran.status == 0 and "Imported 0 trajectories" in ran.out and "(3 already stored)" in ran.out


def test_unicode_and_line_separators_survive_the_round_trip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SQLiteStore(tmp_path / "a.db")
    t = refund_trajectory(task="Rembourser 12 € à {email}\u2028puis noter « ok »")
    store.add(t)
    store.close()
    run_cli(capsys, "export", str(tmp_path / "a.jsonl"), "--store", url(tmp_path / "a.db"))
    assert run_cli(capsys, "import", str(tmp_path / "a.jsonl"), "--store", url(tmp_path / "b.db")).status == 0
    copy = SQLiteStore(tmp_path / "b.db")
    assert copy.get(t.id) == t
    copy.close()


BAD_LINES = [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: expected a JSON object, found list"),
    ('{"format": 99}', "line 2: trajectory format 99 is not supported"),
    ('{"format": 1, "id": "x"}', "line 2: malformed trajectory record"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_a_corrupt_line_names_its_number_and_imports_nothing(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    good = run_cli(capsys, "export").out.splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([good[0], line, good[1]]) + "\n")
    target = tmp_path / "target.db"
    ran = run_cli(capsys, "import", str(bad), "--store", url(target))
    assert ran.status == 2
    assert ran.err.startswith(f"muscle-mem: error: {bad}, {message}") and ran.err.count("\n") == 1
    assert not target.exists()  # nothing was written, not even an empty store


def test_bad_usage_is_refused(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads(run_cli(capsys, "export").out.splitlines()[0])
    for usage, message in (
        ([1], "usage must be an object"),
        ({"hits": 1.5}, "usage field 'hits' must be a finite int"),
        ({"saved_seconds": "3"}, "usage field 'saved_seconds' must be a finite float"),
        ({"hits": True}, "usage field 'hits'"),
        ({"bogus": 1}, "unknown usage fields ['bogus']"),
    ):
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n" + json.dumps({**record, "usage": usage}) + "\n")
        ran = run_cli(capsys, "import", str(bad), "--store", url(tmp_path / "t.db"))
        assert ran.status == 2 and f"{bad}, line 2: {message}" in ran.err, ran.err


def test_unreadable_import_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    cases = [
        (tmp_path / "missing.jsonl", "cannot read"),
        (tmp_path, "cannot read"),
        (binary, "cannot read"),
    ]
    for path, message in cases:
        ran = run_cli(capsys, "import", str(path), "--store", url(tmp_path / "t.db"))
        assert ran.status == 2 and message in ran.err and ran.err.count("\n") == 1, ran.err
    ran = run_cli(capsys, "import", "--store", "memory://")
    assert ran.status == 2 and "required: FILE" in ran.err


def test_export_errors(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_cli(capsys, "export", str(tmp_path))
    assert (ran.status, ran.err) == (2, f"muscle-mem: error: {tmp_path} is a directory\n")
    ran = run_cli(capsys, "export", str(tmp_path / "no" / "dir" / "x.jsonl"))
    assert ran.status == 2 and "cannot write" in ran.err
    ran = run_cli(capsys, "export", "--python", "ffff0000")
    assert ran.status == 2 and "no trajectory 'ffff0000'" in ran.err


def test_import_of_a_line_with_a_bad_decimal_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import`` of a line whose decimal is not a number exits 2 with an error naming the line."""
    record = to_record(trajectory(steps=1))
    record["steps"][0]["args"][0] = {"static": {"$t": "decimal", "v": "oops"}}
    source = tmp_path / "export.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    ran = run_cli(capsys, "import", str(source), "--store", url(tmp_path / "c.db"))
    assert ran.status == 2, ran.err
    assert "line 1" in ran.err, ran.err


def test_import_of_a_huge_usage_number_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import`` of a line whose usage holds an integer too large for a float exits 2 with an error naming
    the line."""
    line = json.dumps(to_record(trajectory(steps=1)))[:-1] + ',"usage":{"hits":1' + "0" * 400 + "}}"
    source = tmp_path / "export.jsonl"
    source.write_text(line + "\n", encoding="utf-8")
    ran = run_cli(capsys, "import", str(source), "--store", url(tmp_path / "c.db"))
    assert ran.status == 2, ran.err
    assert "line 1" in ran.err, ran.err


def _exported_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    store = tmp_path / "source.db"
    engine = Engine(url(store))

    @engine.tool()
    def lookup(email: str) -> dict[str, str]:
        return {"id": "cust_000417"}

    @engine.tool()
    def refund(customer_id: str) -> str:
        return "R-1"

    def agent(task: str, email: str) -> str:
        return refund(lookup(email)["id"])

    engine.set_agent(agent)
    assert engine("refund", "ann.lee@example.org", params={"email": "ann.lee@example.org"}).stored
    engine.close()
    ran = run_cli(capsys, "export", "--store", url(store))
    assert ran.status == 0, ran.err
    record: dict[str, Any] = json.loads(ran.out.splitlines()[0])
    assert record["steps"][1]["args"][0] == {"output": 0, "path": [["key", "id"]]}
    return record


@pytest.mark.parametrize(
    "bad_arg",
    [
        {"output": -1},  # no step -1: export --python reads a variable before it is assigned
        {"output": 1},  # the step itself, not an earlier one
        {"output": 0, "path": [["index", "id"]]},  # not a path kind ("key", "attr", "item")
        {"template": [["bogus", "email"]]},  # not a template part ("text", "param")
    ],
)
def test_import_refuses_an_argument_that_is_not_a_valid_reference(
    bad_arg: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import`` refuses an output reference to a step that is not an earlier one, an unknown path kind
    and an unknown template part: it names the line, exits 2 and adds nothing."""
    record = _exported_line(tmp_path, capsys)
    record["steps"][1]["args"][0] = bad_arg
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(record) + "\n")
    target = tmp_path / "target.db"
    ran = run_cli(capsys, "import", str(source), "--store", url(target))
    assert ran.status == 2, f"accepted with status {ran.status}: {ran.out}"
    assert len(ran.err.strip().splitlines()) == 1 and "line 1" in ran.err


# export --python


def render(t: Trajectory, usage: Usage | None = None) -> str:
    source = script.render(t, usage)
    compile(source, "<export>", "exec")
    return source


def load_function(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<export>", "exec"), namespace)
    functions = [v for k, v in namespace.items() if callable(v) and not k.startswith("__")]
    assert len(functions) == 1
    return functions[0]


class Recorder:
    """Stands in for the tools: records each call and returns canned outputs."""

    def __init__(self, outputs: dict[str, Any]) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.outputs = outputs

    def tool(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return self.outputs.get(name)

        return call


def test_export_python_is_a_function_with_params_data_flow_and_checks(
    cache: dict[str, Trajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    t = cache["refund"]
    ran = run_cli(capsys, "export", "--python", t.id[:8])
    assert ran.status == 0, ran.err
    source = ran.out
    tree = ast.parse(source)
    [function] = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert function.name == "refund_to"
    assert [a.arg for a in function.args.args] == ["tools"]
    assert [a.arg for a in function.args.kwonlyargs] == ["email", "reason", "amount", "customer_email"]
    for text in (
        f"# muscle-mem trajectory {t.id}",
        "# Task: Refund ${amount} to {email}: {reason}",
        "# Tags: refund, billing",
        "3 tool calls, 4.5 s of agent time, 3,200 LLM tokens.",
        "# Replayed 32 times since",
        "    # `customer_email` is the param 'customer email'",
        "    # step 0: lookup_customer (version v1, 2.0 ms when recorded)",
        "    # pre-check, as recorded: True",
        "    lookup_customer_result = tools.lookup_customer(email)",
        "    # pre-check, as recorded: {'status': 'active', 'plan': 'pro'}",
        "    # post-check, as recorded: 'issued'",
        """f"Refund {{\\"now\\"}}: {reason}",""",
        "    return (issue_refund_result.refund_id,)",
    ):
        assert text in source, text

    desk = SimpleNamespace(create_ticket=None)
    recorder = Recorder(
        {
            "lookup_customer": {"id": "C-7"},
            "create_ticket": "TCK-1",
            "issue refund": SimpleNamespace(refund_id="R-9"),
        }
    )
    desk.create_ticket = recorder.tool("create_ticket")
    tools = SimpleNamespace(
        lookup_customer=recorder.tool("lookup_customer"),
        Desk=desk,
        **{"issue refund": recorder.tool("issue refund")},
    )
    function = load_function(source)
    answer = function(tools, email="a@b.c", reason="late", amount="12.00", customer_email="a@b.c")
    assert answer == ("R-9",)
    assert recorder.calls == [
        ("lookup_customer", ("a@b.c",), {}),
        ("create_ticket", ("C-7", 'Refund {"now"}: late'), {"amount": "12.00", "not an identifier": [1, 2]}),
        ("issue refund", ({"ticket": "TCK-1", "who": "a@b.c", "n": 3},), {}),
    ]


def test_export_python_to_a_file(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "refund.py"
    assert run_cli(capsys, "export", "--python", cache["refund"].id, str(target)).status == 0
    assert target.read_text() == script.render(
        cache["refund"], SQLiteStore(tmp_path / "cache.db").usage(cache["refund"].id)
    )


def test_hostile_names_and_values_still_give_valid_python() -> None:
    from muscle_mem.model.provenance import Const, Output, Param, Template, Text
    from muscle_mem.model.trajectory import Snapshot, Step

    t = Trajectory(
        task_key="k",
        task='class """ \\ def\x00 {x}',
        steps=(
            Step(
                tool="for",
                version="1",
                args=(Param("class"), Param("1st"), Param("tools")),
                kwargs=(("lambda", Const("\n\r")),),
                pre=Snapshot.capture("line one\nline two\r\u2028" + "x" * 5000),
            ),
            Step(tool="for", version="1", args=(Output(0),), post=Snapshot.capture(list(range(2000)))),
        ),
        result=Template((Text("}{'\"\\"), Param("class"))),
    )
    source = render(t)
    function = load_function(source)
    assert function.__name__ == "class_def"
    recorder = Recorder({"for": 5})
    tools = SimpleNamespace(**{"for": recorder.tool("for")})
    assert function(tools, class_="C", p_1st=1, tools_2=2) == "}{'\"\\C"
    assert recorder.calls == [("for", ("C", 1, 2), {"lambda": "\n\r"}), ("for", (5,), {})]
    assert "more lines)" in source
    assert script.render(Trajectory(task_key="k", task="{only}", steps=()), None).count("def replay_") == 1


def test_export_python_of_a_real_recording_replays_the_same_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Record with the engine, export the trajectory as Python, run it against the same tools."""
    accounts = {"ann.lee@example.org": "CUST-000417"}
    calls: list[tuple[str, tuple[Any, ...]]] = []
    engine = Engine(store=url(tmp_path / "cache.db"))

    @engine.tool(pre_check=Check.equal(lambda email: email in accounts))
    def find_customer(email: str) -> dict[str, str]:
        calls.append(("find_customer", (email,)))
        return {"customer_id": accounts[email]}

    @engine.tool(pre_check=Check.equal(lambda customer_id, amount, note: amount <= 100))
    def refund(customer_id: str, amount: int, note: str) -> str:
        calls.append(("refund", (customer_id, amount, note)))
        return f"R-{amount}"

    def agent(task: str, email: str, amount: int) -> str:
        run = current_run()
        assert run is not None
        run.tokens += 1500
        customer = find_customer(email)
        return refund(customer["customer_id"], amount, note=f"refund for {email}")

    engine.set_agent(agent)
    params = {"email": "ann.lee@example.org", "amount": 30}
    result = engine("refund", params["email"], params["amount"], params=params)
    engine.close()
    assert result.stored and result.trajectory_id is not None

    ran = run_cli(capsys, "export", "--python", result.trajectory_id, "--store", url(tmp_path / "cache.db"))
    assert ran.status == 0, ran.err
    assert "customer_id" in ran.out and "1,500 LLM tokens" in ran.out
    recorded, calls[:] = list(calls), []
    function = load_function(ran.out)
    answer = function(SimpleNamespace(find_customer=find_customer, refund=refund), **params)
    assert answer == result.output == "R-30"
    assert calls == recorded


def test_an_undecodable_row_is_reported_not_fatal(
    cache: dict[str, Trajectory], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(tmp_path / "cache.db") as db:
        db.execute("UPDATE trajectories SET record = '{broken' WHERE id = ?", (cache["plain"].id,))
    ran = run_cli(capsys, "show", cache["plain"].id)
    assert ran.status == 2
    assert f"trajectory {cache['plain'].id} is stored but cannot be decoded" in ran.err
    ran = run_cli(capsys, "export")
    assert ran.status == 0 and len(ran.out.splitlines()) == 2
    assert "Skipped 1 trajectory that cannot be decoded" in ran.err
    assert len(json.loads(run_cli(capsys, "ls", "--json").out)) == 3  # listing needs no record


def test_export_python_of_an_output_under_a_key_with_a_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export --python`` of an output read under a key that holds a quote compiles on every supported Python
    and formats the fresh value."""
    store = tmp_path / "cache.db"
    engine = Engine(url(store))

    @engine.tool()
    def lookup(email: str) -> dict[str, str]:
        return {"customer's id": "cust_000417"}

    @engine.tool()
    def note(text: str) -> None:
        return None

    def agent(task: str, email: str) -> str:
        found = lookup(email)
        note(f"refund for {found[chr(99) + 'ustomer' + chr(39) + 's id']}")
        return "ok"

    engine.set_agent(agent)
    result = engine("refund", "ann@example.org", params={"email": "ann@example.org"})
    engine.close()
    assert result.stored
    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", url(store))
    assert ran.status == 0, ran.err
    notes: list[str] = []
    tools = SimpleNamespace(lookup=lambda email: {"customer's id": "cust_999"}, note=notes.append)
    load_function(ran.out)(tools, email="bob@example.org")
    assert notes == ["refund for cust_999"]


def test_export_python_of_stdlib_values_is_runnable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export --python`` of a call with a ``datetime.date``, a ``Decimal`` and ``float('inf')`` writes
    the imports its constants need: the function runs and passes equal values."""
    store = tmp_path / "cache.db"
    engine = Engine(url(store))

    @engine.tool()
    def book(day: datetime.date, amount: Decimal, limit: float) -> str:
        return "booked-0001"

    engine.set_agent(lambda task: book(datetime.date(2024, 1, 2), Decimal("1.50"), float("inf")))
    result = engine("book the room")
    engine.close()
    assert result.stored

    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", url(store))
    assert ran.status == 0, ran.err
    calls: list[tuple[Any, ...]] = []
    function = load_function(ran.out)
    tools = SimpleNamespace(book=lambda *args: calls.append(args) or "booked-0001")
    assert function(tools) == "booked-0001"
    assert calls == [(datetime.date(2024, 1, 2), Decimal("1.50"), float("inf"))]


def test_export_python_with_a_param_named_getattr_calls_the_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A param named like a builtin the exported code uses (``getattr``) never shadows it: the exported
    function still calls the tool whose name is not an identifier."""
    store = tmp_path / "cache.db"
    engine = Engine(url(store))

    @engine.tool(name="send mail")
    def send_mail(to: str) -> str:
        return "queued"

    engine.set_agent(lambda task: send_mail("ann.lee@example.org"))
    result = engine("mail", params={"getattr": "ann.lee@example.org"})
    engine.close()
    assert result.stored

    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", url(store))
    assert ran.status == 0, ran.err
    sent: list[str] = []
    tools = SimpleNamespace(**{"send mail": lambda to: sent.append(to) or "queued"})
    function = load_function(ran.out)
    assert function(tools, getattr="ann.lee@example.org") == "queued"
    assert sent == ["ann.lee@example.org"]


def test_export_python_of_an_output_inside_a_string(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ticket id a tool returned, written inside a later string, is a template part that refers to that
    output: the exported function formats the fresh id, and ``show`` says it is data flow."""
    store = tmp_path / "cache.db"
    engine = Engine(url(store))

    @engine.tool()
    def create_ticket(subject: str) -> str:
        return "TCK-1042"

    @engine.tool()
    def send_mail(body: str) -> str:
        return "sent"

    def agent(task: str) -> str:
        ticket = create_ticket("printer jam")
        send_mail(f"We opened {ticket} for you.")
        return f"created {ticket}"

    engine.set_agent(agent)
    result = engine("report the printer jam")
    engine.close()
    assert result.stored

    shown = run_cli(capsys, "show", str(result.trajectory_id), "--store", url(store))
    assert shown.status == 0 and "template of data flow" in shown.out
    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", url(store))
    assert ran.status == 0, ran.err
    mails: list[str] = []
    tools = SimpleNamespace(
        create_ticket=lambda subject: "TCK-2001", send_mail=lambda body: mails.append(body)
    )
    assert load_function(ran.out)(tools) == "created TCK-2001"
    assert mails == ["We opened TCK-2001 for you."]
