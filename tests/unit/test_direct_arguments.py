"""A call whose arguments are constant scalars or whole outputs is replayed without evaluating them."""

from __future__ import annotations

from muscle_mem.model._forms import Form
from muscle_mem.model.provenance import Const, Output, Param, Pick, direct_arguments, evaluate


def test_constant_scalars_and_whole_outputs_are_passed_directly() -> None:
    """Each constant scalar is passed as recorded and each whole output as made, as evaluate gives them."""
    args = (Const(1), Const("a"), Const(None), Const(2.5), Const(b"x"), Const(True), Output(1))
    kwargs = (("k", Const("v")), ("o", Output(0)))
    direct = direct_arguments(args, kwargs)
    assert direct == (
        ((-1, 1), (-1, "a"), (-1, None), (-1, 2.5), (-1, b"x"), (-1, True), (1, None)),
        (("k", (-1, "v")), ("o", (0, None))),
        None,
    )
    outputs = [{"id": 7}, [1, 2]]
    positional = [value if at < 0 else outputs[at] for at, value in direct[0]]
    assert positional == [evaluate(a, {}, outputs) for a in args]
    assert direct_arguments((), ()) == ((), (), ((), ()))


def test_constant_scalars_alone_give_their_values_once() -> None:
    """When every argument is a constant scalar, their values come ready: nothing to look up at replay."""
    direct = direct_arguments((Const(1), Const("a")), (("k", Const(None)),))
    assert direct is not None and direct[2] == ((1, "a"), (("k", None),))


def test_any_other_argument_is_evaluated() -> None:
    """A mutable constant (copied at each replay), a param, a path into an output, an output in another
    form or picked from a list makes the call evaluated."""
    others = (
        Const([1]),
        Const({"a": 1}),
        Param("name"),
        Output(0, (("key", "id"),)),
        Output(0, (), Form("str")),
        Output(0, (("item", 0),), picks=(Pick(0, "x"),)),
    )
    for other in others:
        assert direct_arguments((Const(1), other), ()) is None
        assert direct_arguments((Const(1),), (("k", other),)) is None
