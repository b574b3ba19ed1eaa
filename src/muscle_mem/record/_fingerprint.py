"""Tool fingerprints: a callable's normalised code and the configuration it reads, as one short hash.

What a fingerprint covers, so that two deployments whose tools differ only in a setting never share
trajectories, while reformatting a function or editing its comments keeps its cache:

* a function: its code as a normalised syntax tree (comments, layout and decorators left out; the
  bytecode, constants and names when the source cannot be read), its parameters and the values of
  their defaults, its docstring, the values of its closure cells, and the plain module-level
  constants it names (str, int, float, bool, None, bytes, Enum members, and tuples or frozensets of
  them); a module-level function it names is fingerprinted in turn, as is a function in a closure
  cell (both bounded by :data:`MAX_DEPTH`, a recursive function by a cycle guard), and the function a
  decorator wrapped (``__wrapped__``);
* a ``functools.partial``: the function and its bound arguments; a bound method: its function; a
  callable object: its class's ``__call__`` and the values of its attributes; a class: its source;
  a built-in: its qualified name.

A value in a closure cell, a default, a bound argument or an attribute counts by its text when that
text is stable: constants as above, callables by their own fingerprint, values of immutable value
types (decimals, fractions, dates and times, paths, UUIDs, patterns, ranges) and frozen dataclasses
whose text shows no memory address. Other values (a list, dict or set, a counter, a client object:
they hold state, and their text would change as they are used) count by their type only.
Module-level names count only as listed above: modules, classes and other objects are left out.
"""

from __future__ import annotations

import ast
import datetime
import decimal
import enum
import fractions
import functools
import hashlib
import inspect
import pathlib
import re
import textwrap
import types
import uuid
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 4
"""How many functions deep (closure cells, module-level functions called) a fingerprint follows."""
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_CONSTANTS = (str, int, float, bool, bytes, type(None))
_VALUE_TYPES = (
    decimal.Decimal,
    fractions.Fraction,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.timezone,
    pathlib.PurePath,
    uuid.UUID,
    re.Pattern,
    range,
    complex,
)


def fingerprint(obj: Callable[..., Any]) -> str:
    """A 16-hex-digit hash of a callable's normalised code and the configuration it reads."""
    text = _Walk().routine(obj, 0)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class _Walk:
    """One fingerprint's traversal: the callables on the way (cycle guard) and those already done."""

    def __init__(self) -> None:
        self._active: set[int] = set()
        self._done: dict[int, str] = {}

    def routine(self, obj: Any, depth: int) -> str:
        """The fingerprint text of a callable (a digest for a nested one, to keep texts short)."""
        key = id(obj)
        if key in self._done:
            return self._done[key]
        if key in self._active:
            return "cycle:" + _qualified(obj)
        if depth > MAX_DEPTH:
            return "deep:" + _qualified(obj)
        self._active.add(key)
        try:
            text = "\n".join(self._describe(obj, depth))
        finally:
            self._active.discard(key)
        if depth:
            text = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
        self._done[key] = text
        return text

    def _describe(self, obj: Any, depth: int) -> list[str]:
        if isinstance(obj, functools.partial):
            keywords = sorted(obj.keywords.items())
            return [
                "partial",
                self.routine(obj.func, depth + 1),
                *(self.value(a, depth) for a in obj.args),
                *(f"{k}={self.value(v, depth)}" for k, v in keywords),
            ]
        if isinstance(obj, types.MethodType):
            return ["method", self.routine(obj.__func__, depth + 1)]
        if isinstance(obj, types.FunctionType):
            return self._function(obj, depth)
        if inspect.isclass(obj):
            return ["class", _qualified(obj), _class_source(obj)]
        if inspect.isroutine(obj) or not callable(obj):
            return ["builtin", _qualified(obj)]
        attributes = sorted(vars(obj).items()) if hasattr(obj, "__dict__") else []
        return [
            "object",
            _qualified(type(obj)),
            self.routine(type(obj).__call__, depth + 1),
            *(f"{k}={self.value(v, depth)}" for k, v in attributes),
        ]

    def _function(self, fn: types.FunctionType, depth: int) -> list[str]:
        code = fn.__code__
        signature = inspect.signature(fn, follow_wrapped=False)
        parts = [
            "function",
            _code_text(fn),
            "signature:" + ",".join(f"{p.name}:{p.kind.name}" for p in signature.parameters.values()),
            "defaults:" + ",".join(self.value(v, depth) for v in fn.__defaults__ or ()),
            *(f"kwdefault:{k}={self.value(v, depth)}" for k, v in sorted((fn.__kwdefaults__ or {}).items())),
            f"doc:{fn.__doc__!r}",
        ]
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not yet filled
                parts.append(f"cell:{name}=<empty>")
                continue
            parts.append(f"cell:{name}={self.value(contents, depth)}")
        for name in sorted(_names(code)):
            if name not in fn.__globals__:
                continue
            found = fn.__globals__[name]
            if isinstance(found, types.FunctionType):
                parts.append(f"global:{name}={self.routine(found, depth + 1)}")
            else:
                constant = _constant(found)
                if constant is not None:
                    parts.append(f"global:{name}={constant}")
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            parts.append("wraps:" + self.routine(wrapped, depth + 1))
        return parts

    def value(self, value: Any, depth: int) -> str:
        """The stable text of a value a callable holds (see the module's docstring)."""
        constant = _constant(value)
        if constant is not None:
            return constant
        if isinstance(value, tuple | frozenset):
            items = [self.value(v, depth) for v in value]
            return (
                f"{_qualified(type(value))}({','.join(items if isinstance(value, tuple) else sorted(items))})"
            )
        if isinstance(value, types.ModuleType):
            return "module:" + value.__name__
        if callable(value) and not inspect.isclass(value):
            return "callable:" + self.routine(value, depth + 1)
        kind = _qualified(type(value))
        if not _immutable_value(value):
            return "type:" + kind
        try:
            shown = repr(value)
        except Exception:
            return "type:" + kind
        return "type:" + kind if _ADDRESS.search(shown) else f"{kind}:{shown}"


