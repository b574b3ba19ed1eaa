"""Whether what a replay saw is covered by what the agent's own runs showed not to matter.

Runs that made the same next call after seeing different values at a leaf show, within what they
saw, that the leaf did not steer the agent there. So a live observation is covered by a set of runs
(those that went on the same way) when, leaf by leaf:

* an identity in every run that has it is an identity now too, equal to what it was equal to then
  (its label: the param or earlier leaf it repeats, or none);
* a number, date or timestamp lies within the closed range the runs saw (one run: its value);
* a text, a category word, a bool, a list length is one the runs saw; an identifier, a timestamp or
  a name under a key that says so (``name``, ``email``) that the runs saw take two or more values is
  free;
* no path is new, and none that every run had is gone;

and every relation that held in every run still holds: the order of any two numbers or dates,
whether any two texts are equal, and how a constant of the next call was computed from them. A set
of one run covers only what that run saw, up to identities.
"""

from __future__ import annotations

from collections.abc import Sequence

from muscle_mem.model._evidence_computed import Constant
from muscle_mem.model._evidence_leaves import leaves_uncovered, numbers_uncovered, taken_elsewhere
from muscle_mem.model._evidence_places import History, Live
from muscle_mem.model._evidence_relations import relations_broken
from muscle_mem.model._evidence_wholes import seen_together, with_item_places


def uncovered(
    live: Live,
    histories: Sequence[History],
    names: Sequence[str],
    constants: Sequence[Constant] = (),
    elsewhere: Sequence[History] = (),
) -> str | None:
    """Why the runs' ``histories`` do not cover the ``live`` observations, or None if they do.

    ``names``: what to call each observation in a message (``param``, ``step 0 lookup``);
    ``constants``: the numbers and dates the call the runs made next (or their answer) holds;
    ``elsewhere``: what the runs that went on otherwise from here saw.
    """
    if not histories:
        return "no recorded run went on from here"
    if elsewhere:
        why = taken_elsewhere(live, histories, elsewhere, names)
        if why is not None:
            return why
    saw = [[o.leaves if o is not None else () for o in h] for h in histories]
    named_live, named_saw = with_item_places(live, saw, from_end=False)  # the eu host's load, wherever it is
    for at, leaves in enumerate(live):
        seen = [h[at] if at < len(h) else None for h in histories]
        if all(o is None for o in seen) and not leaves:
            continue
        if any(o is None for o in seen):
            return f"{names[at]}: the recorded runs did not keep what they saw here"
        why = leaves_uncovered(named_live[at], [run[at] for run in named_saw], names[at])
        if why is not None:
            return why
    alike, why = seen_together(live, histories, names)
    if why is not None:
        return why
    if len(alike) < len(histories):
        why = numbers_uncovered(live, alike, names)
        if why is not None:
            return why
    runs_saw = [[o.leaves if o is not None else () for o in h] for h in alike]
    return relations_broken(*with_item_places(live, runs_saw), names, constants)
