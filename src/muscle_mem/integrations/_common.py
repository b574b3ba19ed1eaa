"""What every framework integration shares: check maps, fresh call ids, schema versions, missing extras."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from muscle_mem import Check, current_run
from muscle_mem.model import codec
from muscle_mem.model._task_keys import checked_tags
from muscle_mem.secrecy.declared import redact, secret_values

if TYPE_CHECKING:
    from muscle_mem import Engine

logger = logging.getLogger(__name__)

Checks = Mapping[str, "Check[Any] | tuple[Check[Any] | None, Check[Any] | None]"]
"""Per tool name: a pre-check, or a ``(pre_check, post_check)`` pair."""


def checks_for(checks: Checks | None, name: str) -> tuple[Check[Any] | None, Check[Any] | None]:
    """The ``(pre_check, post_check)`` of tool ``name`` in a ``checks=`` map (a lone Check is a pre-check)."""
    if not checks or name not in checks:
        return None, None
    given = checks[name]
    if isinstance(given, Check):
        return given, None
    if isinstance(given, tuple) and len(given) == 2:
        return given
    raise TypeError(f"checks[{name!r}] must be a Check or a (pre_check, post_check) pair, got {given!r}")


def unknown_checks(checks: Checks | None, names: set[str]) -> None:
    """Refuse a ``checks=`` map naming a tool the agent does not have (a typo would leave a tool unguarded)."""
    extra = sorted(set(checks or ()) - names)
    if extra:
        raise ValueError(f"checks name tools the agent does not have: {', '.join(map(repr, extra))}")


def fresh_call_id() -> str:
    """A tool-call id for a replayed call: unique, and telling it was replayed (``mm_<hex>``)."""
    return f"mm_{uuid.uuid4().hex[:24]}"


def schema_version(name: str, description: str | None, schema: Any) -> str:
    """A tool version for a tool with no Python callable to fingerprint: its name, description and schema."""
    text = json.dumps([name, description or "", schema], sort_keys=True, default=str)
    return "schema:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def tools_offered(tools: Iterable[tuple[str, str | None, Any]]) -> str:
    """The fingerprint of the tools offered to a model: each one's name, description and argument schema.

    The tools are sorted by name, so the order they were given in does not matter; a changed
    description, schema, or a tool added or removed gives another fingerprint.
    """
    texts = (
        json.dumps([name, description or "", schema], sort_keys=True, default=str)
        for name, description, schema in tools
    )
    return codec.fingerprint(sorted(texts))


CONTEXT_TAG = "context:"
"""What the tag naming an agent's context starts with; the context's fingerprint follows."""


def with_context(tags: Sequence[str] | None, context: Mapping[str, Any]) -> Sequence[str] | None:
    """The run's tags, and one naming the agent's context (its prompts) when it has any.

    The tag is ``context:`` and the fingerprint of the context's non-empty parts: a changed prompt
    is another task, the same prompt the same task, and no prompt text reaches the store (a prompt
    may hold a secret). Raises :class:`codec.CodecError` for a part the engine cannot encode.
    """
    parts = {name: value for name, value in context.items() if value}
    if not parts:
        return tags
    return (*checked_tags(tags), CONTEXT_TAG + codec.fingerprint(parts))


def refuse_run(engine: Engine, reason: str) -> None:
    """Keep the run ``engine`` is recording in this context out of the store, and say why."""
    run = current_run()
    if run is not None and run.engine is engine:
        run.refuse(reason)


def missing_extra(framework: str, extra: str) -> ImportError:
    """The ImportError raised when an integration's framework is not installed."""
    return ImportError(f"muscle_mem.integrations needs {framework}: pip install 'muscle-mem[{extra}]'")


def note_followup_bypass(framework: str, task: str, params: Mapping[str, Any] | None = None) -> None:
    """Log that a run carrying earlier conversation is solved uncached (``cache_followups=True`` opts in).

    The values of secret ``params`` are shown by their names.
    """
    secrets = secret_values(params) if isinstance(params, Mapping) else {}
    task = redact(task, secrets) if secrets else task
    logger.info(
        "%s run of %r carries earlier conversation: solved by the agent, uncached (a follow-up is a different "
        "task; pass cache_followups=True to cache it)",
        framework,
        task,
    )


UNREAD = object()
"""What the parts acting on each model call read when no ``context`` says it: the run goes uncached."""


def acting_context(
    framework: str, acting: Sequence[str], context: Callable[[], Any] | None, option: str
) -> Any:
    """What the parts that act on each model call beside the tools read, for the task key.

    None when nothing acts; ``context()`` (with what acts) when the user says what they read; else
    :data:`UNREAD`, logged, and so when ``context`` raises (the user's function: never a crash).
    ``option``: the front's class that takes ``context=``.
    """
    if not acting:
        return None
    if context is None:
        logger.info(
            "%s run uncached: %s act on each model call beside the tools, so what the model reads cannot "
            "identify the task: pass %s(..., context=...), a function returning what they read",
            framework,
            ", ".join(acting),
            option,
        )
        return UNREAD
    try:
        return {"read": context(), "by": list(acting)}
    except Exception as exc:
        logger.info("%s run uncached: context() raised %s", framework, type(exc).__name__)
        return UNREAD
