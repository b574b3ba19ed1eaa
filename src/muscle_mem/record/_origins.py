"""Every origin of a value a replay would produce: a param (in a form), an earlier output (at a path), a literal of the task.

One origin binds the value to it, several are kept to agree, none makes a constant; a value a replay
could not rebuild faithfully is refused (:class:`Unreplayable`).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model._forms import INTEGER, SAME, Form, text_forms
from muscle_mem.model._whole_words import NumberToken, is_plain_number_text, number_tokens, word_spans
from muscle_mem.model.provenance import (
    SCALAR_TYPES,
    SOLE,
    Agree,
    Arg,
    Const,
    Guarded,
    Output,
    Param,
    PathElement,
    Pick,
    Struct,
    Template,
    Text,
    children,
    element_identity,
    param_digest,
    walk,
)
from muscle_mem.record._call_copies import MAX_INDEXED_PER_OUTPUT
from muscle_mem.record._output_index import (
    KEYED,
    MAX_DEPTH,
    Outputs,
    Place,
    is_number,
    number_of,
    value_key,
)
from muscle_mem.record._run import Call

MAX_ORIGINS = 32
"""More origins than this for one value make the run unstorable: no replay could check them all."""

COMMON_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "for",
        "go",
        "he",
        "i",
        "if",
        "in",
        "is",
        "it",
        "me",
        "my",
        "no",
        "of",
        "on",
        "or",
        "so",
        "the",
        "to",
        "up",
        "us",
        "we",
    ]
)
"""Short words a text param may equal by chance (``lang="it"``): bound to the param and the text alike."""


class Unreplayable(codec.CodecError):
    """A run that cannot be stored as a trajectory a replay would repeat faithfully."""


_WORDLIKE = (str, int, float)

_WORDLIKE_OR_UUID = (str, int, float, uuid.UUID)


def _stands_in(text: str, value: Any, *, in_dates: bool = False) -> bool:
    """Whether ``value`` stands whole in ``text``: as a number (inside a date or a time only if
    ``in_dates``), or as a word."""
    if is_number(value):
        return any(t.value == float(value) and (in_dates or not t.in_date) for t in number_tokens(text))
    return any(True for _ in word_spans(text, str(value)))


class Argument:
    """Where an argument of a recorded call is, put in words only when a message needs them."""

    __slots__ = ("call", "index", "key")

    def __init__(self, index: int, call: Call, key: int | str) -> None:
        self.index = index
        self.call = call
        self.key = key
        """The argument's position, or its keyword."""

    def __str__(self) -> str:
        call, key = self.call, self.key
        if isinstance(key, int):
            assert call.tool_ref is not None
            key = call.tool_ref.parameter_names(len(call.args), tuple(call.kwargs))[key]
        return f"step {self.index} (tool {call.tool!r}) argument {key!r}"


Where = str | Argument
"""Where a value is in the run, for the messages that name it."""


