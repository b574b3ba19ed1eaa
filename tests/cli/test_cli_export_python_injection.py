"""``export --python`` writes safe code whoever wrote the store: rows rewritten by SQL never run their payload.

Each test rewrites a recorded row of a real SQLite file by SQL, exports it, imports the generated module
from its file (so a coding line counts) under an audit hook and calls the exported function: no import,
open or program of the attacker's happens, and the module is valid Python or the export is refused.
"""

from __future__ import annotations

import inspect
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from audit_support import MARKER, attacker_ran, audited, import_file
from cli_support import run_cli
from muscle_mem import Check, Engine
from muscle_mem.cli import script
from muscle_mem.cli.common import UsageError
from muscle_mem.model.provenance import Output, Param
from muscle_mem.model.trajectory import Step, Trajectory

PAYLOAD = f"\n__import__('{MARKER}')\n#"
"""A line of code after a line break: it runs if a stored text ends a comment or a string early."""
INDENTED = f"\n    __import__('{MARKER}')\n    #"
"""The same inside the function's body: it runs when the function is called."""
UTF7_LINE = f"coding: utf-7 +AAo-__import__(+ACc-{MARKER}+ACc-)+AAo-#"
"""A coding line: if Python read the file as UTF-7, ``+AAo-`` would be a line break before the payload."""
globals_touched: dict[str, Any] = {}


class Customer(NamedTuple):
    customer_id: str
    name: str


def find_customer(email: str) -> Customer:
    return Customer("C-7", "Ann")


def refund(customer_id: str, amount: int) -> str:
    return f"R-{amount}"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A SQLite file holding one real recording: a param, data flow through a field, an equality check."""
    path = tmp_path_factory.mktemp("recorded") / "cache.db"
    engine = Engine(f"sqlite:///{path}")
    find = engine.register(find_customer, pre_check=Check.equal(lambda email: "@" in email))
    pay = engine.register(refund)
    engine.set_agent(lambda task, email, amount: pay(find(email).customer_id, amount))
    result = engine("refund ann", "ann@example.org", 30, params={"email": "ann@example.org", "amount": 30})
    engine.close()
    assert result.stored and result.trajectory_id is not None
    return path, result.trajectory_id


def rewritten(tmp_path: Path, recorded: tuple[Path, str], change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the recorded store whose row was rewritten by SQL (its record changed by ``change``)."""
    source, tid = recorded
    path = tmp_path / "cache.db"
    shutil.copy(source, path)
    with sqlite3.connect(path) as db:
        [(text,)] = db.execute("SELECT record FROM trajectories WHERE id = ?", (tid,)).fetchall()
        record = json.loads(text)
        change(record)
        db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(record), tid))
    db.close()
    return path


def export_and_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path, tid: str
) -> tuple[int, ModuleType | None, list[str]]:
    """Export the trajectory as Python, import it and call its function under the audit hook.

    Returns the export's status, the module (None if refused) and the events showing a payload ran.
    """
    target = tmp_path / "exported.py"
    ran = run_cli(capsys, "export", "--python", tid, str(target), "--store", f"sqlite:///{store}")
    if ran.status != 0:
        assert ran.status == 2 and "cannot" in ran.err and not target.exists(), ran.err
        return ran.status, None, []
    tools = _Tools()
    with audited() as events:
        module = import_file(target, "muscle_mem_exported")
        function = next(v for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
        params = {"email": "bob@example.org", "amount": 12}
        function(tools, **{k: v for k, v in params.items() if k in inspect.signature(function).parameters})
    assert tools.calls[-1][0] == "refund", tools.calls
    return 0, module, attacker_ran(events)


class _Tools:
    """The tools a reviewer would pass: records each call, answers like the real ones."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args))
            return Customer("C-9", "Bob") if "find" in name else "R-12"

        return call


@pytest.mark.parametrize(
    "vector",
    ["record id", "tag", "tool name", "tool version", "task coding line", "id coding line", "docstring"],
)
def test_a_stored_text_never_ends_a_comment_or_a_string(
    vector: str, recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line break, a coding line or quotes in a stored text stay inside its comment or its literal."""

    def change(record: dict[str, Any]) -> None:
        if vector == "record id":
            record["id"] = "x" + PAYLOAD
        elif vector == "tag":
            record["tags"] = ["refunds" + PAYLOAD]
        elif vector == "tool name":
            record["steps"][0]["tool"] = "find_customer" + INDENTED
        elif vector == "tool version":
            record["steps"][0]["version"] = "v1" + INDENTED
        elif vector == "task coding line":
            record["task"] = UTF7_LINE
        elif vector == "id coding line":
            record["id"] = UTF7_LINE
        else:
            record["task"] = f'refund """ + __import__("{MARKER}") + """ \\'

    store = rewritten(tmp_path, recorded, change)
    status, module, ran = export_and_run(capsys, tmp_path, store, recorded[1])
    assert status == 0 and module is not None
    assert ran == []
    assert module.__doc__ is None  # the first statement is the function, not a string a payload opened


def test_a_tool_named_like_a_special_method_is_refused(
    recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool name walking special attributes (``refund.__globals__.update``) would call Python's own
    methods with stored arguments: the export is refused."""

    def change(record: dict[str, Any]) -> None:
        record["steps"][1]["tool"] = "refund.__globals__.update"
        record["steps"][1]["args"] = [{"static": {"globals_touched": MARKER}}]

    store = rewritten(tmp_path, recorded, change)
    status, module, _ = export_and_run(capsys, tmp_path, store, recorded[1])
    assert status == 2 and module is None
    assert globals_touched == {}


def test_a_path_through_a_special_attribute_is_never_walked(
    recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row whose output path names ``__class__`` is refused, and so is such a path however it was loaded."""

    def change(record: dict[str, Any]) -> None:
        record["steps"][1]["args"][0] = {"output": 0, "path": [["attr", "__class__"], ["attr", "__init__"]]}

    store = rewritten(tmp_path, recorded, change)
    assert export_and_run(capsys, tmp_path, store, recorded[1])[0] == 2
    for path in ((("attr", "__class__"),), (("attr", "ｃｌａｓｓ"),), (("attr", "class"),), (("key", 1.5),)):
        t = Trajectory(
            task_key="k",
            task="refund",
            steps=(
                Step("find_customer", "v1", (Param("email"),)),
                Step("refund", "v1", (Output(0, path),)),  # type: ignore[arg-type]
            ),
        )
        with pytest.raises(UsageError, match="cannot export an output path"):
            script.render(t, None)


def test_use_statistics_that_are_not_numbers_are_left_out(
    recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A text in the ``hits`` column (SQLite keeps any type) is neither written nor a crash."""
    store = rewritten(tmp_path, recorded, lambda record: None)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE usage SET hits = ?", (f"1{PAYLOAD}",))
    db.close()
    status, module, ran = export_and_run(capsys, tmp_path, store, recorded[1])
    assert status == 0 and module is not None and ran == []
    assert "Replayed" not in (tmp_path / "exported.py").read_text()


def test_the_unchanged_recording_exports_and_replays(
    recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control: the row as recorded exports to a function that calls both tools with the fresh values."""
    store = rewritten(tmp_path, recorded, lambda record: None)
    status, module, ran = export_and_run(capsys, tmp_path, store, recorded[1])
    assert status == 0 and module is not None and ran == []
    source = (tmp_path / "exported.py").read_text()
    assert source.startswith("# -*- coding: utf-8 -*-\n")
    assert "tools.refund(find_customer_result.customer_id, amount)" in source
