"""A trajectory as a Python function a person can review and commit (``muscle-mem export --python``).

Params become the function's keyword parameters, data-flow references become local variables that
hold earlier tools' outputs, and each step's checks are comments showing the recorded snapshot.
Tools are called on a ``tools`` object: the engine's context (the object whose methods are tools)
or any namespace holding the tool functions.
"""

from __future__ import annotations

import datetime as dt
import json
import keyword
import math
import pprint
import re
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from muscle_mem import codec
from muscle_mem.cli import cache
from muscle_mem.cli.phrases import plural
from muscle_mem.forms import Form
from muscle_mem.provenance import (
    Agree,
    Arg,
    Const,
    Guarded,
    Output,
    Param,
    PathElement,
    Struct,
    Template,
    Text,
    all_args,
)
from muscle_mem.trajectory import Snapshot, Trajectory, Usage

LINE = 100
"""Calls longer than this put one argument a line."""
SNAPSHOT_LINES = 24
"""Snapshot comments longer than this are cut."""


def render(t: Trajectory, usage: Usage | None) -> str:
    """The source of a module holding one function that performs ``t``'s steps."""
    names = _Names()
    tools = names.claim("tools")
    imports: set[str] = set()
    params = {p: names.claim(p) for p in _params(t)}
    used = _used_outputs(t)
    outputs = {i: names.claim(f"{_short(t.steps[i].tool)}_result") for i in sorted(used) if i < len(t.steps)}
    expr = _Expr(params, outputs, imports)
    body = _body(t, expr, tools, outputs)

    out = [f"# muscle-mem trajectory {t.id}, exported with `muscle-mem export --python`."]
    out += _comment(f"Task: {t.task}", "")
    out.append(f"# Tags: {', '.join(t.tags) or '(none)'}")
    out.append(
        f"# Recorded {cache.timestamp(t.created_at)}: {plural(len(t.steps), 'tool call')}, "
        f"{cache.seconds(t.agent_seconds)} of agent time, {plural(t.tokens, 'LLM token')}."
    )
    if usage is not None:
        out.append(
            f"# Replayed {plural(usage.hits, 'time')} since, saving {cache.seconds(usage.saved_seconds)} of agent time."
        )
    out += [
        "# The engine replays a step only if its pre-check captures what it captured when recorded",
        "# (the snapshots in the comments below), and goes on only if its post-check matches too.",
        "",
        "",
    ]
    signature = ", ".join([tools, "*", *params.values()]) if params else tools
    out += [f"import {module}" for module in sorted(imports - set(_HELPERS))]
    for helper in sorted(imports & set(_HELPERS)):
        out += ["", "", *_HELPERS[helper]]
    if imports:
        out += ["", ""]
    out.append(f"def {_function_name(t)}({signature}):")
    out.append(f'    """{_docstring(t.task)}"""')
    renamed = [(p, n) for p, n in params.items() if p != n]
    for param, name in renamed:
        out.append(f"    # `{name}` is the param {param!r}")
    out += body
    return "\n".join(out) + "\n"


def _body(t: Trajectory, expr: _Expr, tools: str, outputs: dict[int, str]) -> list[str]:
    """The function's steps and its return statement (rendering them collects the imports)."""
    out: list[str] = []
    for number, step in enumerate(t.steps):
        out.append("")
        out.append(
            f"    # step {number}: {step.tool} (version {step.version}, {cache.seconds(step.seconds)} when recorded)"
        )
        out += _snapshot("pre-check", step.pre)
        call_args = [expr.of(a) for a in step.args] + [_keyword(k, expr.of(a)) for k, a in step.kwargs]
        target = f"{outputs[number]} = " if number in outputs else ""
        callee = _callee(tools, step.tool)
        if callee.startswith("builtins."):
            expr.imports.add("builtins")
        out += _call(f"    {target}{callee}", call_args)
        out += _snapshot("post-check", step.post)
    out.append("")
    out += _return(expr, t.result)
    return out


