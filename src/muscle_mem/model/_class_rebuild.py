"""Rebuilding the instances of allowed classes from decoded data, never by running their code.

A class is rebuilt only if this process has encoded one of its instances or the application allowed
it (:func:`allow`, ``Engine(types=...)``), and only while its data fits its declared fields; any
other stays an :class:`~muscle_mem.model._encoding.Opaque`.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import logging
import sys
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from muscle_mem.model._codec_format import ALLOWED, canon, dataclass_layout, known
from muscle_mem.model._encoding import Opaque, encode

log = logging.getLogger(__name__)


def _is_model(cls: type) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and issubclass(cls, pydantic.BaseModel) and cls is not pydantic.BaseModel


KINDS: dict[str, Callable[[type], bool]] = {
    "dataclass": dataclasses.is_dataclass,
    "pydantic": _is_model,
    "enum": lambda cls: issubclass(cls, enum.Enum),
    "namedtuple": lambda cls: issubclass(cls, tuple) and hasattr(cls, "_fields"),
}


def allow(types: Iterable[type]) -> None:
    """Let decoding rebuild instances of these classes (dataclasses, pydantic models, enums, named tuples).

    Decoding rebuilds the classes this process has encoded and those allowed here; any other class
    stays an :class:`Opaque`. Raises TypeError for anything else.
    """
    for cls in types:
        if not isinstance(cls, type) or not any(check(cls) for check in KINDS.values()):
            raise TypeError(f"types= takes dataclasses, pydantic models, enums and named tuples, not {cls!r}")
        known(cls)


def _hash_safe(cls: type) -> bool:
    """Whether hashing and comparing an instance runs only Python's own code (no method of the class)."""
    return all(_builtin(getattr(cls, name, None)) for name in ("__hash__", "__eq__"))


def _builtin(method: Any) -> bool:
    return method is enum.Enum.__hash__ or (method is not None and not isinstance(method, types.FunctionType))


@functools.lru_cache(maxsize=512)
def _settable(cls: type, names: tuple[str, ...]) -> bool:
    """Whether setting these fields stores them, running no descriptor of the class (a property, ...)."""
    for name in names:
        attr = next((vars(base)[name] for base in cls.__mro__ if name in vars(base)), None)
        if hasattr(type(attr), "__set__") and not isinstance(attr, types.MemberDescriptorType):
            return False
    return True


def _build_dataclass(cls: Any, data: dict[str, Any], raw: Any) -> Any:
    _, names, _, _ = dataclass_layout(cls)
    if set(names) != data.keys():
        raise TypeError("fields differ")
    if not _settable(cls, names):
        raise TypeError("a field is a descriptor")
    for f in dataclasses.fields(cls):
        if not _fits(data[f.name], f.type):
            raise TypeError(f"field {f.name!r} is not a {f.type!r}")
    obj = object.__new__(cls)
    for name in names:
        object.__setattr__(obj, name, data[name])
    return obj


def _build_model(cls: Any, data: dict[str, Any], raw: Any) -> Any:
    if cls.__pydantic_post_init__:
        raise TypeError("its model_post_init would run (a custom one, or private attributes)")
    fields = cls.model_fields
    missing = sorted(fields.keys() - data.keys())
    if missing:
        raise TypeError(f"fields {missing} are missing")
    extra = {k: v for k, v in data.items() if k not in fields}
    allow_extra = cls.model_config.get("extra") == "allow"
    if extra and not allow_extra:
        raise TypeError(f"fields {sorted(extra)} are unknown")
    for name, info in fields.items():
        if not _fits(data[name], info.annotation):
            raise TypeError(f"field {name!r} is not a {info.annotation!r}")
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", {name: data[name] for name in fields})
    object.__setattr__(obj, "__pydantic_fields_set__", set(fields))
    if not cls.__pydantic_root_model__:
        object.__setattr__(obj, "__pydantic_extra__", extra if allow_extra else None)
        object.__setattr__(obj, "__pydantic_private__", None)
    return obj


