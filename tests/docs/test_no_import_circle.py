"""The library's modules import each other in one direction: no circle, type-only imports included.

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