_MISSING = "_missing"
_MISSING_HELPER = [
    "def _missing(what):",
    '    """A recorded value that the store no longer decodes as its class: replaying it would guess."""',
    '    raise LookupError(f"{what} could not be rebuilt from the store")',
]
_AGREE = "_agree"
_AGREE_HELPER = [
    "def _agree(value, *others):",
    '    """A value recorded with several origins: used only while they all give the same value."""',
    "    if any(type(other) is not type(value) or other != value for other in others):",
    '        raise LookupError(f"the origins of a recorded value disagree: {(value, *others)!r}")',
    "    return value",
]
_HELPERS = {_MISSING: _MISSING_HELPER, _AGREE: _AGREE_HELPER}
_RESERVED = frozenset(("builtins", "datetime", "decimal", "uuid", "pathlib", "format", *_HELPERS))
"""Names the generated code uses itself: no param may take them (builtins are called through
``builtins.``, so a param may be named ``getattr`` or ``float``)."""


class _Names:
    """Unique Python identifiers."""

    def __init__(self) -> None:
        self.taken: set[str] = set(_RESERVED)

    def claim(self, wanted: str) -> str:
        base = re.sub(r"\W", "_", wanted, flags=re.ASCII).strip("_") or "value"
        if base[0].isdigit():
            base = f"p_{base}"
        if keyword.iskeyword(base) or base in ("True", "False", "None"):
            base += "_"
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


class _Expr:
    """Python expressions for recorded arguments."""

    def __init__(self, params: dict[str, str], outputs: dict[int, str], imports: set[str]) -> None:
        self.params = params
        self.outputs = outputs
        self.imports = imports
        """Modules the constants need (and ``_missing`` when one no longer decodes)."""

    def of(self, arg: Arg) -> str:
        match arg:
            case Const(value):
                return self.literal(value)
            case Param(name, form):
                return _formed(self.params[name], form)
            case Output(step, path, form, _):
                return _formed(self.outputs.get(step, f"step{step}_result") + _path(path), form)
            case Agree(options):
                self.imports.add(_AGREE)
                return f"{_AGREE}(" + ", ".join(self.of(o) for o in options) + ")"
            case Guarded(value, _, _):
                return self.of(value)
            case Template():
                return self._template(arg)
            case Struct(container, items):
                inner = [f"{k!r}: {self.of(a)}" if container == "dict" else self.of(a) for k, a in items]
                if container == "dict":
                    return "{" + ", ".join(inner) + "}"
                if container == "tuple":
                    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
                return "[" + ", ".join(inner) + "]"
        raise TypeError(f"not a recorded value: {arg!r}")

    def _template(self, arg: Template) -> str:
        """An f-string; a concatenation where an f-string could not hold an expression (a quote or a
        backslash in it, before Python 3.12)."""
        values = [
            (True, part.text) if isinstance(part, Text) else (False, self.of(part)) for part in arg.parts
        ]
        if any(not is_text and ('"' in code or "\\" in code) for is_text, code in values):
            return " + ".join(repr(code) if is_text else f"str({code})" for is_text, code in values)
        parts = (
            json.dumps(code, ensure_ascii=False)[1:-1].replace("{", "{{").replace("}", "}}")
            if is_text
            else "{" + code + "}"
            for is_text, code in values
        )
        return 'f"' + "".join(parts) + '"'

    def literal(self, value: Any) -> str:
        """Python source for a stored constant, importing the standard modules it needs."""
        if isinstance(value, float) and not math.isfinite(value):
            self.imports.add("builtins")
            return f"builtins.float({str(value)!r})"
        if isinstance(value, dt.date | dt.time | dt.timedelta):
            self.imports.add("datetime")
            return repr(value)  # datetime.date(2024, 1, 2)
        if isinstance(value, Decimal):
            self.imports.add("decimal")
            return f"decimal.Decimal({str(value)!r})"
        if isinstance(value, uuid.UUID):
            self.imports.add("uuid")
            return f"uuid.UUID({str(value)!r})"
        if isinstance(value, PurePath):
            self.imports.add("pathlib")
            return f"pathlib.{type(value).__name__}({str(value)!r})"
        if isinstance(value, codec.Opaque):
            self.imports.add(_MISSING)
            return f"{_MISSING}({f'a {value.kind} {value.type_name}'!r})"
        if type(value) in (list, tuple, set, frozenset):
            inner = [self.literal(v) for v in value]
            if type(value) is list:
                return "[" + ", ".join(inner) + "]"
            if type(value) is tuple:
                return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
            return f"{type(value).__name__}([{', '.join(inner)}])"
        if type(value) is dict:
            return "{" + ", ".join(f"{self.literal(k)}: {self.literal(v)}" for k, v in value.items()) + "}"
        return repr(value)


