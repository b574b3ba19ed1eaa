"""Task keys and param templating.

A task is identified by its tags and by the agent's arguments once every param value in them is
replaced by the param's name: ``engine("fill the form for John", params={"name": "John"})`` and the
same call for Jane are one task, ``fill the form for {name}``. A param that does not appear in the
arguments is part of the task with its value: nothing shows where the agent uses it.

Inside a longer string, a param value (2 characters or more) is replaced only as a whole word, not
next to a letter or digit, so that ``params={"lang": "en"}`` templates ``"en-US"`` but leaves
``"Send"`` alone, and ``anna`` is not a part of ``hannah``: the replay would not rewrite it there. A number param (an int
or a float, not a bool) is replaced where it stands as a whole number (:func:`task_number`):
``engine(f"refund order {oid}", params={"order_id": oid})`` is one task for every ``oid``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from muscle_mem.model import codec
from muscle_mem.model._whole_words import split_parts, task_number, whole_word
from muscle_mem.model.trajectory import TemplatePart

Match = Literal["exact", "tags", "semantic"]
MIN_TEMPLATE_LENGTH = 2
"""A string param shorter than this is never substituted inside other strings."""


def split_template(text: str, params: Mapping[str, Any]) -> tuple[TemplatePart, ...] | None:
    """``text`` as literal parts and param parts, or None if no string param occurs in it."""
    needles = sorted(
        (
            (v, k, whole_word(v))
            for k, v in params.items()
            if isinstance(v, str) and len(v) >= MIN_TEMPLATE_LENGTH
        ),
        key=lambda item: -len(item[0]),
    )
    if not needles or not any(v in text for v, _, _ in needles):
        return None
    parts: list[TemplatePart] = []
    literal_start = i = 0
    while i < len(text):
        for value, name, word in needles:
            if text.startswith(value, i) and word.match(text, i):
                if literal_start < i:
                    parts.append(("text", text[literal_start:i]))
                parts.append(("param", name))
                i += len(value)
                literal_start = i
                break
        else:
            i += 1
    if literal_start == 0:
        return None
    if literal_start < len(text):
        parts.append(("text", text[literal_start:]))
    return tuple(parts)


def render(parts: Sequence[TemplatePart]) -> str:
    """A template as readable text: ``fill the form for {name}``."""
    return "".join(t if kind == "text" else "{" + t + "}" for kind, t in parts)


def params_equal_to(value: Any, params: Mapping[str, Any]) -> list[str]:
    """The names of the params equal to ``value`` in type and value.

    None and booleans match no param: too likely a coincidence.
    """
    if value is None or isinstance(value, bool):
        return []
    return [name for name, param in params.items() if type(param) is type(value) and param == value]


def with_params(parts: list[TemplatePart], params: Mapping[str, Any]) -> list[TemplatePart]:
    """The text parts split further on string params (:func:`split_template`)."""
    out: list[TemplatePart] = []
    for kind, part in parts:
        inner = split_template(part, params) if kind == "text" else None
        out += list(inner) if inner else [(kind, part)]
    return out


def number_params(params: Mapping[str, Any]) -> dict[str, str]:
    """The params that are numbers (not bools), by name, as the text they stand as in a task."""
    return {k: str(v) for k, v in params.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _template_parts(text: str, params: Mapping[str, Any], numbers: Mapping[str, str]) -> list[TemplatePart]:
    """``text`` as literal and param parts: ``numbers`` (param name → digits) where they stand as whole
    numbers (:func:`task_number`), and only where they stand once (in ``ship 3 units within 3 days``
    the 3 days may be another quantity the agent reads: the text keeps both) and string params as :func:`split_template` finds them, longer
    texts first (a string param ``order 5`` before a number 5)."""
    parts: list[TemplatePart] = [("text", text)]
    pending = dict(params)
    for name, digits in sorted(numbers.items(), key=lambda item: -len(item[1])):
        longer = {k: v for k, v in pending.items() if isinstance(v, str) and len(v) > len(digits)}
        if longer:
            parts = with_params(parts, longer)
            pending = {k: v for k, v in pending.items() if k not in longer}
        pattern = task_number(digits)
        if sum(len(pattern.findall(part)) for kind, part in parts if kind == "text") > 1:
            continue  # it stands for more than one thing, or one it may not be: the text keeps its digits
        parts = split_parts(parts, pattern, ("param", name))
    return with_params(parts, pending)


def _templated(value: Any, params: Mapping[str, Any], numbers: Mapping[str, str], used: set[str]) -> Any:
    """A JSON-compatible form of an agent argument with param values replaced by their names (each
    added to ``used``); inside strings, secret ``numbers`` too, where they stand as whole numbers."""
    for name in params_equal_to(value, params)[:1]:
        used.add(name)
        return {"$param": name}
    if isinstance(value, str):
        parts = _template_parts(value, params, numbers)
        names = [t for kind, t in parts if kind == "param"]
        if not names:
            return value
        used.update(names)
        return {"$template": [list(p) for p in parts]}
    if isinstance(value, list | tuple):
        return [_templated(v, params, numbers, used) for v in value]
    if isinstance(value, dict):
        return {
            "$dict": [
                [_templated(k, params, numbers, used), _templated(v, params, numbers, used)]
                for k, v in value.items()
            ]
        }
    return codec.encode(value)


def _readable(value: Any, params: Mapping[str, Any], numbers: Mapping[str, str], used: set[str]) -> str:
    if isinstance(value, str):
        parts = _template_parts(value, params, numbers)
        names = [t for kind, t in parts if kind == "param"]
        if not names:
            return value
        used.update(names)
        return render(parts)
    for name in params_equal_to(value, params)[:1]:
        used.add(name)
        return "{" + name + "}"
    return repr(value)


def task_text(
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    params: Mapping[str, Any],
    secret: frozenset[str] = frozenset(),
) -> str:
    """The task as a person reads it, params shown as ``{name}``.

    A param that does not appear in the arguments is part of the task (see :func:`task_key`), so it
    is shown after them with its value (a ``secret`` one as ``{name}``).
    """
    used: set[str] = set()
    numbers = number_params(params)
    shown = [_readable(a, params, numbers, used) for a in args]
    shown += [f"{k}={_readable(v, params, numbers, used)}" for k, v in kwargs.items()]
    shown += [f"{k}={{{k}}}" if k in secret else f"{k}={_shown(params[k])}" for k in params if k not in used]
    return ", ".join(shown)


MAX_SHOWN = 80
"""A param value longer than this as text is shown by its type, size and digest in the task text."""


def _shown(value: Any) -> str:
    text = repr(value)
    if len(text) <= MAX_SHOWN:
        return text
    try:
        digest = codec.digest(value)[:12]
    except codec.CodecError:
        digest = "?"
    return f"<{type(value).__name__} of {len(text):,} characters, #{digest}>"


def task_key(
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    tags: Sequence[str],
    params: Mapping[str, Any],
    match: Match = "exact",
    secret: frozenset[str] = frozenset(),
    namespace: str | None = None,
) -> str:
    """The key under which trajectories of this task are stored and looked up.

    A param whose value does not appear in the agent's arguments is part of the task by its value
    (``params={"force": True}`` and ``{"force": False}`` are two tasks), except a ``secret`` one,
    which is part of it by its name only. A ``namespace`` prefixes the key (:func:`namespace_prefix`).
    """
    tag_part = sorted(set(tags))
    prefix = namespace_prefix(namespace)
    if match == "tags":
        return prefix + "tags:" + codec.digest(tag_part)
    used: set[str] = set()
    numbers = number_params(params)
    shape = [
        tag_part,
        [_named(v, params, numbers, used, f"agent argument {i}") for i, v in enumerate(args)],
        [[k, _named(v, params, numbers, used, f"agent argument {k!r}")] for k, v in sorted(kwargs.items())],
    ]
    unused = sorted(set(params) - used)
    if unused:
        shape.append(
            [[k, None if k in secret else _named(params[k], {}, {}, used, f"param {k!r}")] for k in unused]
        )
    return prefix + "task:" + codec.digest(shape)


def namespace_prefix(namespace: str | None) -> str:
    """What the keys of a namespace start with.

    Nothing for None (the keys of muscle-mem 0.2.0), else ``ns:`` and the namespace's digest, so
    that no key of one namespace is a key of another.
    """
    return "" if namespace is None else f"ns:{codec.digest(namespace)}/"


def in_namespace(key: str, namespace: str | None) -> bool:
    """Whether a stored task key belongs to ``namespace`` (None: to no namespace)."""
    return key.startswith(namespace_prefix(namespace)) if namespace is not None else not key.startswith("ns:")


def _named(
    value: Any, params: Mapping[str, Any], numbers: Mapping[str, str], used: set[str], where: str
) -> Any:
    """:func:`_templated`, with a :class:`codec.CodecError` saying which agent argument is at fault."""
    try:
        return _templated(value, params, numbers, used)
    except codec.CodecError as exc:
        raise codec.CodecError(f"{where} cannot identify the task: {exc}") from None


_FLAT = frozenset({str, int, float, bool, type(None)})


class TaskIdentity:
    """Task keys and texts for one matching rule, memoised for calls made of plain scalars.

    Such calls are the usual ``engine("do the thing", params={...})``: the same call costs a dict
    lookup the second time.
    """

    def __init__(self, match: Match = "exact", size: int = 1024, namespace: str | None = None) -> None:
        self.match: Match = "tags" if match == "tags" else "exact"
        self.namespace = namespace
        self._size = size
        self._memo: dict[tuple[Any, ...], tuple[str, str]] = {}

    def __call__(
        self,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        tags: Sequence[str],
        params: Mapping[str, Any],
        secret: frozenset[str] = frozenset(),
    ) -> tuple[str, str]:
        """The call's ``(task key, task text)``.

        Raises :class:`codec.CodecError` if an argument cannot be encoded. ``params`` are plain
        values; ``secret`` names those that were secrets (see :func:`task_key`).
        """
        values = (*args, *kwargs.values(), *params.values()) if kwargs or params else args
        kinds = tuple(map(type, values))
        if not _FLAT.issuperset(kinds):
            return self._compute(args, kwargs, tags, params, secret)
        memo_key: tuple[Any, ...]
        if kwargs or params or tags or secret:
            memo_key = (
                tuple(args),
                tuple(kwargs.items()) if kwargs else (),
                tuple(tags),
                tuple(params.items()) if params else (),
                secret,
                kinds,
            )
        else:  # the task's arguments only: a key of two (never equal to one of six)
            memo_key = (tuple(args), kinds)
        found = self._memo.get(memo_key)
        if found is None:
            found = self._compute(args, kwargs, tags, params, secret)
            if len(self._memo) >= self._size:
                self._memo.clear()
            self._memo[memo_key] = found
        return found

    def _compute(
        self,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        tags: Sequence[str],
        params: Mapping[str, Any],
        secret: frozenset[str],
    ) -> tuple[str, str]:
        key = task_key(args, kwargs, tags, params, self.match, secret, self.namespace)
        return key, task_text(args, kwargs, params, secret)


def checked_tags(tags: object) -> tuple[str, ...]:
    """The tags of a call, checked: a sequence of strings (TypeError otherwise)."""
    if tags is None:
        return ()
    if isinstance(tags, str | bytes) or not isinstance(tags, Sequence | set | frozenset):
        raise TypeError(f"tags must be a sequence of strings, not {type(tags).__name__}")
    found = tuple(tags)
    for tag in found:
        if not isinstance(tag, str):
            raise TypeError(f"tags must be strings, got {tag!r} ({type(tag).__name__})")
    return found


def check_params(params: object) -> None:
    """Raise TypeError unless ``params`` is None or a mapping with string names."""
    if params is None:
        return
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping of names to values, not {type(params).__name__}")
    for name in params:
        if not isinstance(name, str):
            raise TypeError(f"params names must be strings, got {name!r} ({type(name).__name__})")


MATCHES = ("exact", "tags", "semantic")


def check_matching(match: object, similarity: object, namespace: object) -> None:
    """Raise TypeError or ValueError for matching options an engine cannot use."""
    if namespace is not None and not isinstance(namespace, str):
        raise TypeError(f"namespace must be a string or None, not {type(namespace).__name__}")
    if namespace == "":
        raise ValueError("namespace must not be empty: pass None for the shared keys")
    if match not in MATCHES:
        raise ValueError(f"match must be one of {MATCHES}, not {match!r}")
    if isinstance(similarity, bool) or not isinstance(similarity, int | float):
        raise TypeError(f"similarity must be a number in (0, 1], not {similarity!r}")
