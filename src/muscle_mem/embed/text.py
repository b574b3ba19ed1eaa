"""What a task text says, for the semantic matcher's guard: its normal form.

Two task texts are the same task only when their normal forms are equal, token for token, in order.
The normal form drops what frames a request (``please``, ``can you``, ``I need you to`` at its start;
``please``, ``thanks`` at its end; the articles ``a``, ``an``, ``the``; sentence punctuation) and
writes a few things one way: listed synonyms (``fetch`` → ``get``), spelling variants (``e-mail`` →
``email``), contractions (``what's`` → ``what is``), number words (``five`` → ``5``) and a unit
after a number (``5 mins`` → ``5 min``). It keeps everything else as it is: every other word
(unstemmed: ``record`` is not ``records``), negations (``don't`` is ``do not``, in its place),
pronouns, prepositions, quantifiers, numbers with their signs, currencies, symbols and operators,
quoted strings and placeholders such as ``{name}``. A word is lower-cased only where its case says
nothing: at the start of a sentence. Elsewhere a capital marks a name, so ``pay Bill`` is not ``pay
the bill`` and ``buy Apple`` is not ``buy an apple``.

A :data:`SOFT` word (``now``, ``just``, ``quickly``...) is framing only where it can only say how or
when to do the whole request: at the start or the end of a text that has no negation or scope word
(``don't reboot the server immediately`` is not ``don't reboot the server``), the one at the end only
when no clause comes before it (``delete the file I just created`` keeps its ``just``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TOKEN = re.compile(
    r"""(?<!\w)"[^"]+"|(?<!\w)'[^'\s][^']*'(?!\w)|\{\w+\}|[!=<>]=|!(?=[\w(])|(?<![\w.])\.\d[\w.]*"""
    r"""|\w[\w.@:/\\'-]*\w|\w|[^\w\s.,!?;:"']"""
)
"""A quoted string, a placeholder, a comparison (``!=``, ``<=``...), a negating ``!``, a number with a
leading dot (``.5``), a word (with inner dots, hyphens, apostrophes...), a character, or a symbol
(``$``, ``%``, ``-``, ``+``, ``<``, brackets...). Sentence punctuation is not a token."""
_SENTENCE_END = re.compile(r"[.!?:]\s")
"""What ends a sentence between two tokens: the next word's capital is then no name."""
_LEADING = re.compile(
    r"^\s*(?:(?:please|kindly|hey|hi|hello|ok|okay|can you|could you|would you|will you|"
    r"i need you to|i want you to|i'd like you to|i would like you to)\b[\s,]*)+",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"(?:\s*[,.!?]\s*|\s+(?=[A-Z]))(?i:please|kindly|thanks|thank you|thx|ty)[\s.!?]*$")
"""Courtesy that closes a request after punctuation or as a new sentence (``…, please``, ``… Thanks!``);
``reply with thanks`` keeps its last word."""
_PLEASE = re.compile(r"(\w+)\s+please[\s.!?]*$", re.IGNORECASE)
"""A closing ``please`` without punctuation (``restart the server please?``)..."""
_SAYING = _word_set(
    "with say says said saying write type typed reply answer word and or to as of is was for in like "
    "called named means mean"
)
"""...is courtesy but after these words, where it may be what to say (``reply with please``)."""
ARTICLES = frozenset(("a", "an", "the"))
"""Dropped wherever they are (but a capital ``A`` inside a sentence, which may be a name or a column)."""
_PHRASES = {"fill in": "fill", "fill out": "fill", "look up": "find", "right now": "now"}
"""Two words and the one word they mean."""
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
    # spelling variants: one word written two ways
    "email e-mail",
    "emails e-mails",
    "emailed e-mailed",
    "color colour",
    "colors colours",
    "canceled cancelled",
    "canceling cancelling",
    "favorite favourite",
    "favorites favourites",
    "organize organise",
    "analyze analyse",
    "catalog catalogue",
    "behavior behaviour",
    "gray grey",
    "login log-in",
    "setup set-up",
    "todo to-do",
    "todos to-dos",
    # number words
    "0 zero",
    "2 two",
    "3 three",
    "4 four",
    "5 five",
    "6 six",
    "7 seven",
    "8 eight",
    "9 nine",
    "10 ten",
    "11 eleven",
    "12 twelve",
)
"""Exact words that mean the same. Inflected forms are not mapped (``fetched`` stays); ``one`` is
not ``1`` (``the old one``)."""
_HEAD = {word: group.split()[0] for group in _SYNONYMS for word in group.split()}
_CONTRACTIONS = {
    "what's": ("what", "is"),
    "it's": ("it", "is"),
    "that's": ("that", "is"),
    "there's": ("there", "is"),
    "i'm": ("I", "am"),
    "i'll": ("I", "will"),
    "i've": ("I", "have"),
    "you're": ("you", "are"),
    "we're": ("we", "are"),
    "they're": ("they", "are"),
    "i": ("I",),
}
"""Contractions whose long form is certain (``I'd`` is not: would or had), and a lower-case ``i``."""
_NEGATED_BASE = {"can't": "can", "cannot": "can", "won't": "will", "shan't": "shall", "ain't": "is"}
_UNITS = (
    "ms msec msecs millisecond milliseconds",
    "s sec secs second seconds",
    "min mins minute minutes",
    "h hr hrs hour hours",
    "day days",
    "wk wks week weeks",
    "mm millimeter millimeters millimetre millimetres",
    "cm centimeter centimeters centimetre centimetres",
    "meter meters metre metres",
    "km kms kilometer kilometers kilometre kilometres",
    "mile miles",
    "kg kgs kilo kilos kilogram kilograms",
    "gram grams",
    "lb lbs",
    "MB mb megabyte megabytes",
    "GB gb gigabyte gigabytes",
    "% percent pct",
)
"""Names of one unit; a unit word is written as the first name only right after a number (``5 mins``,
``5min``; a glued unit has two letters or more: ``3d`` stays). ``m`` (metre or minute) and ``pounds``
(weight or money) are not mapped."""
_UNIT = {word: group.split()[0] for group in _UNITS for word in group.split()}
_GLUED = re.compile(r"(\d+(?:\.\d+)?)([a-z]+)")
_DOLLARS = frozenset(("dollar", "dollars"))
"""``5 dollars`` is written ``$ 5``, as ``$5`` is."""
SOFT = _word_set("now just quickly immediately asap also simply actually really")
"""Words that say how or when to do a task, not what it is, where they qualify the whole request
(``currently`` is not one: ``the users logged in currently`` are not all who logged in)."""
SCOPE = _word_set(
    "! not never no none nothing nobody nowhere neither nor without only except unless instead stop avoid"
)
"""Negations and scope words: in a text with one of them, a soft word may be what is negated or
limited, so no soft word is framing."""
CLAUSE = _word_set(
    "I you we he she they that which who whom whose when where while if until after before since "
    "because once as was were is are been being has have had"
)
"""Words that open or mark a clause: a soft word after one may qualify that clause, not the request."""
_PARTICIPLES = _word_set("done sent built made taken written given seen shown known kept left")
"""Participles not ending in -ed: a soft word next to one may qualify it (``the jobs done now``)."""