@functools.lru_cache(maxsize=512)
def _members(cls: type[enum.Enum]) -> dict[str, enum.Enum]:
    """An enum's members by the canonical text of their encoded values."""
    found: dict[str, enum.Enum] = {}
    for member in cls.__members__.values():
        try:
            found.setdefault(canon(encode(member.value)), member)
        except ValueError:  # a CodecError: a value the codec has no form for
            continue
    return found


def _build_enum(cls: Any, value: Any, raw: Any) -> Any:
    member = _members(cls).get(canon(raw))
    if member is not None:
        return member
    if issubclass(cls, enum.Flag) and type(value) is int and _stdlib_flag(cls):
        combined = cls(value)  # a combination of flags: made by the enum module alone
        if isinstance(combined, cls):
            return combined
    raise ValueError(f"{value!r} is not a value of {cls.__qualname__}")


def _stdlib_flag(cls: Any) -> bool:
    """Whether a flag enum makes combinations with the enum module's code only (no ``__new__`` of its own)."""
    own_missing = getattr(cls._missing_, "__func__", None) is not getattr(
        enum.Flag._missing_, "__func__", None
    )
    return not own_missing and getattr(cls, "__new_member__", None) is None


def _build_namedtuple(cls: Any, values: list[Any], raw: Any) -> Any:
    if len(values) != len(cls._fields):
        raise TypeError("fields differ")
    return tuple.__new__(cls, values)


_BUILDERS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "dataclass": _build_dataclass,
    "pydantic": _build_model,
    "enum": _build_enum,
    "namedtuple": _build_namedtuple,
}


def _fits(value: Any, hint: Any, depth: int = 0) -> bool:
    """Whether a decoded field value is of its declared type, as far as that is told without evaluating.

    A text annotation (not evaluated), a type variable or a form ``isinstance`` cannot check fits.
    """
    if (
        depth > 8
        or hint is Any
        or hint is object
        or isinstance(hint, (str, typing.ForwardRef, typing.TypeVar))
    ):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _fits(value, args[0], depth + 1)
    if origin is typing.Union or origin is types.UnionType:
        return any(_fits(value, arg, depth + 1) for arg in args)
    if origin is typing.Literal:
        return any(type(value) is type(arg) and value == arg for arg in args)
    target = hint if origin is None else origin
    if target is float:
        return isinstance(value, int | float)
    if not isinstance(target, type):
        return True
    try:
        if not isinstance(value, target):
            return False
    except TypeError:  # a protocol that is not runtime-checkable, ...
        return True
    return _items_fit(value, args, depth + 1)


def _items_fit(value: Any, args: tuple[Any, ...], depth: int) -> bool:
    if not args:
        return True
    if isinstance(value, list | set | frozenset) and len(args) == 1:
        return all(_fits(item, args[0], depth) for item in value)
    if isinstance(value, dict) and len(args) == 2:
        return all(_fits(k, args[0], depth) and _fits(v, args[1], depth) for k, v in value.items())
    if type(value) is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(item, args[0], depth) for item in value)
        return len(args) == len(value) and all(_fits(v, a, depth) for v, a in zip(value, args, strict=True))
    return True


def rebuilt(kind: str, name: str, data: Any, raw: Any, key: bool) -> Any:
    """The instance of the class ``name`` of ``kind`` that decoded ``data`` (from ``raw``) make, or an :class:`Opaque`.

    ``key``: it is (inside) a dict key or a set item.
    """
    cls = ALLOWED.get(name)
    if cls is None:
        why = "its class is not one this process encoded or allows (Engine(types=...))"
    elif not KINDS[kind](cls):
        why = f"{name} is not a {kind}"
    elif key and not _hash_safe(cls):
        why = "it is a dict key or a set item, and its class hashes or compares with its own code"
    else:
        try:
            return _BUILDERS[kind](cls, data, raw)
        except Exception as exc:
            why = f"it no longer fits its class ({type(exc).__name__}: {exc})"
    log.debug("a %s %s decodes as Opaque: %s", kind, name, why)
    return Opaque(kind, name, data)