def _all_args(t: Trajectory) -> Iterator[Arg]:
    for step in t.steps:
        for arg in (*step.args, *(a for _, a in step.kwargs)):
            yield from all_args(arg)
    yield from all_args(t.result)


def _params(t: Trajectory) -> list[str]:
    """The params the steps use, in order of first use."""
    return list(dict.fromkeys(arg.name for arg in _all_args(t) if isinstance(arg, Param)))


def _used_outputs(t: Trajectory) -> set[int]:
    return {arg.step for arg in _all_args(t) if isinstance(arg, Output)}


def _formed(code: str, form: Form) -> str:
    """``code`` written in ``form``."""
    if form.kind == "same":
        return code
    if form.kind in ("int", "float", "str", "list", "tuple"):
        return f"{form.kind}({code})"
    if form.kind == "number":
        number = f"float({code})" if form.decimals is not None else f"int({code})"
        return f"format({number}, {form.spec!r})"
    return f"{code}.{form.kind}()"


def _path(path: tuple[PathElement, ...]) -> str:
    return "".join(f".{v}" if k == "attr" else f"[{v!r}]" for k, v in path)


def _short(tool: str) -> str:
    return tool.rsplit(".", 1)[-1]


def _callee(tools: str, tool: str) -> str:
    """``tools.name``, ``tools.Class.name``, or ``builtins.getattr(tools, "odd name")``; a function's qualified
    name is called by what follows ``<locals>.``, as a namespace would hold it."""
    parts = tool.rsplit("<locals>.", 1)[-1].split(".")
    if all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return ".".join([tools, *parts])
    return f"builtins.getattr({tools}, {tool!r})"


def _keyword(name: str, value: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return f"{name}={value}"
    return f"**{{{name!r}: {value}}}"


def _call(head: str, args: list[str]) -> list[str]:
    single = f"{head}({', '.join(args)})"
    if len(single) <= LINE or not args:
        return [single]
    return [f"{head}(", *(f"        {a}," for a in args), "    )"]


def _return(expr: _Expr, result: Arg) -> list[str]:
    single = f"    return {expr.of(result)}"
    if len(single) <= LINE or not isinstance(result, Struct) or not result.items:
        return [single]
    container, items = result.container, result.items
    brackets = {"dict": "{}", "tuple": "()", "list": "[]"}[container]
    inner = [f"{k!r}: {expr.of(a)}" if container == "dict" else expr.of(a) for k, a in items]
    return [f"    return {brackets[0]}", *(f"        {item}," for item in inner), f"    {brackets[1]}"]


def _snapshot(label: str, snapshot: Snapshot | None) -> list[str]:
    if snapshot is None:
        return []
    text = pprint.pformat(snapshot.value, width=LINE - 10, compact=True, sort_dicts=False)
    lines = text.splitlines() or [""]
    if len(lines) > SNAPSHOT_LINES:
        lines = [*lines[:SNAPSHOT_LINES], f"... ({plural(len(lines) - SNAPSHOT_LINES, 'more line')})"]
    if len(lines) == 1:
        return _comment(f"{label}, as recorded: {lines[0]}", "    ")
    return [f"    # {label}, as recorded:"] + [
        line for text in lines for line in _comment("  " + text, "    ")
    ]


def _comment(text: str, indent: str) -> list[str]:
    """``text`` as comment lines (unprintable characters replaced, so the source stays valid)."""
    clean = "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in text)
    return [f"{indent}# {line}".rstrip() for line in clean.split("\n")]


def _function_name(t: Trajectory) -> str:
    words = re.findall(r"[a-z0-9]+", re.sub(r"\{[^{}]*\}", " ", t.task).lower(), flags=re.ASCII)
    name = "_".join(words[:6])[:48].strip("_")
    if not name:
        return f"replay_{t.id[:8]}"
    if name[0].isdigit():
        name = f"task_{name}"
    return name + "_" if keyword.iskeyword(name) else name


def _docstring(task: str) -> str:
    line = " ".join(task.split()) or "A recorded task."
    text = line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    clean = "".join(c if c.isprintable() else "\ufffd" for c in text)
    return (
        clean
        + ("" if clean.endswith((".", "!", "?")) else ".")
        + " Replays a trajectory recorded by muscle-mem."
    )