class ArgBuilder:
    """Turns the live values of a run into recorded values bound to their origins."""

    def __init__(self, params: Mapping[str, Any], secret: frozenset[str], task_literal: str) -> None:
        self.params = params
        self.secret = secret
        self.literal = task_literal
        """The task text outside its params: a value found there is (also) a constant of the task."""
        self._literal_numbers: tuple[NumberToken, ...] | None = None
        self.outputs = Outputs()
        self._whole: dict[int, Output] = {}
        """The reference to each whole output, made once."""

    def build(self, value: Any, where: Where) -> Arg:
        origins = self._origins(value, where)
        if not origins and isinstance(value, str):
            template = self._template(value, where)
            if template is not None:
                return template
        if not origins:
            structured = None if type(value) in SCALAR_TYPES else self._struct(value, where)
            if structured is not None:
                return structured
            constant = self._constant(value, where)
            sources = self._read_out_of(value)
            return Guarded(constant, (), sources) if sources else constant
        if value is None or isinstance(value, bool):
            origins.append(Const(value))  # a param's True is as likely the agent's own constant
        elif self._in_task(value):
            origins.append(Const(value))
        return self._bound(origins, where)

    def _bound(self, origins: list[Arg], where: Where) -> Arg:
        if len(origins) == 1:  # the common case: one origin, neither several nor in agreement
            return origins[0]
        unique = list(dict.fromkeys(origins))
        if len(unique) > MAX_ORIGINS:
            raise Unreplayable(
                f"{where} has {len(unique)} possible origins: a replay could not check them all"
            )
        if any(isinstance(o, Const) for o in unique) and self._secret_in(unique):
            raise Unreplayable(f"{where} equals a secret param and a constant: a replay could not tell which")
        return unique[0] if len(unique) == 1 else Agree(tuple(unique))

    def _secret_in(self, origins: Sequence[Arg]) -> bool:
        return any(isinstance(o, Param) and o.name in self.secret for o in origins)

    def _in_task(self, value: Any) -> bool:
        if not self.literal or not isinstance(value, _WORDLIKE):
            return False
        if is_number(value):  # as _stands_in, over the literal's numbers read once
            if self._literal_numbers is None:
                literal = self.literal
                self._literal_numbers = (
                    _literal_numbers(literal)
                    if len(literal) <= LITERALS_KEPT_LENGTH
                    else tuple(number_tokens(literal))
                )
            return any(t.value == float(value) and not t.in_date for t in self._literal_numbers)
        return _stands_in(self.literal, value)

    def _origins(self, value: Any, where: Where) -> list[Arg]:
        """Every param and output ``value`` is, as it is or converted to its type."""
        found: list[Arg] = []
        for name, param in self.params.items():
            form = _whole_form(param, value)
            if form is not None:
                found.append(Param(name, form))
        kind = type(value)
        key = (kind, value) if kind in KEYED else value_key(value)
        for place in self.outputs.by_value.get(key, []) if key is not None else []:
            found.append(self._output(place, SAME, where))
        if kind is str and self.outputs.secrets:
            for place, span in self.outputs.secrets.get(value, ()):
                found.append(self._output(place, Form("secret", width=span), where))
        if kind is list or kind is tuple:  # every element of a listed output, in order: that output
            other = tuple(value) if type(value) is list else list(value)
            other_key = value_key(other)
            convert = Form("list" if type(value) is list else "tuple")
            for place in self.outputs.by_value.get(other_key, []) if other_key is not None else []:
                found.append(self._output(place, convert, where))
        if kind is int or kind is float:  # the common case, as number_of reads it
            number: float | None = float(value)
        else:
            number = number_of(value) if not isinstance(value, str) or INTEGER.fullmatch(value) else None
        for place, held in self.outputs.by_number.get(number, []) if number is not None else []:
            form = _whole_form(held, value)
            if form is not None and form is not SAME and form != SAME:
                found.append(self._output(place, form, where))
        return found

    def _output(self, place: Place, form: Form, where: Where) -> Arg:
        """A reference to an output value, with the picks of the lists it was chosen from and the
        params the chosen value depends on."""
        if not place.path:  # a whole output: chosen from no list
            if form is not SAME:
                return Output(place.step, (), form)
            whole = self._whole.get(place.step)
            if whole is None:
                whole = self._whole[place.step] = Output(place.step)
            return whole
        output = self.outputs.outputs[place.step]
        picks: list[Pick] = []
        for depth, (kind, index) in enumerate(place.path):
            container = walk(output, place.path[:depth]) if kind == "item" else None
            if type(container) is not list:
                continue  # a tuple is a record of fixed fields, not a list of candidates
            if len(container) > 1:
                picks.append(Pick(depth, element_identity(container[index], place.path[depth + 1 :])))
            else:
                picks.append(Pick(depth, SOLE))
        reference = Output(place.step, place.path, form, tuple(picks))
        if not any(p.identity != SOLE for p in picks):
            return reference
        depends = self._params_in(walk(output, place.path))
        if not depends:
            return reference
        if depends & self.secret:
            raise Unreplayable(f"{where} was chosen by a secret param: a replay could not tell it changed")
        guards = tuple((name, param_digest(self.params[name])) for name in sorted(depends))
        return Guarded(reference, guards)

    def _read_out_of(self, value: Any) -> tuple[tuple[int, tuple[PathElement, ...], str], ...]:
        """The output texts that hold ``value`` inside them, as a word or a number (a name the agent
        read out of a listing): the constant replays only while those texts are unchanged."""
        if not self.outputs.texts:  # no text output to have read it out of
            return ()
        if isinstance(value, bool) or not isinstance(value, _WORDLIKE) or not str(value).strip():
            return ()
        needle = str(value)
        folded = needle.casefold()
        found: list[tuple[int, tuple[PathElement, ...], str]] = []
        for text, places in self.outputs.texts.items():
            if needle == text:
                continue
            if needle in text:
                if not _stands_in(text, value):
                    continue
            elif folded not in text.casefold() or (  # read out in another case (maria -> Maria)
                folded != text.casefold() and not _stands_in(text.casefold(), folded)
            ):
                continue
            found += [(p.step, p.path, param_digest(text)) for p in places]
        if len(found) > MAX_ORIGINS:
            raise Unreplayable(
                f"{needle!r} was read out of {len(found)} outputs: a replay could not check them all"
            )
        return tuple(found)

    def _params_in(self, value: Any) -> set[str]:
        """The params whose value stands whole inside ``value`` (a file ``a.txt`` for ``ext="txt"``)."""
        text = str(value) if isinstance(value, _WORDLIKE_OR_UUID) else None
        if text is None:
            return set()
        names: set[str] = set()
        for name, param in self.params.items():
            if (isinstance(param, str) or is_number(param)) and _stands_in(text, param, in_dates=True):
                names.add(name)
        return names

    def _template(self, text: str, where: Where) -> Template | None:
        """``text`` as literal pieces and pieces with origins, or None if nothing in it has one."""
        spans: dict[tuple[int, int], list[Arg]] = {}
        for token in number_tokens(text):
            options = self._number_origins(token.text, token.value, token.form, where)
            if options and (token.in_date or self._in_task(token.value)):
                options.append(Const(token.text))
            if options:
                spans.setdefault((token.start, token.end), []).extend(options)
            elif token.form.decimals:  # 1042.50 for a quote of 1042: the integer part is unsure
                whole = token.text.split(".")[0]
                options = self._number_origins(whole, float(whole.replace(",", "")), SAME, where)
                if options:
                    span = (token.start, token.start + len(whole))
                    spans.setdefault(span, []).extend([*options, Const(whole)])
        for name, param in self.params.items():
            if not isinstance(param, str) or not param.strip():
                continue
            for form, written in text_forms(param):
                for span in word_spans(text, written):
                    option: Arg = Param(name, form)
                    spans.setdefault(span, []).append(option)
                    if written.lower() in COMMON_WORDS:
                        spans[span].append(Const(written))
        for found, held in self.outputs.secrets.items():
            if found in text:
                for span in word_spans(text, found):
                    spans.setdefault(span, []).extend(
                        self._output(place, Form("secret", width=number), where) for place, number in held
                    )
        for found, places in self.outputs.texts.items():
            if found not in text or is_plain_number_text(found):
                continue
            plain = _plain_word(found)
            for span in word_spans(text, found):
                options = spans.setdefault(span, [])
                prose = plain and not any(
                    isinstance(o, Param) for o in options
                )  # a param's value is no prose
                options.extend(self._output(p, SAME, where) for p in places)
                if prose or any(True for _ in word_spans(self.literal, found)):
                    options.append(Const(found))
        if not spans:
            return None
        parts: list[Text | Arg] = []
        chosen: list[tuple[int, int]] = []
        for start, end in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):
            if all(end <= s or start >= e for s, e in chosen):
                chosen.append((start, end))
        position = 0
        for start, end in sorted(chosen):
            if position < start:
                parts.append(Text(text[position:start]))
            parts.append(self._bound(spans[(start, end)], f"{where} ({text[start:end]!r})"))
            position = end
        if position < len(text):
            parts.append(Text(text[position:]))
        return Template(tuple(parts))

    def _number_origins(self, written: str, number: float, form: Form, where: Where) -> list[Arg]:
        """The params and outputs a number written in a text stands for, each in the form written."""
        found: list[Arg] = []
        for name, param in self.params.items():
            value = number_of(param)
            if value is None:
                continue
            if value == number:
                found.append(Param(name, SAME if written == str(param) else form))
        for place, held in self.outputs.by_number.get(number, []):
            found.append(self._output(place, SAME if written == str(held) else form, where))
        return found

    def _struct(self, value: Any, where: Where) -> Arg | None:
        if type(value) in (list, tuple):
            items = tuple((i, self.build(v, f"{where}[{i}]")) for i, v in enumerate(value))
            container = "list" if type(value) is list else "tuple"
        elif type(value) is dict and all(isinstance(k, str | int) and not isinstance(k, bool) for k in value):
            items = tuple((k, self.build(v, f"{where}[{k!r}]")) for k, v in value.items())
            container = "dict"
        else:
            return None
        if all(isinstance(a, Const) for _, a in items):
            return None
        return Struct(container, items)  # type: ignore[arg-type]

    def _constant(self, value: Any, where: Where) -> Const:
        if type(value) in SCALAR_TYPES:  # stored as it is, and it holds nothing
            return Const(value)
        try:
            codec.encode(value)
        except codec.CodecError as exc:
            raise codec.CodecError(f"{where}: {exc}") from None
        hidden = self._hidden(value, where)
        if hidden is not None:
            raise Unreplayable(
                f"{where}: {hidden} inside a {type(value).__name__}, which a replay cannot rebuild"
            )
        return Const(value)

    def _hidden(self, value: Any, where: Where) -> str | None:
        """What a constant hides that a replay would have to change: a param or an earlier output
        inside a value that is not a list, tuple or dict of str or int keys."""
        stack = [(child, 1) for _, child in children(value)]
        budget = MAX_INDEXED_PER_OUTPUT
        while stack and budget > 0:
            budget -= 1
            child, depth = stack.pop()
            if child is None or isinstance(child, bool):
                continue
            origins = self._origins(child, where)
            if origins:
                return "a param's value or an earlier output is"
            if isinstance(child, str) and self._template(child, where) is not None:
                return "a param's value or an earlier output is"
            if depth < MAX_DEPTH:
                stack += [(grandchild, depth + 1) for _, grandchild in children(child)]
        return None