def _immutable_value(value: Any) -> bool:
    """Whether a value's text is its configuration and stays the same as it is used."""
    if isinstance(value, _VALUE_TYPES):
        return True
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and bool(params.frozen) and not isinstance(value, type)


def _constant(value: Any) -> str | None:
    """The text of a plain constant (see the module's docstring), or None for anything else."""
    if isinstance(value, enum.Enum):
        return f"enum:{_qualified(type(value))}.{value.name}"
    if isinstance(value, _CONSTANTS):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple | frozenset):
        items = [_constant(v) for v in value]
        if any(item is None for item in items):
            return None
        texts = [item for item in items if item is not None]
        return f"{_qualified(type(value))}({','.join(texts if isinstance(value, tuple) else sorted(texts))})"
    return None


def _code_text(fn: types.FunctionType) -> str:
    """The function's syntax tree without comments, layout or decorators; its bytecode if the
    source cannot be read or parsed."""
    try:
        source = textwrap.dedent(inspect.getsource(fn.__code__))  # its own code, not what it wraps
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return "code:" + _bytecode(fn.__code__)
    return "ast:" + ast.dump(_own_node(tree, fn.__code__))


def _own_node(tree: ast.Module, code: types.CodeType) -> ast.AST:
    """The function's node in its parsed source: the definition (decorators dropped), or the only
    lambda on the line (else the whole line)."""
    first = tree.body[0] if tree.body else tree
    if code.co_name != "<lambda>" and isinstance(first, ast.FunctionDef | ast.AsyncFunctionDef):
        first.decorator_list = []
        return first
    lambdas = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)]
    return lambdas[0] if len(lambdas) == 1 else tree


def _bytecode(code: types.CodeType) -> str:
    consts = [
        _bytecode(c) if isinstance(c, types.CodeType) else _constant(c) or repr(c) for c in code.co_consts
    ]
    return f"{code.co_code.hex()}|{'|'.join(consts)}|{','.join(code.co_names)}"


def _names(code: types.CodeType) -> set[str]:
    """The global (and attribute) names a code object and the code nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _class_source(cls: type) -> str:
    try:
        return "ast:" + ast.dump(ast.parse(textwrap.dedent(inspect.getsource(cls))))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return ""


def _qualified(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}.{name}"
