"""What a task text says, for the semantic matcher's guard: its normal form.

Two task texts are the same task only when their normal forms are equal, token for token, in order.
The normal form drops what frames a request (``please``, ``can you``, ``I need you to`` at its start;
``please``, ``thanks`` at its end; the articles ``a``, ``an``, ``the``; sentence punctuation) and
maps a few exact words to the head of their synonym group (``fetch`` → ``get``); it keeps everything
else as it is: every other word (lower-cased, unstemmed: ``record`` is not ``records``), negations
(``don't`` is ``do not``, in its place), pronouns, prepositions, quantifiers, numbers with their
signs, currencies and units, symbols and operators, quoted strings and placeholders such as
``{name}``. Two texts whose normal forms differ in anything but a few :data:`SOFT` words (``now``,
``quickly``...) are two tasks: a miss, never a wrong replay. Where they differ only in soft words,
the embeddings' cosine decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""(?<!\w)"[^"]+"|(?<!\w)'[^'\s][^']*'(?!\w)|\{\w+\}|[!=<>]=|!(?=[\w(])|(?<![\w.])\.\d[\w.]*"""
    r"""|\w[\w.@:/\\'-]*\w|\w|[^\w\s.,!?;:"']"""
)
"""A quoted string, a placeholder, a comparison (``!=``, ``<=``...), a negating ``!``, a number with a
leading dot (``.5``), a word (with inner dots, hyphens, apostrophes...), a character, or a symbol
(``$``, ``%``, ``-``, ``+``, ``<``, brackets...). Sentence punctuation is not a token."""
_LEADING = re.compile(
    r"^\s*(?:(?:please|kindly|hey|hi|hello|ok|okay|can you|could you|would you|will you|"
    r"i need you to|i want you to|i'd like you to|i would like you to)\b[\s,]*)+",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"(?:\s*[,.!?]\s*|\s+(?=[A-Z]))(?i:please|kindly|thanks|thank you|thx|ty)[\s.!?]*$")
"""Courtesy that closes a request after punctuation or as a new sentence (``…, please``, ``… Thanks!``);
``reply with thanks`` keeps its last word."""
ARTICLES = frozenset(("a", "an", "the"))
"""Dropped wherever they are (but a capital ``A``, which may be a name or a column)."""
_PHRASES = {"fill in": "fill", "fill out": "fill", "look up": "find"}
"""Phrasal verbs and the word they mean."""
_SYNONYMS = (
    "get fetch retrieve obtain",
    "show display",
    "find search locate",
    "create make generate",
    "delete remove",
    "update modify edit",
    "calculate compute",
    "buy purchase",
    "start begin launch",
    "book reserve",
    "list enumerate",
)
"""Exact words that mean the same action. Inflected forms are not mapped (``fetched`` stays)."""
_HEAD = {word: group.split()[0] for group in _SYNONYMS for word in group.split()}
SOFT = frozenset(
    ["now", "just", "quickly", "immediately", "asap", "also", "simply", "actually", "really", "currently"]
)
"""Words that say how or when to do a task, not what it is: two texts may differ in them, and the
embeddings' cosine then decides (``similarity``)."""


def synonym(word: str) -> str:
    """The head word of a word's synonym group, else the word itself."""
    return _HEAD.get(word, word)


@dataclass(frozen=True, slots=True)
class Analysis:
    """One task text in normal form."""

    tokens: tuple[str, ...]
    """Words (lower-cased, synonyms mapped), literals and symbols, in order."""

    @property
    def core(self) -> tuple[str, ...]:
        """The tokens but :data:`SOFT` words: what two texts of one task share exactly."""
        return tuple(t for t in self.tokens if t not in SOFT)

    @property
    def canonical(self) -> str:
        """The normal form as one string, for embedding."""
        return " ".join(self.tokens)


def analyse(text: str) -> Analysis:
    """The normal form of a task text."""
    text = text.replace("’", "'").strip()
    text = _TRAILING.sub("", _LEADING.sub("", text))
    tokens: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] in "\"'{" and len(token) > 1:
            tokens.append(token.strip("\"'"))  # a literal: as written
            continue
        if token.lower() in ARTICLES and token != "A":
            continue
        if token.isupper() and (len(token) > 1 or token.isalpha()):
            tokens.append(token)  # US is not us, IT is not it, column A is not an article
            continue
        word = token.lower()
        if word.endswith("n't") or word == "cannot":
            tokens += [_NEGATED_BASE.get(word, word[:-3]), "not"]
            continue
        tokens.append(synonym(word))
    return Analysis(_phrases(tuple(tokens)))


_NEGATED_BASE = {"can't": "can", "cannot": "can", "won't": "will", "shan't": "shall", "ain't": "is"}


def _phrases(tokens: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        pair = " ".join(tokens[i : i + 2])
        if pair in _PHRASES:
            out.append(synonym(_PHRASES[pair]))
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return tuple(out)
