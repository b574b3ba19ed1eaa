"""What an engine does with a task it could replay: the modes, and the check of their options."""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["replay", "shadow", "proven", "frozen"]
"""``replay`` (the default): replay what is safe, the agent does the rest, and its runs are stored.
``shadow``: the agent always runs; what a replay would have done is compared with it, per family.
``proven``: a family replays once ``proof`` shadow runs agreed with no disagreement since; shadow before.
``frozen``: replay what is stored, write nothing (no trajectory, no use statistics, no eviction, no event)."""

MODES: tuple[str, ...] = get_args(Mode)
DEFAULT_PROOF = 3
"""The shadow agreements a family needs, with no disagreement since, before ``mode="proven"`` replays it."""


def check_mode(mode: object, proof: object) -> Mode:
    """``mode`` if it is one of :data:`MODES` and ``proof`` a positive int; ValueError saying what is wrong."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, not {mode!r}")
    if type(proof) is not int or proof < 1:
        raise ValueError(f"proof must be a positive int (shadow agreements before a replay), not {proof!r}")
    return mode  # type: ignore[return-value]
