"""The public API: names, builder methods, finalize errors, decorators, Result and metrics."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Iterator
from typing import Any

import pytest

import muscle_mem
from muscle_mem import Check, Engine, Result, current_run


def same(current: Any, candidate: Any) -> bool:
    return bool(current == candidate)


def test_public_names() -> None:
    assert {"Engine", "Check", "Result", "current_run"} <= set(muscle_mem.__all__)
    public = (muscle_mem.Engine, muscle_mem.Check, muscle_mem.Result, muscle_mem.current_run)
    assert public == (Engine, Check, Result, current_run)


# builder methods and finalize


def test_builder_methods_return_the_engine() -> None:
    engine = Engine()

    @engine.tool()
    def noop() -> None:
        pass

    assert engine.set_agent(lambda: noop()) is engine
    assert engine.set_context(object()) is engine
    assert engine.finalize() is engine


def test_finalize_without_agent_says_so() -> None:
    engine = Engine()

    @engine.tool()
    def noop() -> None:
        pass

    with pytest.raises(ValueError, match="no agent"):
        engine.finalize()
    with pytest.raises(ValueError, match="no agent"):
        engine("task")


def test_finalize_with_method_tools_but_no_context_says_so() -> None:
    engine = Engine()

    class Client:
        @engine.method()
        def ping(self) -> str:
            return "pong"

    engine.set_agent(lambda: Client().ping())
    with pytest.raises(ValueError, match="context"):
        engine.finalize()
    engine.set_context(Client())
    assert engine.finalize() is engine


def test_calling_the_engine_finalizes_it() -> None:
    engine = Engine()

    @engine.tool()
    def double(x: int) -> int:
        return 2 * x

    engine.set_agent(lambda x: double(x))
    assert engine(3).output == 6  # no explicit finalize() needed
    assert engine(3).hit


# decorators


def test_tool_keeps_name_docstring_and_signature() -> None:
    engine = Engine()

    def greet(name: str, *, punctuation: str = "!") -> str:
        """Greet someone."""
        return f"hello {name}{punctuation}"

    original = inspect.signature(greet)
    tool = engine.tool()(greet)
    assert tool.__name__ == "greet"
    assert tool.__doc__ == "Greet someone."
    assert inspect.signature(tool) == original
    assert tool("ada") == "hello ada!"  # outside a run the tool just runs


def test_function_is_a_synonym_of_tool() -> None:
    engine = Engine()
    calls: list[int] = []

    @engine.function(pre_check=Check.equal(lambda x: len(calls)))
    def add(x: int) -> int:
        """Add."""
        calls.append(x)
        return x

    assert add.__name__ == "add" and add.__doc__ == "Add."
    engine.set_agent(lambda x: add(x))
    assert not engine(1)
    calls.clear()
    hit = engine(1)
    assert hit and hit.steps_replayed == 1 and calls == [1]


async def test_async_tool_keeps_signature_and_is_a_coroutine_function() -> None:
    engine = Engine()

    async def fetch(url: str, timeout: float = 1.0) -> str:
        """Fetch a page."""
        return url

    tool = engine.tool()(fetch)
    assert inspect.iscoroutinefunction(tool)
    assert inspect.signature(tool) == inspect.signature(fetch)
    assert tool.__doc__ == "Fetch a page."
    assert await tool("u") == "u"


def test_method_tool_reinjects_self_from_context() -> None:
    engine = Engine()

    class Counter:
        def __init__(self, label: str) -> None:
            self.label = label
            self.seen: list[int] = []

        @engine.method()
        def add(self, n: int) -> str:
            """Count n."""
            self.seen.append(n)
            return f"counted {n}"

    assert Counter.add.__name__ == "add" and Counter.add.__doc__ == "Count n."
    assert list(inspect.signature(Counter.add).parameters) == ["self", "n"]

    recorder = Counter("recorder")
    live = Counter("live")

    def agent(n: int) -> str:
        return recorder.add(n)

    engine.set_agent(agent).set_context(recorder)
    first = engine(7)
    assert not first and first.output == "counted 7"
    stored = engine.store.get(first.trajectory_id or "")
    assert stored is not None
    assert len(stored.steps[0].args) == 1  # self is not recorded
    assert stored.steps[0].args[0].value == 7

    engine.set_context(live)
    second = engine(7)
    assert second.hit
    assert live.seen == [7] and recorder.seen == [7]  # the replay ran on the context, not the recorder
    assert second.output == "counted 7"


def test_register_instruments_a_runtime_callable() -> None:
    engine = Engine()
    performed: list[str] = []

    def make_tool(prefix: str) -> Any:
        def run_query(query: str) -> str:
            performed.append(query)
            return prefix + query

        return run_query

    search = engine.register(make_tool("found:"), name="search", version="1")
    assert search.__name__ == "run_query"
    assert list(inspect.signature(search).parameters) == ["query"]
    engine.set_agent(lambda q: search(q))
    assert engine("cats").output == "found:cats"
    performed.clear()
    again = engine("cats")
    assert again.hit and performed == ["cats"] and again.output == "found:cats"


def test_register_accepts_a_partial_and_a_callable_object() -> None:
    engine = Engine()

    class Adder:
        def __call__(self, a: int, b: int) -> int:
            return a + b

    add = engine.register(Adder(), name="add")
    times = engine.register(functools.partial(lambda k, x: k * x, 3), name="triple")
    engine.set_agent(lambda a: times(add(a, 1000)))
    assert engine(5).output == 3015
    hit = engine(5)
    assert hit.hit and hit.output == 3015


def test_a_wrapper_made_anew_for_each_run_can_be_registered_again() -> None:
    engine = Engine()
    runs: list[list[str]] = []

    def make_search() -> Any:
        searched: list[str] = []  # state of this run: not part of the tool's version
        runs.append(searched)

        def search(query: str) -> str:
            searched.append(query)
            return query.upper()

        return engine.register(search, name="search")

    def agent(query: str) -> str:
        return str(make_search()(query))  # a framework building its tools per run

    engine.set_agent(agent)
    make_search()
    assert not engine("cats")
    make_search()  # the newest callable under the name is the one replayed
    hit = engine("cats")
    assert hit.hit and runs == [[], ["cats"], ["cats"]]


def test_a_wrapper_made_anew_over_another_setting_replaces_the_tool_and_misses() -> None:
    """The same code registered again over another setting replaces the tool under its name; the
    trajectories of the earlier setting are not replayed with it."""
    engine = Engine()

    def make_convert(factor: int) -> Any:
        def convert(amount: int) -> int:
            return amount * factor

        return engine.register(convert, name="convert")

    tools = {"cents": make_convert(100)}
    engine.set_agent(lambda amount: tools["cents"](amount))
    assert engine(3).output == 300
    tools["cents"] = make_convert(1000)
    again = engine(3)
    assert not again.hit and again.output == 3000


def test_partials_and_callable_objects_get_a_stable_version() -> None:
    from muscle_mem.record.tools import source_version

    class Adder:
        def __call__(self, a: int) -> int:
            return a

    def base(k: int, x: int) -> int:
        return k * x

    assert source_version(Adder()) == source_version(Adder())
    assert "0x" not in source_version(Adder())
    assert source_version(functools.partial(base, 2)) == source_version(functools.partial(base, 2))
    assert source_version(functools.partial(base, 2)) != source_version(functools.partial(base, 3))


def test_two_tools_with_one_name_are_refused() -> None:
    engine = Engine()

    @engine.tool(name="op")
    def one() -> int:
        return 1

    with pytest.raises(ValueError, match="already registered"):

        @engine.tool(name="op")
        def two() -> int:
            return 2


def test_checks_must_be_check_objects() -> None:
    engine = Engine()
    with pytest.raises(TypeError, match="Check"):
        engine.tool(pre_check=lambda: 1)(lambda: None)  # type: ignore[arg-type]


def test_a_generator_tool_is_refused_or_replays_its_body() -> None:
    """A generator function is refused as a tool (a replay that dropped the generator would skip its body);
    accepted, its replay must run the body as the recorded call did."""
    engine = Engine()
    sent: list[str] = []

    def send_all(addresses: list[str]) -> Iterator[str]:
        for address in addresses:
            sent.append(address)
            yield address

    try:
        tool = engine.register(send_all)
        engine.set_agent(lambda task: len(list(tool(["ada@corp.com", "bob@corp.com"]))))
        engine("send the newsletter")
    except (TypeError, ValueError):
        return  # refused: fine
    before = len(sent)
    second = engine("send the newsletter")
    assert len(sent) == before + 2, (
        f"hit={second.hit}, answer {second.output!r}, but {len(sent) - before} mails were sent by the replay"
    )


def test_a_bare_tool_decorator_is_refused_naming_tool_with_parentheses() -> None:
    """``@engine.tool`` without parentheses raises a TypeError at once that says to write
    ``@engine.tool()`` (or it registers the tool)."""
    engine = Engine("memory://")
    try:

        @engine.tool  # type: ignore[arg-type]
        def greet(name: str) -> str:
            return "hi " + name

    except TypeError as exc:
        assert "tool()" in str(exc), str(exc)
        return
    assert greet("bob") == "hi bob"  # type: ignore[operator]


@pytest.mark.parametrize(
    "tags",
    [[1, 2], b"ab", ("a", None)],
    ids=["ints", "bytes", "none-inside"],
)
def test_tags_that_are_not_strings_raise_a_clear_type_error(tags: object) -> None:
    """Tags that are not strings (ints, bytes, a None inside) raise a TypeError naming ``tags``."""
    engine = Engine("memory://")

    @engine.tool()
    def t(x: str) -> str:
        return x

    engine.set_agent(lambda task: t(task))
    with pytest.raises(TypeError, match="tags"):
        engine("a task", tags=tags)  # type: ignore[arg-type]


@pytest.mark.parametrize("params", [["a"], "abc", {1: "xxxx"}], ids=["list", "str", "int-key"])
def test_params_that_are_not_a_mapping_of_names_raise_a_clear_error(params: object) -> None:
    """Params that are not a mapping of names (a list, a string, an int key) raise a TypeError naming
    ``params``."""
    engine = Engine("memory://")

    @engine.tool()
    def t(x: str) -> str:
        return x

    engine.set_agent(lambda task: t(task))
    with pytest.raises(TypeError, match="params"):
        engine("task xxxx", params=params)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"capacity": "10"}, "capacity"),
        ({"max_bytes": "1MB"}, "max_bytes"),
        ({"ttl": "1h"}, "ttl"),
        ({"match": "semantic", "similarity": "high"}, "similarity"),
    ],
    ids=["capacity", "max_bytes", "ttl", "similarity"],
)
def test_engine_options_of_the_wrong_type_name_the_option(kwargs: dict[str, object], name: str) -> None:
    """An Engine option of the wrong type (``capacity="10"``, ``ttl="1h"``...) raises an error naming the
    option."""
    with pytest.raises((TypeError, ValueError), match=name):
        Engine("memory://", **kwargs)  # type: ignore[arg-type]


# Result


def test_result_fields_on_a_miss_then_a_hit() -> None:
    engine = Engine()

    @engine.tool()
    def upper(text: str) -> str:
        return text.upper()

    engine.set_agent(lambda text: upper(text))
    miss = engine("hello")
    assert isinstance(miss, Result)
    assert not miss and miss.hit is False
    assert miss.output == "HELLO"
    assert miss.steps_replayed == 0
    assert miss.fallback is True
    assert miss.reason == "no trajectory is stored for this task"
    assert miss.trajectory_id is not None and engine.store.get(miss.trajectory_id) is not None
    assert miss.elapsed > 0

    hit = engine("hello")
    assert hit and hit.hit is True
    assert hit.output == "HELLO"
    assert hit.steps_replayed == 1
    assert hit.fallback is False
    assert hit.reason is None
    assert hit.trajectory_id == miss.trajectory_id
    assert hit.elapsed > 0


def test_result_is_truthy_exactly_on_a_full_hit() -> None:
    assert Result(hit=True)
    assert not Result(hit=False, output="x", steps_replayed=3)


def test_a_run_without_tool_calls_stores_nothing() -> None:
    engine = Engine()

    @engine.tool()
    def unused() -> None:
        pass

    engine.set_agent(lambda task: f"done: {task}")
    first = engine("chat")
    assert first.output == "done: chat" and first.trajectory_id is None
    assert len(engine.store) == 0
    assert not engine("chat")


# metrics


def test_metrics_attributes() -> None:
    engine = Engine()
    state = {"ok": True}

    @engine.tool(pre_check=Check.equal(lambda step: state["ok"]))
    def act(step: int) -> int:
        return step

    def agent(n: int) -> int:
        done = len(current_run().steps)  # type: ignore[union-attr]
        for i in range(done, n):
            act(i)
        return n

    engine.set_agent(agent)
    metrics = engine.metrics
    assert (metrics.hits, metrics.misses, metrics.partial_replays, metrics.steps_replayed) == (0, 0, 0, 0)
    assert metrics.agent_seconds == 0.0 and metrics.saved_seconds == 0.0

    engine(3)  # miss
    assert (metrics.hits, metrics.misses) == (0, 1)
    assert metrics.agent_seconds > 0
    engine(3)  # hit, 3 steps
    assert (metrics.hits, metrics.misses, metrics.steps_replayed) == (1, 1, 3)
    assert metrics.saved_seconds >= 0.0
    assert isinstance(metrics.saved_seconds, float)

    engine(3)  # hit again
    assert metrics.hits == 2 and metrics.steps_replayed == 6
    state["ok"] = False
    engine(3)  # pre-check fails at step 0: a miss, nothing replayed
    assert (metrics.hits, metrics.misses, metrics.steps_replayed) == (2, 2, 6)
    assert metrics.partial_replays == 0


def test_partial_replays_are_counted() -> None:
    engine = Engine()
    env = {"page": "a"}

    @engine.tool()
    def first() -> None:
        pass

    @engine.tool(pre_check=Check.equal(lambda: env["page"]))
    def second() -> None:
        pass

    def agent() -> None:
        if not current_run().steps:  # type: ignore[union-attr]
            first()
        second()

    engine.set_agent(agent)
    engine()
    env["page"] = "b"
    partial = engine()
    assert not partial and partial.steps_replayed == 1
    assert engine.metrics.partial_replays == 1
    assert engine.metrics.misses == 2 and engine.metrics.steps_replayed == 1


# current_run and quiet


def test_current_run_is_none_outside_a_run() -> None:
    assert current_run() is None
    engine = Engine()

    @engine.tool()
    def noop() -> None:
        pass

    seen: list[object] = []
    engine.set_agent(lambda: (seen.append(current_run()), noop()))
    engine()
    assert seen[0] is not None
    assert current_run() is None


def test_the_library_prints_nothing_and_logs_to_its_logger(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    engine = Engine()
    env = {"v": 1}

    @engine.tool(pre_check=Check.equal(lambda: env["v"]), post_check=Check(lambda: env["v"], same))
    def step() -> int:
        return env["v"]

    engine.set_agent(lambda: step())
    engine()  # miss
    engine()  # hit
    env["v"] = 2
    engine()  # pre-check fails
    with pytest.raises(ValueError):
        Engine()()  # no agent
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert caplog.records, "the engine should log what it does"
    assert all(r.name == "muscle_mem" or r.name.startswith("muscle_mem.") for r in caplog.records)


def test_the_library_never_prints_even_when_logging_is_not_configured(tmp_path: Any) -> None:
    """Without a NullHandler, Python's last-resort handler would print the library's errors on stderr."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        from muscle_mem import Engine
        engine = Engine()

        @engine.tool()
        def send(payload):
            return "sent"

        engine.set_agent(lambda task: send(object()))  # an argument that cannot be stored: logged
        result = engine("send it")
        assert not result.stored
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""


def test_options_are_checked_before_the_store_is_opened(tmp_path: Any) -> None:
    path = tmp_path / "never.db"
    with pytest.raises(ValueError, match="similarity"):
        Engine(f"sqlite:///{path}", match="semantic", similarity=2.0)
    with pytest.raises(ValueError):
        Engine(f"sqlite:///{path}", embedder="bogus")
    with pytest.raises(ValueError, match="observations must be 'compared' or 'ignored', not 'off'"):
        Engine(f"sqlite:///{path}", observations="off")  # type: ignore[arg-type]
    assert not path.exists()
