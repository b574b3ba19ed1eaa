"""A tool's version sees the configuration it reads and ignores how its code is laid out."""

from __future__ import annotations

import collections
import enum
import functools
import importlib.util
import itertools
import textwrap
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from muscle_mem import Engine
from muscle_mem.record.tools import source_version

TOOL = '''
UNIT = {unit!r}


def charge(amount: int, note: str = "") -> str:
    """Charge an amount."""
    return f"{{amount}} {{UNIT}}"
'''


def load(tmp_path: Path, name: str, source: str) -> ModuleType:
    """A module written to ``tmp_path`` and imported, as a separate deployment would have it."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_constant_the_tool_reads_is_part_of_its_version(tmp_path: Path) -> None:
    cents = load(tmp_path, "deploy_cents", TOOL.format(unit="cents"))
    dollars = load(tmp_path, "deploy_dollars", TOOL.format(unit="dollars"))
    again = load(tmp_path, "deploy_cents_again", TOOL.format(unit="cents"))
    assert source_version(cents.charge) != source_version(dollars.charge)
    assert source_version(cents.charge) == source_version(again.charge)


def test_reformatting_and_comments_keep_the_version(tmp_path: Path) -> None:
    plain = load(tmp_path, "plain", TOOL.format(unit="cents"))
    reformatted = load(
        tmp_path,
        "reformatted",
        '''
        # settings
        UNIT = "cents"  # the unit


        def charge(
            amount: int,  # in the unit
            note: str = '',
        ) -> str:
            """Charge an amount."""
            # a comment in the body
            return f"{amount} {UNIT}"
        ''',
    )
    assert source_version(plain.charge) == source_version(reformatted.charge)


def test_an_edit_of_the_code_or_docstring_changes_the_version(tmp_path: Path) -> None:
    plain = load(tmp_path, "edited_base", TOOL.format(unit="cents"))
    code = load(
        tmp_path, "edited_code", TOOL.format(unit="cents").replace("{amount} {UNIT}", "{UNIT} {amount}")
    )
    doc = load(tmp_path, "edited_doc", TOOL.format(unit="cents").replace("Charge an", "Refund an"))
    default = load(
        tmp_path, "edited_default", TOOL.format(unit="cents").replace('note: str = ""', 'note: str = "x"')
    )
    versions = {source_version(m.charge) for m in (plain, code, doc, default)}
    assert len(versions) == 4


def test_a_closure_value_is_part_of_the_version() -> None:
    def make(factor: int) -> Any:
        def convert(amount: int) -> int:
            return amount * factor

        return convert

    assert source_version(make(100)) != source_version(make(1))
    assert source_version(make(100)) == source_version(make(100))


def test_lambda_adapters_over_different_functions_have_different_versions() -> None:
    def refund(**kw: Any) -> str:
        return f"refund {kw}"

    def cancel(**kw: Any) -> str:
        return f"cancel {kw}"

    def adapt(impl: Any) -> Any:
        return lambda **kw: impl(**kw)

    assert source_version(adapt(refund)) != source_version(adapt(cancel))
    assert source_version(adapt(refund)) == source_version(adapt(refund))
    assert source_version(functools.partial(refund, a=1)) != source_version(functools.partial(cancel, a=1))


def test_a_function_the_tool_calls_is_part_of_its_version(tmp_path: Path) -> None:
    source = """
    def rate():
        return {rate}


    def price(amount):
        return amount * rate()
    """
    low = load(tmp_path, "rate_low", source.format(rate=2))
    high = load(tmp_path, "rate_high", source.format(rate=3))
    assert source_version(low.price) != source_version(high.price)


class Unit(enum.Enum):
    CENTS = "cents"
    DOLLARS = "dollars"


def test_enum_members_and_tuples_count_by_value() -> None:
    def make(unit: Unit, limits: tuple[int, ...]) -> Any:
        def charge(amount: int) -> str:
            return f"{amount} {unit.value} within {limits}"

        return charge

    assert source_version(make(Unit.CENTS, (1, 2))) != source_version(make(Unit.DOLLARS, (1, 2)))
    assert source_version(make(Unit.CENTS, (1, 2))) != source_version(make(Unit.CENTS, (1, 3)))


def test_state_and_objects_shown_by_address_are_left_out() -> None:
    """A list a tool appends to, or a lock, is state: the version stays the same as it changes."""

    def make(log: list[str], lock: Any) -> Any:
        def search(query: str) -> str:
            with lock:
                log.append(query)
            return query

        return search

    log: list[str] = []
    before = source_version(make(log, threading.Lock()))
    log.append("cats")
    assert source_version(make(log, threading.Lock())) == before


def test_a_counter_or_a_queue_the_tool_uses_is_state_not_configuration() -> None:
    """Their text changes as the tool runs, so a restarted worker would see another version."""

    def make(ids: Any, pending: Any) -> Any:
        def create(title: str) -> str:
            pending.append(title)
            return f"T-{next(ids)}"

        return create

    ids, pending = itertools.count(1), collections.deque[str]()
    before = source_version(make(ids, pending))
    next(ids)
    pending.append("x")
    assert source_version(make(ids, pending)) == before
    assert source_version(make(itertools.count(1), pending)) == before


def test_a_recursive_closure_is_fingerprinted_once() -> None:
    def make(base: int) -> Any:
        def countdown(n: int) -> int:
            return base if n <= 0 else countdown(n - 1)

        return countdown

    assert source_version(make(1)) == source_version(make(1))
    assert source_version(make(1)) != source_version(make(2))


def test_a_callable_object_counts_by_its_class_and_settings() -> None:
    class Convert:
        def __init__(self, factor: int) -> None:
            self.factor = factor

        def __call__(self, amount: int) -> int:
            return amount * self.factor

    assert source_version(Convert(100)) == source_version(Convert(100))
    assert source_version(Convert(100)) != source_version(Convert(1))
    assert source_version(Convert(100).__call__) == source_version(Convert(1).__call__)


def test_deployments_sharing_a_store_do_not_replay_each_other(tmp_path: Path) -> None:
    """Two deployments whose tool reads another unit share a store but never each other's runs."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    results = []
    for unit in ("cents", "dollars", "dollars"):
        module = load(tmp_path, f"shop_{unit}_{len(results)}", TOOL.format(unit=unit))
        with Engine(url) as engine:
            charge = engine.register(module.charge, name="charge")
            engine.set_agent(lambda amount, charge=charge: charge(amount))
            results.append(engine(5))
    cents, dollars, dollars_again = results
    assert not cents.hit and cents.output == "5 cents"
    assert not dollars.hit and dollars.output == "5 dollars"
    assert dollars_again.hit and dollars_again.output == "5 dollars"
