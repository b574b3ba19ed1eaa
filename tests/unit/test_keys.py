"""Point 1, task identity: the same tags and the same agent arguments once params are named."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from muscle_mem import Engine, current_run
from muscle_mem.model._task_keys import TaskIdentity, render, split_template, task_key, task_text
from muscle_mem.model.codec import CodecError


def form_engine(**options: Any) -> tuple[Engine, list[str]]:
    engine = Engine(**options)
    typed: list[str] = []

    @engine.tool()
    def type_into(field: str, text: str) -> None:
        typed.append(text)

    def agent(task: str, *rest: Any, **kwargs: Any) -> str:
        name = task.rsplit(" ", 1)[-1]
        type_into("name", name)
        return f"filled for {name}"

    engine.set_agent(agent)
    return engine, typed


# the engine


def test_params_make_john_and_jane_one_task() -> None:
    engine, typed = form_engine()
    john = engine("fill the form for John", params={"name": "John"})
    assert not john and typed == ["John"]
    jane = engine("fill the form for Jane", params={"name": "Jane"})
    assert jane.hit, jane.reason
    assert typed == ["John", "Jane"]  # replayed with Jane's value
    assert jane.output == "filled for Jane"  # the answer, templated too
    assert len(engine.store) == 1


def test_without_params_john_and_erik_are_two_tasks() -> None:
    """muscle-mem 0.1.0's fault: engine("erik") replayed the trajectory of engine("john")."""
    engine, typed = form_engine()
    assert not engine("greet john")
    erik = engine("greet erik")
    assert not erik
    assert erik.fallback and erik.steps_replayed == 0
    assert erik.reason == "no trajectory is stored for this task"
    assert typed == ["john", "erik"]  # the agent greeted erik itself; john's call was not replayed
    assert engine("greet john").hit and engine("greet erik").hit
    assert typed == ["john", "erik", "john", "erik"]
    assert len(engine.store) == 2


def test_tags_are_part_of_the_task() -> None:
    engine, _ = form_engine()
    assert not engine("fill the form for Ada", tags=["prod"])
    assert not engine("fill the form for Ada", tags=["staging"])
    assert not engine("fill the form for Ada")
    assert engine("fill the form for Ada", tags=["prod"]).hit
    assert engine("fill the form for Ada", tags=("prod", "prod")).hit  # tags are a set


def test_tags_must_not_be_a_bare_string() -> None:
    engine, _ = form_engine()
    with pytest.raises(TypeError, match="tags"):
        engine("task", tags="prod")


def test_kwargs_are_part_of_the_task() -> None:
    engine, _ = form_engine()
    assert not engine("fill the form for Ada", lang="en")
    assert not engine("fill the form for Ada", lang="fr")
    assert engine("fill the form for Ada", lang="en").hit


def test_match_tags_keeps_the_looser_rule() -> None:
    engine, typed = form_engine(match="tags")
    assert not engine("greet john", tags=["greeter"])
    erik = engine("greet erik", tags=["greeter"])
    assert erik.hit  # 0.1.0's rule: tags and checks only
    assert typed == ["john", "john"]
    assert not engine("greet erik", tags=["other"])


def test_match_must_be_known() -> None:
    with pytest.raises(ValueError, match="match"):
        Engine(match="fuzzy")  # type: ignore[arg-type]


@pytest.mark.parametrize("match", ["exact", "semantic"])
def test_a_bool_param_outside_the_task_text_is_part_of_the_task(match: str) -> None:
    """A bool param that is not in the agent's arguments is part of the task, with exact and semantic
    matching alike: ``force=True`` and ``force=False`` are two tasks, and the second call never
    replays ``force=True``."""
    engine = Engine(match=match)  # type: ignore[arg-type]
    calls: list[Any] = []

    @engine.tool()
    def delete_branch(name: str, force: bool) -> str:
        calls.append((name, force))
        return "deleted"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        return delete_branch("feature-login", force=run.params["force"])

    engine.set_agent(agent)
    engine("clean up the feature branch", params={"force": True})
    calls.clear()
    result = engine("clean up the feature branch", params={"force": False})
    # the caller asked for force=False: either the agent runs, or a replay passes force=False
    assert calls == [("feature-login", False)], (result.hit, calls)


def test_a_large_param_outside_the_agent_arguments_is_not_copied_into_the_task_text() -> None:
    """A param that is not in the agent's arguments is shown shortened in the task text: a 240 KB document
    makes a task text under 1,000 characters (the key holds the value)."""
    engine = Engine()

    @engine.tool()
    def summarize(doc: str) -> str:
        return doc[:10]

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        return summarize(run.params["document"])

    engine.set_agent(agent)
    document = "lorem ipsum " * 20_000
    assert engine("summarize the document", params={"document": document}).stored
    assert engine("summarize the document", params={"document": document}).hit
    (text,) = engine.store.tasks().values()
    assert len(text) < 1_000, len(text)


def test_the_engine_docstring_example_is_one_task_for_every_name() -> None:
    """The Engine docstring's ``engine("book a room for Ada", params={"name": "Ada"})`` is one task for
    every name: the call for Bob is a hit that books Bob."""
    booked: list[str] = []
    engine = Engine("memory://")

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


