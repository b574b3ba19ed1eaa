"""A call's task, prepared once: its tags, params, key, text and secrets, the one value a run takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from muscle_mem.model import codec
from muscle_mem.model._task_keys import TaskIdentity, check_params, checked_tags, task_text
from muscle_mem.secrecy.declared import plain_params, redact, secret_values

_NO_SECRETS: frozenset[str] = frozenset()
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_new = tuple.__new__


class Task(NamedTuple):
    """A call's task as every part of the call reads it (a tuple: made in one step on the hit path)."""

    key: str
    """The task key ("" when the task has none: see ``unkeyable``)."""
    text: str
    """The task's text, secret param values and secret-looking texts redacted."""
    tags: tuple[str, ...]
    params: Mapping[str, Any]
    """The params as given (``Secret`` values included)."""
    plain: Mapping[str, Any]
    """The params' plain values (a ``Secret``'s value unwrapped): what a replay binds."""
    secrets: dict[str, Any]
    """The plain values of the secret params, by name, to keep out of every message."""
    unkeyable: str | None = None
    """Why the task has no key (an argument the codec cannot encode), redacted; None if it has one."""
    whole_text: str | None = None
    """The task as one plain text given with nothing else, when a template may serve it; else None."""


def prepare(
    identify: TaskIdentity,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tags: Sequence[str] | None,
    params: Mapping[str, Any] | None,
    templates: bool = False,
) -> Task:
    """The call's task; TypeError for tags or params a call cannot take.

    ``templates``: whether a task given as one plain text may be served by a template.
    """
    tag_tuple = checked_tags(tags) if tags is not None else ()
    if params is not None:
        check_params(params)
    plain = plain_params(params) if params else {}
    secrets = secret_values(params) if params else {}
    try:
        key, text = identify(args, kwargs, tag_tuple, plain, frozenset(secrets) if secrets else _NO_SECRETS)
    except codec.CodecError as exc:  # redact also scrubs secret-looking texts
        text = redact(task_text(args, kwargs, plain), secrets)
        return Task("", text, tag_tuple, params or {}, plain, secrets, redact(str(exc), secrets))
    text = redact(text, secrets)
    whole = (
        text if templates and not params and not kwargs and len(args) == 1 and type(args[0]) is str else None
    )
    return _new(
        Task, (key, text, tag_tuple, params or _EMPTY, plain, secrets, None, whole)
    )  # no Python __new__


def plain_task(key: str, text: str, tags: tuple[str, ...], params: Mapping[str, Any]) -> Task:
    """The task of a text and params known already (a template's, a run's twin)."""
    if not params:
        return Task(key, text, tags, {}, {}, {})
    return Task(key, text, tags, params, plain_params(params), secret_values(params))
