"""What a task text says, for the semantic matcher's guard: literals, content words, negation.

Literals are the values a task acts on (numbers, identifiers, file names, paths, placeholders such as
``{name}``, quoted strings): two tasks that differ in one are different tasks. Content words are the
other words, lower-cased, stemmed and mapped to the head of their synonym group, less fillers
(articles, politeness, request framing); a word capitalised mid-sentence is a name, which only the
same name answers. Two words are opposites when a small lexicon of reversive action pairs says so,
or when one is the other with a negating prefix (``activate``/``deactivate``, ``enable``/``disable``,
``upload``/``download``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""(?<!\w)"[^"]+"|(?<!\w)'[^'\s][^']*'(?!\w)|\{\w+\}|\w[\w.@:/\\'’-]*\w|\w""")
_LITERAL_MARK = re.compile(r"[\d.@:/\\_]")

_FILLER_TEXT = """a an the please kindly pls can could would will shall you me i i'd i'm we us let let's lets
need want like help just now to for of in is are was were be been am has have had it its it's this that
these those some any there my your our with do also then so"""
FILLERS = frozenset(_FILLER_TEXT.split())
"""Words that frame a request rather than say what it does."""
NEGATIONS = frozenset(
    ("not", "no", "never", "none", "nor", "without", "cannot", "cant", "dont", "doesnt", "didnt", "wont")
)

_SYNONYMS = (
    "get fetch retrieve obtain grab",
    "show display",
    "find search locate look",
    "create make generate",
    "delete remove erase",
    "update modify change edit alter",
    "calculate compute",
    "buy purchase",
    "start begin launch",
    "book reserve",
    "big large",
    "small little tiny",
    "email mail",
)
_OPPOSITES = (
    "create delete",
    "add delete",
    "add subtract",
    "insert delete",
    "open close",
    "start stop",
    "start finish",
    "start end",
    "on off",
    "up down",
    "buy sell",
    "increase decrease",
    "increase reduce",
    "raise lower",
    "accept reject",
    "approve reject",
    "approve deny",
    "allow deny",
    "allow block",
    "grant revoke",
    "show hide",
    "send receive",
    "push pull",
    "attach detach",
    "login logout",
    "before after",
    "first last",
    "next previous",
    "forward backward",
    "old new",
    "oldest newest",
    "earliest latest",
    "max min",
    "maximum minimum",
    "high low",
    "highest lowest",
    "largest smallest",
    "big small",
    "more less",
    "most least",
    "yes no",
    "true false",
    "credit debit",
    "deposit withdraw",
    "asc desc",
    "ascending descending",
    "expand collapse",
    "pause resume",
    "hire fire",
    "save discard",
    "join leave",
    "arrive depart",
    "arrival departure",
    "enter exit",
    "north south",
    "east west",
    "left right",
    "top bottom",
    "above below",
    "win lose",
    "read write",
    "get set",
    "multiply divide",
    "plus minus",
    "encrypt decrypt",
    "book cancel",
    "schedule cancel",
    "into from",
)
_PREFIXES = (
    ("", "un"),
    ("", "de"),
    ("", "dis"),
    ("", "in"),
    ("", "im"),
    ("", "non"),
    ("", "anti"),
    ("en", "dis"),
    ("en", "de"),
    ("in", "ex"),
    ("im", "ex"),
    ("up", "down"),
    ("over", "under"),
    ("pre", "post"),
    ("max", "min"),
)
_SUFFIXES = ("ing", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A light suffix-stripping stem (``creates``, ``created``, ``creating`` → ``creat``)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix != "e" and word.endswith("e") and len(word) > 3:
                word = word[:-1]
            break
    return word


_HEAD_WORD = {stem(word): group.split()[0] for group in _SYNONYMS for word in group.split()}
"""Stem of a word in a synonym group → the group's head word."""


def synonym(word: str) -> str:
    """The head word of a word's synonym group, else the word itself."""
    return _HEAD_WORD.get(stem(word), word)


def head(word: str) -> str:
    """The key of a content word: the stem of its synonym group's head word."""
    return stem(synonym(word))


_OPPOSITE = frozenset(frozenset(head(w) for w in pair.split()) for pair in _OPPOSITES)


def opposite(a: str, b: str) -> bool:
    """Whether two word keys (see :func:`head`) mean opposite things."""
    if frozenset((a, b)) in _OPPOSITE:
        return True
    for x, y in ((a, b), (b, a)):
        for left, right in _PREFIXES:
            if x.startswith(left) and y.startswith(right):
                rest = x[len(left) :]
                if len(rest) >= 3 and rest == y[len(right) :]:
                    return True
    return False


@dataclass(frozen=True, slots=True)
class Analysis:
    """One task text taken apart for the guard."""

    literals: tuple[str, ...]
    """The literal values, in order."""
    words: dict[str, str]
    """Content word key (see :func:`head`) → its first surface form, in order of first appearance."""
    names: frozenset[str]
    """The keys of words written capitalised mid-sentence: only the same word answers them."""
    negated: bool
    canonical: str
    """The content words and literals in order, lower-cased, for embedding."""


def analyse(text: str) -> Analysis:
    """Take a task text apart into literals, content words and negation."""
    literals: list[str] = []
    words: dict[str, str] = {}
    names: set[str] = set()
    negated = False
    canonical: list[str] = []
    text = text.replace("’", "'")
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token.lower() in FILLERS:
            continue
        if _is_literal(token):
            literal = token.strip("\"'")
            literals.append(literal)
            canonical.append(literal.lower())
            continue
        for part in token.split("-"):
            word = part.lower().strip("'")
            if word in NEGATIONS or word.endswith("n't"):
                negated = True
                canonical.append("not")
                continue
            word = word.removesuffix("'s")
            if word and word not in FILLERS:
                key = head(word)
                words.setdefault(key, word)
                canonical.append(synonym(word))
                if part != part.lower() and _mid_sentence(text, match.start()):
                    names.add(key)
    return Analysis(tuple(literals), words, frozenset(names), negated, " ".join(canonical))


def _is_literal(token: str) -> bool:
    """Quoted, a placeholder, or with a digit or path-like punctuation."""
    return token[0] in "\"'{" or _LITERAL_MARK.search(token) is not None


def _mid_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return bool(before) and before[-1] not in ".!?:;\"'"
