"""A task text read as tokens of a kind between fixed separators: what makes two texts one shape."""

from __future__ import annotations

import pytest

from muscle_mem.model._text_slots import read


def kinds(text: str) -> list[tuple[str, str]]:
    reading = read(text)
    assert reading is not None
    return [(t.text, t.kind) for t in reading.tokens]


def test_each_literal_is_read_with_the_kind_it_looks_like() -> None:
    assert kinds('share q3_plan.pdf with ada@x.io on 2025-01-31 "by noon" re TCK-2041 for 12.50 Paris') == [
        ("share", "word"),
        ("q3_plan.pdf", "file:a9_a.a"),
        ("with", "word"),
        ("ada@x.io", "email"),
        ("on", "word"),
        ("2025-01-31", "date"),
        ("by noon", "quoted"),
        ("re", "word"),
        ("TCK-2041", "id:A-9"),
        ("for", "word"),
        ("12.50", "decimal"),
        ("Paris", "Name"),
    ]


@pytest.mark.parametrize(
    ("one", "other"),
    [("refund order 4471", "refund order 12"), ("invite Ada to channel dev", "invite Bob to channel sales")],
)
def test_texts_that_differ_in_values_of_one_kind_have_one_shape(one: str, other: str) -> None:
    first, second = read(one), read(other)
    assert first is not None and second is not None and first.shape == second.shape


@pytest.mark.parametrize(
    "other",
    [
        "refund order four",
        "refund order -1",
        "refund order 0150",
        "refund order 4471 and 4472",
        "refund  order 1",
    ],
)
def test_another_look_or_another_separator_is_another_shape(other: str) -> None:
    first, second = read("refund order 4471"), read(other)
    assert first is not None and second is not None and first.shape != second.shape


def test_a_template_shows_its_slots_and_keeps_the_other_tokens() -> None:
    reading = read("refund order 4471 quickly")
    assert reading is not None
    assert reading.rendered([2]) == "refund order {1} quickly"
    assert reading.tokens[2].value == 4471 and reading.tokens[3].value == "quickly"


def test_a_text_without_tokens_or_too_long_has_no_reading() -> None:
    assert read("?! ...") is None
    assert read("word " * 1000) is None
