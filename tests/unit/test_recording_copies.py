"""What a run keeps of a value (``recording.frozen``): a copy the agent cannot change afterwards."""

from __future__ import annotations

import pytest

from muscle_mem.model import codec
from muscle_mem.record._call_copies import frozen


def test_plain_data_is_copied_whole_and_keeps_its_types() -> None:
    """Dicts, lists and scalars are copied at every level; tuples and other containers keep their type."""
    value = {"id": "cus_1", "tags": ["a", {"deep": [1, 2.5, None, True]}], "pair": (1, 2)}
    copied = frozen(value)
    assert copied == value and copied is not value
    assert copied["tags"] is not value["tags"] and copied["tags"][1] is not value["tags"][1]
    assert type(copied["pair"]) is tuple
    value["tags"][1]["deep"].append("later")  # the agent changing its output after the call
    assert copied["tags"][1]["deep"] == [1, 2.5, None, True]


def test_a_dict_with_other_keys_or_deeper_than_the_plain_copy_is_copied_by_the_codec_path() -> None:
    """Int keys and nesting past the plain copy's depth are still copied whole."""
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(40):
        deep = {"next": deep}
    for value in ({1: "one", "two": [2]}, deep):
        copied = frozen(value)
        assert copied == value and copied is not value


def test_a_container_the_codec_cannot_store_is_refused_as_before() -> None:
    """A list longer than the codec stores raises the codec's error, not a silent copy."""
    with pytest.raises(codec.CodecError, match="items in one container"):
        frozen({"rows": list(range(codec.MAX_ITEMS + 1))})
