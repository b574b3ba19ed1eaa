"""The code does what README.md, the docstrings and the CLI say, and bad input to the public API gets
one clear error naming what is wrong (found in review: each test failed before its fix; each
docstring quotes the documentation it holds the code to).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

import pytest

from muscle_mem import Check, Engine, current_run

PYTHON = sys.executable


def _engine() -> Engine:
    return Engine("memory://")


# --- data flow --------------------------------------------------------------------------------------


def test_output_reference_is_not_shadowed_by_a_param_template() -> None:
    """README, "How a call goes", 4: "An argument equal to an earlier tool's output (or a value
    inside it) is stored as a reference, so a replay passes the fresh value."
    recording.py: "A value equal to a param wins over an output reference" (equal, not containing).

    An id returned by a tool that happens to contain a param value ("John-17") is stored as the
    template "{name}-17", so the replay for Jane passes "Jane-17" while the tool returned "Jane-18":
    the wrong user is activated and Result.output is wrong too.
    (recording.py, _ArgBuilder.build: split_template is tried before provenance.find.)
    """
    counter = itertools.count(17)
    activated: list[str] = []
    engine = _engine()

    @engine.tool()
    def create_user(name: str) -> str:
        return f"{name}-{next(counter)}"

    @engine.tool()
    def activate(user_id: str) -> bool:
        activated.append(user_id)
        return True

    def agent(task: str) -> str:
        uid = create_user(task.split()[-1])
        activate(uid)
        return uid

    engine.set_agent(agent)
    first = engine("create user John", params={"name": "John"})
    second = engine("create user Jane", params={"name": "Jane"})
    assert first.output == "John-17"
    assert second.hit
    assert activated == ["John-17", "Jane-18"], "the replay must pass create_user's fresh output"
    assert second.output == "Jane-18"


def test_engine_docstring_example_is_one_task_for_every_name() -> None:
    """Engine docstring: ``engine("book a room for Ada", params={"name": "Ada"})  # one task for every
    name`` (it once showed a ``{name}`` placeholder, a syntax the engine does not have)."""
    booked: list[str] = []
    engine = _engine()

    @engine.tool()
    def book(guest: str) -> str:
        booked.append(guest)
        return "booked"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        return book(run.params["name"])

    engine.set_agent(agent)
    engine("book a room for Ada", params={"name": "Ada"})
    second = engine("book a room for Bob", params={"name": "Bob"})
    assert second.hit, second.reason
    assert booked == ["Ada", "Bob"]


# --- bad input to the public API: one clear error, naming what is wrong --------------------------------


def test_bare_tool_decorator_is_rejected_or_works() -> None:
    """README API table: ``@engine.tool(pre_check=None, post_check=None, *, name=None, version=None)``;
    the brief: "通过@engine.tool装饰器标记工具".

    ``@engine.tool`` without parentheses passes the function as ``pre_check``; decoration succeeds,
    the function is replaced by an internal lambda, and the first call says
    "a tool must be callable, got str". It should register the tool or raise a TypeError at once
    telling to write ``@engine.tool()``.
    """
    engine = _engine()
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
    """engine.py: ``raise TypeError("tags must be a sequence of strings, not a string")``; README:
    ``engine(*args, tags=None, params=None, **kwargs)``, tags partition the cache.

    ``tags=[1, 2]`` and ``tags=b"ab"`` (bytes: tags (97, 98)) are accepted and stored as the strings
    "1", "2" / "97", "98"; ``tags=("a", None)`` fails with "'<' not supported between instances of
    'NoneType' and 'str'". Each should be a TypeError saying tags must be strings.
    """
    engine = _engine()

    @engine.tool()
    def t(x: str) -> str:
        return x

    engine.set_agent(lambda task: t(task))
    with pytest.raises(TypeError, match="tags"):
        engine("a task", tags=tags)  # type: ignore[arg-type]


@pytest.mark.parametrize("params", [["a"], "abc", {1: "xxxx"}], ids=["list", "str", "int-key"])
def test_params_that_are_not_a_mapping_of_names_raise_a_clear_error(params: object) -> None:
    """README: ``engine(*args, tags=None, params=None, **kwargs)``, params by name
    (``params={"name": "John"}``).

    ``params=["a"]`` / ``params="abc"`` raise AttributeError "'list' object has no attribute 'items'";
    ``params={1: "xxxx"}`` raises "can only concatenate str (not "int") to str". Each should be a
    TypeError naming ``params``.
    """
    engine = _engine()

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
    """README: ``Engine(store=None, *, match="exact", similarity=0.9, capacity=None, max_bytes=None,
    policy=None, ttl=None, embedder=None)``. Bad values get clear errors ("capacity must be at
    least 1 trajectory, not -1"), but a value of the wrong type gets
    "'<' not supported between instances of 'str' and 'int'", which names no option.
    """
    with pytest.raises((TypeError, ValueError), match=name):
        Engine("memory://", **kwargs)  # type: ignore[arg-type]


def test_check_threshold_must_be_a_number() -> None:
    """README: ``Check(capture, compare, *, threshold=None)``; check.py: "a float score that passes
    when it is >= threshold".

    ``Check(..., threshold="0.8")`` is accepted; the mistake only shows at replay, as a miss whose
    reason is "'>=' not supported between instances of 'float' and 'str'" (and the run is stored
    again every time). The constructor should raise a TypeError naming ``threshold``.
    """
    with pytest.raises(TypeError, match="threshold"):
        Check(lambda: 1.0, lambda a, b: 0.5, threshold="0.8")  # type: ignore[arg-type]


def test_check_equal_compares_type_and_value_as_documented() -> None:
    """check.py, ``Check.equal``: "equals the recorded one in type and value": a snapshot of 1.0 (or
    True) does not pass for a recorded 1, an equal one does."""
    state: dict[str, object] = {"v": 1}
    engine = _engine()

    @engine.tool(pre_check=Check.equal(lambda x: state["v"]))
    def t(x: str) -> str:
        return x

    engine.set_agent(lambda task: t(task))
    engine("a task")
    for other in (1.0, True):
        state["v"] = other
        result = engine("a task")
        assert not result.hit and "pre-check" in (result.reason or "")
    state["v"] = 1
    assert engine("a task").hit


# --- CLI ------------------------------------------------------------------------------------------------


def test_cli_unreachable_postgres_is_one_line_on_stderr() -> None:
    """cli/__init__.py: "Errors are one clear line on stderr and a non-zero exit status, never a
    traceback".

    With a PostgreSQL store that cannot be reached, psycopg_pool's warnings (two lines per retry,
    through logging's last-resort handler) are printed before muscle-mem's own error line. The CLI
    should silence (or route) library loggers so that only its own line is printed.
    (The pool timeout is lowered to 1 s here so the test is quick; with the default 30 s the CLI
    prints 10 such lines.)
    """
    code = textwrap.dedent(
        """
        import sys
        from muscle_mem.stores.postgres import PostgresStore
        PostgresStore.__init__.__kwdefaults__["timeout"] = 1.0
        from muscle_mem.cli import main
        sys.exit(main(["ls", "--store", "postgresql://nobody@127.0.0.1:1/db"]))
        """
    )
    proc = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("muscle-mem: error:")
