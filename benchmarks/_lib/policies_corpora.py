"""Task texts the policies were never tuned on: AgentDojo's user prompts and a chat corpus's openings.

- AgentDojo (``agentdojo``, MIT): the ``PROMPT`` of every user task of its four suites, read from the
  installed package's sources, or else from its wheel fetched like bfcl-eval's (``pip download
  --no-deps`` into the benchmark cache). The sources are parsed with :mod:`ast`, never imported nor
  run; a prompt built from class constants (an f-string) gets their values, any other part stays
  a ``{name}`` placeholder.
- Chat: the opening line of every conversation of ``chatterbot-corpus`` (BSD-3-Clause), a dialog
  corpus in 28 languages, each file one topic (``english/food``, ``italian/sports``...). No chat
  corpus ships inside the packages installed for this project, so its wheel is fetched the same way.

Either returns None (and the benchmark says so) when its package can be neither found nor fetched.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from _lib.policies_data import CACHE

AGENTDOJO = "agentdojo==0.1.35"
CHAT = "chatterbot-corpus==1.3.3"
SUITES = ("workspace", "travel", "banking", "slack")


def fetched(spec: str) -> Path | None:
    """The wheel of a pinned package in the benchmark cache, downloaded once; None if it cannot be."""
    CACHE.mkdir(parents=True, exist_ok=True)
    name, _, version = spec.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    if not sorted(CACHE.glob(pattern)):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(CACHE), spec],
            check=False,
            capture_output=True,
        )
    found = sorted(CACHE.glob(pattern))
    return found[0] if found else None


def _sources(package: str, spec: str) -> tuple[dict[str, str], str] | None:
    """The text of every file of a package, by path inside it, and where it came from."""
    found = importlib.util.find_spec(package)
    if found is not None and found.submodule_search_locations:
        root = Path(next(iter(found.submodule_search_locations)))
        files = {str(p.relative_to(root.parent)): p for p in root.rglob("*") if p.suffix in (".py", ".yml")}
        return {k: p.read_text(encoding="utf-8") for k, p in files.items()}, f"installed {package}"
    wheel = fetched(spec)
    if wheel is None:
        return None
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.endswith((".py", ".yml"))]
        return {n: archive.read(n).decode("utf-8") for n in names}, f"{spec} wheel (read, not installed)"


def agentdojo_prompts() -> tuple[dict[str, list[str]], str] | None:
    """The distinct user-task prompts of each suite (every version of it), and their source."""
    sources = _sources("agentdojo", AGENTDOJO)
    if sources is None:
        return None
    files, origin = sources
    prompts: dict[str, dict[str, None]] = {suite: {} for suite in SUITES}
    for path, text in sorted(files.items()):
        parts = path.split("/")
        if parts[-1] != "user_tasks.py" or parts[-2] not in prompts:
            continue
        for prompt in _prompts(ast.parse(text)):
            prompts[parts[-2]].setdefault(" ".join(prompt.split()), None)
    return {suite: list(found) for suite, found in prompts.items() if found}, origin


def _prompts(module: ast.Module) -> list[str]:
    constants = _constants(module.body)
    found = []
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            scope = {**constants, **_constants(node.body)}
            for statement in node.body:
                if isinstance(statement, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "PROMPT" for t in statement.targets
                ):
                    found.append(_text(statement.value, scope))
    return found


def _constants(body: list[ast.stmt]) -> dict[str, str]:
    """String and number constants assigned by name in a scope (their literal values, nothing run)."""
    values = {}
    for statement in body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            value = statement.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str | int | float):
                for target in targets:
                    if isinstance(target, ast.Name):
                        values[target.id] = str(value.value)
    return values


def _text(node: ast.expr, scope: dict[str, str]) -> str:
    """The text of a prompt expression: literals and known names; anything else a ``{placeholder}``."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v, scope) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _text(node.value, scope)
    if isinstance(node, ast.Name):
        return scope.get(node.id, "{" + node.id.strip("_").lower() + "}")
    if isinstance(node, ast.Attribute):
        return scope.get(node.attr, "{" + node.attr.strip("_").lower() + "}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, scope) + _text(node.right, scope)
    return "{value}"


_OPENING = re.compile(r"^- - (.+)$")


def chat_openings() -> tuple[dict[str, list[str]], str] | None:
    """The distinct opening lines of the corpus's conversations, by topic (``language/file``)."""
    sources = _sources("chatterbot_corpus", CHAT)
    if sources is None:
        return None
    files, origin = sources
    topics: dict[str, dict[str, None]] = {}
    for path, text in sorted(files.items()):
        parts = path.split("/")
        if not path.endswith(".yml") or len(parts) < 3 or parts[-3] != "data":
            continue
        topic = f"{parts[-2]}/{parts[-1].removesuffix('.yml')}"
        for line in text.splitlines():
            match = _OPENING.match(line)
            if match:
                opening = match.group(1).strip()
                if len(opening) > 1 and opening[0] == opening[-1] and opening[0] in "'\"":
                    opening = opening[1:-1]
                if opening:
                    topics.setdefault(topic, {}).setdefault(opening, None)
    return {topic: list(found) for topic, found in topics.items()}, origin