# the key functions


def test_task_key_names_params() -> None:
    john = task_key(["fill the form for John"], {}, (), {"name": "John"})
    jane = task_key(["fill the form for Jane"], {}, (), {"name": "Jane"})
    erik = task_key(["fill the form for Erik"], {}, (), {})
    assert john == jane != erik
    assert task_key([42], {}, (), {"n": 42}) == task_key([7], {}, (), {"n": 7})
    assert task_key([42], {}, (), {}) != task_key([7], {}, (), {})
    assert task_key(["x"], {}, ("b", "a"), {}) == task_key(["x"], {}, ("a", "b"), {})
    assert task_key(["x"], {}, ("a",), {}, "tags") == task_key(["y"], {"k": 1}, ("a",), {}, "tags")


def test_task_key_names_params_inside_containers() -> None:
    one = task_key([{"to": "ada@x.io", "n": [3, "ada@x.io"]}], {}, (), {"email": "ada@x.io"})
    two = task_key([{"to": "bob@x.io", "n": [3, "bob@x.io"]}], {}, (), {"email": "bob@x.io"})
    assert one == two


def test_booleans_and_none_are_not_param_values() -> None:
    assert task_key([True], {}, (), {"flag": True}) != task_key([False], {}, (), {"flag": False})
    assert task_key([1], {}, (), {"flag": True}) != task_key([True], {}, (), {"flag": True})


def test_task_text_shows_params_by_name() -> None:
    assert task_text(["fill the form for John"], {"lang": "en"}, {"name": "John"}) == (
        "fill the form for {name}, lang=en"
    )


def test_templates_split_and_fill() -> None:
    parts = split_template("mail ada@x.io about order 1234", {"email": "ada@x.io", "order": "1234"})
    assert parts == (("text", "mail "), ("param", "email"), ("text", " about order "), ("param", "order"))
    assert render(parts) == "mail {email} about order {order}"
    assert split_template("nothing here", {"email": "ada@x.io"}) is None
    # the longest param value wins where two overlap
    assert split_template("Johnson", {"a": "John", "b": "Johnson"}) == (("param", "b"),)
    # a one-character param is never substituted inside other strings
    assert split_template("a cat", {"x": "a"}) is None


def test_an_unencodable_agent_argument_is_named_in_the_error() -> None:
    with pytest.raises(CodecError, match="agent argument 1 cannot identify the task"):
        task_key(["task", threading.Lock()], {}, (), {})
    with pytest.raises(CodecError, match="agent argument 'conn'"):
        task_key(["task"], {"conn": threading.Lock()}, (), {})


def test_an_unencodable_agent_argument_still_runs_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    engine, typed = form_engine()
    lock = threading.Lock()
    result = engine("fill the form for Ada", lock)
    assert result.output == "filled for Ada" and not result.stored
    assert typed == ["Ada"] and len(engine.store) == 0
    assert "agent argument 1" in caplog.text


def test_a_param_is_substituted_only_as_a_whole_word() -> None:
    params = {"lang": "en"}
    assert split_template("Send the report", params) is None
    assert split_template("locale en-US", params) == (("text", "locale "), ("param", "lang"), ("text", "-US"))
    assert split_template("/docs/en/index", params) == (
        ("text", "/docs/"),
        ("param", "lang"),
        ("text", "/index"),
    )
    # at any length: never part of a longer word, where the replay would not rewrite it either
    assert split_template("user_adam42", {"who": "adam"}) is None
    assert split_template("mail hannah@corp.com", {"who": "anna"}) is None
    assert split_template("mail adam_42", {"who": "adam"}) == (
        ("text", "mail "),
        ("param", "who"),
        ("text", "_42"),
    )


def test_a_short_param_does_not_rewrite_unrelated_tool_arguments() -> None:
    engine = Engine()
    clicked: list[str] = []

    @engine.tool()
    def click(label: str) -> None:
        clicked.append(label)

    def agent(task: str, lang: str) -> None:
        click("Send")
        click(f"locale {lang}")

    engine.set_agent(agent)
    engine("send it", "en", params={"lang_id": "en"})
    assert engine("send it", "fr", params={"lang_id": "fr"}).hit
    assert clicked == ["Send", "locale en", "Send", "locale fr"]


def test_memoised_task_identity_matches_the_direct_computation_and_tells_types_apart() -> None:
    identify = TaskIdentity()
    for args in (("fill the form for Ada",), (1,), (True,), (1.0,), ("1",)):
        params = {"name": "Ada"}
        first = identify(args, {}, ("t",), params)
        assert first == identify(args, {}, ("t",), params)  # second time from the memo
        assert first == (task_key(args, {}, ("t",), params), task_text(args, {}, params))
    keys = {identify((v,), {}, (), {})[0] for v in (1, True, 1.0, "1")}
    assert len(keys) == 4
    unhashable = identify((["a", "list"],), {}, (), {})  # not plain scalars: computed directly
    assert unhashable[0] == task_key((["a", "list"],), {}, (), {})
