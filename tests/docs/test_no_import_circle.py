"""The library's modules import each other in one direction: no circle (type-only imports included), arrows down.

An import made inside a function (an optional extra, imported when it is used) is left out: it runs
after every module is loaded and is no part of the map ``docs/architecture.md`` draws.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted((SRC / "muscle_mem").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_at_top(path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules a file imports at module level, in ``if TYPE_CHECKING:`` blocks too."""
    found: set[str] = set()
    for node in _top_level(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named = [f"{node.module}.{alias.name}" for alias in node.names]
            found.update(name for name in named if name in known)
            if node.module in known and any(name not in known for name in named):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
    return found


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements run when a module is imported (or type-checked): not inside functions or classes."""
    statements: list[ast.stmt] = []
    for node in body:
        statements.append(node)
        if isinstance(node, ast.If | ast.Try):
            statements += _top_level(node.body) + _top_level(node.orelse)
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    statements += _top_level(handler.body)
    return statements


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other (strongly connected, more than one)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in graph[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in graph:
        if module not in order:
            visit(module)
    return found


def test_no_two_modules_import_each_other_even_for_types() -> None:
    known = modules()
    graph = {name: imports_at_top(path, known) - {name} for name, path in known.items()}
    assert circles(graph) == []


def test_the_check_finds_a_circle_through_a_type_only_import() -> None:
    """Engine importing the session and the session importing Engine for a type is a circle."""
    graph = {"engine": {"session"}, "session": {"engine"}, "result": set()}
    assert circles(graph) == [["engine", "session"]]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from muscle_mem.engine import Engine\n"
    )
    assert any(isinstance(node, ast.ImportFrom) for node in _top_level(tree.body))


ENGINE_LEVEL = ("engine", "session", "_outcome", "_parts", "_registration", "options", "telemetry")
"""The modules at the top that run a call (``engine.py`` and its own parts): nothing below imports them."""


def _graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_at_top(path, known) - {name} for name, path in known.items()}


def _in(module: str, *rooms: str) -> bool:
    """Whether ``module`` is one of ``rooms`` (``model``, ``cli``...) of the package or inside one."""
    return any(module == f"muscle_mem.{room}" or module.startswith(f"muscle_mem.{room}.") for room in rooms)


def _crossings(graph: dict[str, set[str]], source: tuple[str, ...], target: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{module} -> {other}"
        for module, others in graph.items()
        if _in(module, *source)
        for other in others
        if _in(other, *target)
    )


def test_the_data_model_imports_only_itself_the_errors_and_the_secret_patterns() -> None:
    """``model/`` is at the bottom: it imports nothing of ``record/``, ``replay/``, ``cache/`` or the engine."""
    graph = _graph()
    allowed = ("model", "errors", "secrecy.patterns")
    outside = sorted(
        f"{module} -> {other}"
        for module, others in graph.items()
        if _in(module, "model")
        for other in others
        if other != "muscle_mem" and not _in(other, *allowed)
    )
    assert outside == []


def test_record_replay_and_cache_never_import_the_engine() -> None:
    """The rooms a call goes through are below the engine: arrows point down, to them, never back."""
    assert _crossings(_graph(), ("record", "replay", "cache", "secrecy"), ENGINE_LEVEL) == []


def test_stores_eviction_and_embedders_know_the_model_never_the_engine() -> None:
    """Stores, eviction policies and embedders import the data model, never a room a call goes through."""
    graph = _graph()
    assert (
        _crossings(graph, ("stores", "eviction", "embed"), ("record", "replay", "cache", *ENGINE_LEVEL)) == []
    )


def test_nothing_imports_the_cli_the_demo_or_the_integrations() -> None:
    """Each is imported by itself only; the CLI runs the demo (``muscle-mem demo``)."""
    importers = {"cli": ("cli",), "demo": ("demo", "cli"), "integrations": ("integrations",)}
    wrong = sorted(
        f"{module} -> {other}"
        for module, others in _graph().items()
        for other in others
        for room, allowed in importers.items()
        if _in(other, room) and not _in(module, *allowed)
    )
    assert wrong == []


def test_the_check_finds_a_crossing_from_the_model_up() -> None:
    """A model module importing the run in progress is named, importer first."""
    graph = {"muscle_mem.model.trajectory": {"muscle_mem.record._run"}, "muscle_mem.record._run": set()}
    assert _crossings(graph, ("model",), ("record",)) == [
        "muscle_mem.model.trajectory -> muscle_mem.record._run"
    ]
