"""A call whose arguments are all constant scalars is replayed with them as recorded, unevaluated."""

from __future__ import annotations

from muscle_mem.provenance import Const, Output, Param, constant_arguments


def test_constant_scalars_are_the_arguments_themselves() -> None:
    """Each scalar constant, positional or named, is the value a replay passes."""
    args = (Const(1), Const("a"), Const(None), Const(2.5), Const(b"x"), Const(True))
    assert constant_arguments(args, (("k", Const("v")),)) == ((1, "a", None, 2.5, b"x", True), (("k", "v"),))
    assert constant_arguments((), ()) == ((), ())


def test_any_other_argument_is_evaluated() -> None:
    """A mutable constant (copied at each replay), a param or an output makes the call not constant."""
    for other in (Const([1]), Const({"a": 1}), Param("name"), Output(0)):
        assert constant_arguments((Const(1), other), ()) is None
        assert constant_arguments((Const(1),), (("k", other),)) is None
