"""A trajectory as a Python function a person can review and commit (``muscle-mem export --python``).

Params become the function's keyword parameters, data-flow references become local variables that
hold earlier tools' outputs, and each step's checks are comments showing the recorded snapshot.
Tools are called on a ``tools`` object: the engine's context (the object whose methods are tools)
or any namespace holding the tool functions.

The source is safe by construction, whoever wrote the store: every stored value is written as a
literal (``repr`` of a plain value, or its stored encoding passed to a helper that refuses to run),
every stored text in a comment is escaped and redacted, names are ASCII identifiers checked here, and
the first line fixes the encoding. What cannot be written so (an attribute path that is not a plain
field name, a tool named like a special method) is refused with a :class:`UsageError`.
"""

from __future__ import annotations

import datetime as dt
import keyword
import math
import pprint
import re
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import PosixPath, PurePosixPath, PureWindowsPath, WindowsPath
from typing import Any, get_args

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli.common import UsageError
from muscle_mem.cli.phrases import plural
from muscle_mem.cli.untrusted import figures_of, shown
from muscle_mem.model import codec
from muscle_mem.model._forms import Form, FormKind
from muscle_mem.model.provenance import (
    JSON,
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
from muscle_mem.model.trajectory import Snapshot, Trajectory, Usage
from muscle_mem.secrecy import patterns as secret_patterns
from muscle_mem.secrecy.patterns import scrub

_PATHS = (PurePosixPath, PureWindowsPath, PosixPath, WindowsPath)

LINE = 100
"""Calls longer than this put one argument a line."""
SNAPSHOT_LINES = 24
"""Snapshot comments longer than this are cut."""


def render(t: Trajectory, usage: Usage | None) -> str:
    """The source of a module holding one function that performs ``t``'s steps.

    Raises :class:`UsageError` for a trajectory that cannot be written safely.
    """
    names = _Names()
    tools = names.claim("tools")
    imports: set[str] = set()
    params = {p: names.claim(p) for p in _params(t)}
    used = _used_outputs(t)
    outputs = {i: names.claim(f"{_short(t.steps[i].tool)}_result") for i in sorted(used) if i < len(t.steps)}
    expr = _Expr(params, outputs, imports)
    body = _body(t, expr, tools, outputs)

    out = [
        _ENCODING,
        *_comment(f"muscle-mem trajectory {shown(t.id)}, exported with `muscle-mem export --python`.", ""),
    ]
    out += _comment(f"Task: {scrub(t.task)}", "")
    out += _comment(f"Tags: {shown(', '.join(t.tags)) or '(none)'}", "")
    out.append(
        f"# Recorded {cache.timestamp(t.created_at)}: {plural(len(t.steps), 'tool call')}, "
        f"{cache.seconds(t.agent_seconds)} of agent time, {plural(t.tokens, 'LLM token')}."
    )
    usage = figures_of(usage)
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
    out.append(f"    {_docstring(t.task)}")
    renamed = [(p, n) for p, n in params.items() if p != n]
    for param, name in renamed:
        out += _comment(f"`{name}` is the param {shown(repr(param))}", "    ")
    out += body
    return "\n".join(out) + "\n"


def _body(t: Trajectory, expr: _Expr, tools: str, outputs: dict[int, str]) -> list[str]:
    """The function's steps and its return statement (rendering them collects the imports)."""
    out: list[str] = []
    for number, step in enumerate(t.steps):
        out.append("")
        out += _comment(
            f"step {number}: {shown(step.tool)} (version {shown(step.version)}, "
            f"{cache.seconds(step.seconds)} when recorded)",
            "    ",
        )
        out += _snapshot("pre-check", step.pre)
        names = [k for k, _ in step.kwargs]
        if len(set(names)) != len(names):
            raise UsageError(f"cannot export step {number}: it passes a keyword argument twice")
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


_ENCODING = "# -*- coding: utf-8 -*-"
"""The first line: it fixes the encoding, so no stored text on the second line can choose another."""
_MISSING = "_missing"
_MISSING_HELPER = [
    "def _missing(what):",
    '    """A recorded value that the store no longer decodes as its class: replaying it would guess."""',
    '    raise LookupError(f"{what} could not be rebuilt from the store")',
]
_REBUILD = "_rebuild"
_REBUILD_HELPER = [
    "def _rebuild(stored):",
    '    """A recorded instance of a class, as muscle-mem stores it: rebuild it by hand to run this step."""',
    '    raise LookupError(f"rebuild this recorded value by hand: {stored!r}")',
]
_SECRET = "_secret"
_SECRET_HELPER = [
    "def _secret(what):",
    '    """A recorded value that looks like a secret, left out of this file: pass it in yourself."""',
    '    raise LookupError(f"a value recorded here looks like {what} and is not written out")',
]
_AGREE = "_agree"
_AGREE_HELPER = [
    "def _agree(value, *others):",
    '    """A value recorded with several origins: used only while they all give the same value."""',
    "    if any(type(other) is not type(value) or other != value for other in others):",
    '        raise LookupError(f"the origins of a recorded value disagree: {(value, *others)!r}")',
    "    return value",
]
_HELPERS = {
    _MISSING: _MISSING_HELPER,
    _REBUILD: _REBUILD_HELPER,
    _SECRET: _SECRET_HELPER,
    _AGREE: _AGREE_HELPER,
}
_BUILTINS = ("int", "float", "str", "list", "tuple", "set", "frozenset", "bytearray", "format")
"""Builtins the generated code calls by their plain name."""
_RESERVED = frozenset(("builtins", "datetime", "decimal", "uuid", "pathlib", *_BUILTINS, *_HELPERS))
"""Names the generated code uses itself: no param may take them (other builtins are called through
``builtins.``, so a param may be named ``getattr``)."""
_ASCII_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DUNDER = re.compile(r"__\w*__")


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
                if JSON in path:
                    self.imports.add("json")
                return _formed(_walked(self.outputs.get(step, f"step{int(step)}_result"), path), form)
            case Agree(options):
                self.imports.add(_AGREE)
                return f"{_AGREE}(" + ", ".join(self.of(o) for o in options) + ")"
            case Guarded(value, _, _):
                return self.of(value)
            case Template():
                return self._template(arg)
            case Struct(container, items):
                return _container(container, [(self.literal(k), self.of(a)) for k, a in items])
        raise TypeError(f"not a recorded value: {arg!r}")

    def _template(self, arg: Template) -> str:
        """An f-string; a concatenation where an f-string could not hold an expression (a quote or a
        backslash in it, before Python 3.12)."""
        values: list[tuple[bool, str]] = []
        for part in arg.parts:
            secret = secret_patterns.kind_of(part.text) if isinstance(part, Text) else None
            if secret is not None:
                values.append((False, self._secret(secret)))
            else:
                values.append((True, part.text) if isinstance(part, Text) else (False, self.of(part)))
        if any(not is_text and ('"' in code or "\\" in code) for is_text, code in values):
            return " + ".join(_string(code) if is_text else f"str({code})" for is_text, code in values)
        parts = (
            _escaped(code, '"').replace("{", "{{").replace("}", "}}")
            if is_text
            else ("{ " if code.startswith("{") else "{") + code + "}"
            for is_text, code in values
        )
        return 'f"' + "".join(parts) + '"'

    def _secret(self, kind: str) -> str:
        self.imports.add(_SECRET)
        return f"{_SECRET}({_string(kind)})"

    def literal(self, value: Any) -> str:
        """Python source for a stored constant, importing the standard modules it needs.

        Only values of the exact plain types are written as themselves; an instance of any other class
        is written as its stored encoding, passed to a helper that refuses to run.
        """
        kind = type(value)
        if kind is str:
            secret = secret_patterns.kind_of(value)
            return self._secret(secret) if secret is not None else _string(value)
        if kind is int:
            return _int_literal(value)
        if value is None or kind in (bool, bytes):
            return repr(value)
        if kind is float:
            if math.isfinite(value):
                return repr(value)
            self.imports.add("builtins")
            return f"builtins.float({_string(str(value))})"
        if kind in (list, tuple, set, frozenset, bytearray):
            inner = [self.literal(v) for v in value]
            if kind is bytearray:
                return f"bytearray({bytes(value)!r})"
            if kind is list or kind is tuple:
                return _container(kind.__name__, [("", item) for item in inner])
            return f"{kind.__name__}([{', '.join(inner)}])"
        if kind is dict:
            return _container("dict", [(self.literal(k), self.literal(v)) for k, v in value.items()])
        if isinstance(value, codec.Opaque):
            self.imports.add(_MISSING)
            return f"{_MISSING}({_string(f'a {value.kind} {value.type_name}')})"
        standard = self._standard(value)
        if standard is not None:
            return standard
        self.imports.add(_REBUILD)
        try:
            encoded = codec.encode(value)
        except (codec.CodecError, RecursionError):
            encoded = f"a {kind.__name__} muscle-mem cannot encode"
        return f"{_REBUILD}({self.literal(encoded)})"

    def _standard(self, value: Any) -> str | None:
        """A value of a standard library type the codec stores, as a call of its exact class."""
        kind = type(value)
        if kind in (dt.date, dt.datetime, dt.time) and type(getattr(value, "tzinfo", None)) in (
            type(None),
            dt.timezone,
        ):
            self.imports.add("datetime")
            return repr(value)  # datetime.date(2024, 1, 2); an offset is a datetime.timezone
        if kind is dt.timedelta:
            self.imports.add("datetime")
            return f"datetime.timedelta({value.days!r}, {value.seconds!r}, {value.microseconds!r})"
        if kind is Decimal:
            self.imports.add("decimal")
            return f"decimal.Decimal({_string(str(value))})"
        if kind is uuid.UUID:
            self.imports.add("uuid")
            return f"uuid.UUID({_string(str(value))})"
        if kind in _PATHS:
            self.imports.add("pathlib")
            return f"pathlib.{kind.__name__}({_string(str(value))})"
        return None


def _all_args(t: Trajectory) -> Iterator[Arg]:
    for step in t.steps:
        for arg in step.arguments:
            yield from all_args(arg)
    yield from all_args(t.result)


def _params(t: Trajectory) -> list[str]:
    """The params the steps use, in order of first use."""
    return list(dict.fromkeys(arg.name for arg in _all_args(t) if isinstance(arg, Param)))


def _used_outputs(t: Trajectory) -> set[int]:
    return {arg.step for arg in _all_args(t) if isinstance(arg, Output)}


def _formed(code: str, form: Form) -> str:
    """``code`` written in ``form``."""
    if form.kind not in get_args(FormKind):
        raise UsageError(f"cannot export a value written in the unknown form {shown(form.kind)}")
    if form.kind == "same":
        return code
    if form.kind in ("int", "float", "str", "list", "tuple"):
        return f"{form.kind}({code})"
    if form.kind == "number":
        number = f"float({code})" if form.decimals is not None else f"int({code})"
        return f"format({number}, {form.spec!r})"
    return f"{code}.{form.kind}()"


def _walked(code: str, path: tuple[PathElement, ...]) -> str:
    """Python for walking an output path: dict keys, list items, public field names, and JSON texts read."""
    for kind, value in path:
        if kind == "attr" and isinstance(value, str) and _plain_name(value) and not value.startswith("_"):
            code += f".{value}"
        elif kind in ("key", "item") and type(value) in (str, int):
            code += f"[{_string(value) if type(value) is str else repr(value)}]"
        elif kind == "json" and value is None:
            code = f"json.loads({code})"
        else:
            raise UsageError(f"cannot export an output path that walks {shown(kind)} {shown(value)}")
    return code


def _plain_name(name: str) -> bool:
    """An ASCII identifier that is no keyword (Python reads other letters in their NFKC form, so a
    fullwidth ``＿＿class＿＿`` would be ``__class__``)."""
    return _ASCII_NAME.fullmatch(name) is not None and not keyword.iskeyword(name)


def _short(tool: str) -> str:
    return tool.rsplit(".", 1)[-1]


def _callee(tools: str, tool: str) -> str:
    """``tools.name``, ``tools.Class.name``, or ``builtins.getattr(tools, "odd name")``; a function's qualified
    name is called by what follows ``<locals>.``, as a namespace would hold it.

    A tool named like a special method (``__class__``) is refused: calling it would call Python's.
    """
    parts = tool.rsplit("<locals>.", 1)[-1].split(".")
    if any(_DUNDER.fullmatch(p) for p in parts) or _DUNDER.fullmatch(tool):
        raise UsageError(f"cannot export a call of a tool named {shown(tool)}: that names a special method")
    if all(_plain_name(p) for p in parts):
        return ".".join([tools, *parts])
    return f"builtins.getattr({tools}, {_string(tool)})"


def _keyword(name: str, value: str) -> str:
    if _plain_name(name):
        return f"{name}={value}"
    return f"**{{{_string(name)}: {value}}}"


def _container(kind: str, items: list[tuple[str, str]]) -> str:
    """A dict, tuple or list display of items already written as Python (keys only for a dict)."""
    if kind == "dict":
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    inner = [v for _, v in items]
    if kind == "tuple":
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if kind == "list":
        return "[" + ", ".join(inner) + "]"
    raise UsageError(f"cannot export a container of kind {shown(kind)}")


def _string(text: str) -> str:
    """A string literal for ``text``: every character that is not plainly printable escaped."""
    return "'" + _escaped(text, "'") + "'"


def _escaped(text: str, quote: str) -> str:
    """``text`` for inside a string literal closed by ``quote``."""
    return "".join(_ESCAPES.get(c) or (c if c.isprintable() and c != quote else _escape(c)) for c in text)


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in "\"'":
        return "\\" + char
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


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
    inner = [f"{expr.literal(k)}: {expr.of(a)}" if container == "dict" else expr.of(a) for k, a in items]
    return [f"    return {brackets[0]}", *(f"        {item}," for item in inner), f"    {brackets[1]}"]


def _snapshot(label: str, snapshot: Snapshot | None) -> list[str]:
    if snapshot is None:
        return []
    if not snapshot.kept:
        return _comment(
            f"{label}: only the hash of the recorded snapshot is stored ({shown(snapshot.key)})", "    "
        )
    text = scrub(pprint.pformat(snapshot.value, width=LINE - 10, compact=True, sort_dicts=False))
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
        return "replay_" + re.sub(r"[^a-z0-9]", "_", t.id[:8].lower(), flags=re.ASCII)
    if name[0].isdigit():
        name = f"task_{name}"
    return name + "_" if keyword.iskeyword(name) else name


def _docstring(task: str) -> str:
    """The function's docstring, as a string literal."""
    line = " ".join(scrub(task).split()) or "A recorded task."
    end = "" if line.endswith((".", "!", "?")) else "."
    return _string(line + end + " Replays a trajectory recorded by muscle-mem.")


def _int_literal(value: int) -> str:
    """An int as a literal: decimal, or hexadecimal past the digits Python writes in decimal."""
    try:
        return repr(value)
    except ValueError:
        return hex(value)