def _whole_form(source: Any, value: Any) -> Form | None:
    """How ``value`` is ``source``: the same, or converted (``"4471"`` ↔ ``4471``, ``5`` ↔ ``5.0``,
    ``maria`` → ``Maria``); None if it is not."""
    if type(source) is type(value):
        if source == value:
            return SAME
        if isinstance(value, str) and isinstance(source, str):
            return next((form for form, written in text_forms(source) if written == value), None)
        return None
    if isinstance(source, bool) or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return Form("str") if is_number(source) and value == str(source) else None
    if not is_number(value):
        return None
    if isinstance(source, str):
        number = number_of(source)
        if number is None or source != str(int(number)) or number != value:
            return None
        return Form("int") if isinstance(value, int) else Form("float")
    if is_number(source) and source == value:
        return Form("int") if isinstance(value, int) else Form("float")
    return None


def _plain_word(text: str) -> bool:
    """One word of letters only (a status ``shipped``, a name ``Alice``): in the agent's own prose it
    may be the agent's word as well as the tool's."""
    return text.isalpha()


LITERALS_KEPT_LENGTH = 2048
"""The numbers of a task's literal text up to this long are remembered (a task's runs share it)."""


@functools.lru_cache(maxsize=1024)
def _literal_numbers(literal: str) -> tuple[NumberToken, ...]:
    """The numbers of a task's literal text, read once for the runs of the latest tasks."""
    return tuple(number_tokens(literal))