def synonym(word: str) -> str:
    """The head word of a word's synonym group, else the word itself."""
    return _HEAD.get(word, word)


@dataclass(frozen=True, slots=True)
class Analysis:
    """One task text in normal form."""

    tokens: tuple[str, ...]
    """Words (names as written, other words lower-cased and mapped), literals and symbols, in order."""

    @property
    def canonical(self) -> str:
        """The normal form as one string, for embedding."""
        return " ".join(self.tokens)


def analyse(text: str) -> Analysis:
    """The normal form of a task text."""
    text = text.replace("’", "'").strip()
    text = _TRAILING.sub("", _LEADING.sub("", text))
    please = _PLEASE.search(text)
    if please and please[1].lower() not in _SAYING:
        text = text[: please.start(1) + len(please[1])]
    tokens: list[str] = []
    end = -1
    for match in _TOKEN.finditer(text):
        token = match.group()
        initial = end < 0 or _SENTENCE_END.search(text, end, match.start()) is not None
        end = match.end()
        if token[0] in "\"'{" and len(token) > 1:
            tokens.append(token.strip("\"'"))  # a literal: as written
        elif token.lower() in ARTICLES and (token != "A" or initial):
            continue
        elif token.isupper() and (len(token) > 1 or token.isalpha()):
            tokens.append(token)  # US is not us, IT is not it, column A is not an article
        elif token[0].isupper() and not initial and token.lower() not in _CONTRACTIONS:
            tokens.append(token)  # a name: Bill is not the bill
        else:
            tokens += _words(token.lower())
    return Analysis(_soft_framing_dropped(_units(_phrases(tokens))))


def _words(word: str) -> tuple[str, ...]:
    if word in _CONTRACTIONS:
        return _CONTRACTIONS[word]
    if word.endswith("n't") or word == "cannot":
        return _NEGATED_BASE.get(word, word[:-3]), "not"
    glued = _GLUED.fullmatch(word)
    if glued and len(glued[2]) > 1 and glued[2] in _UNIT:
        return glued[1], glued[2]
    return (synonym(word),)


def _phrases(tokens: list[str]) -> list[str]:
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
    return out


def _units(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for token in tokens:
        number = bool(out) and _is_number(out[-1])
        if number and token in _DOLLARS:
            out.insert(len(out) - 1, "$")
        elif number and token in _UNIT:
            out.append(_UNIT[token])
        else:
            out.append(token)
    return out


def _is_number(token: str) -> bool:
    return token.replace(".", "", 1).isdigit()


def _soft_framing_dropped(tokens: list[str]) -> tuple[str, ...]:
    if SCOPE.intersection(tokens) or SOFT.issuperset(tokens):
        return tuple(tokens)
    start = 0
    while tokens[start] in SOFT:
        start += 1
    after = tokens[start]
    if after in CLAUSE or _participle(after) or after.endswith("ing"):
        start = 0  # "just before midnight", "just created files": the soft word qualifies what follows
    stop = len(tokens)
    while tokens[stop - 1] in SOFT:
        stop -= 1
    if CLAUSE.intersection(tokens[:stop]) or any(_participle(t) for t in tokens[:stop]):
        stop = len(tokens)  # "the file I created now", "the users logged in now"
    return tuple(tokens[start:stop])


def _participle(word: str) -> bool:
    return word.endswith("ed") or word in _PARTICIPLES
