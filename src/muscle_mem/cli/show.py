"""``muscle-mem show ID``: one trajectory, step by step, with its arguments and check snapshots."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from muscle_mem.cli import _store_access as cache
from muscle_mem.cli import records
from muscle_mem.cli.common import UsageError
from muscle_mem.cli.family import describe_family, family_of
from muscle_mem.cli.output import Output
from muscle_mem.cli.phrases import plural
from muscle_mem.cli.untrusted import figures_of, shown
from muscle_mem.model import provenance as pv
from muscle_mem.model._forms import SAME
from muscle_mem.model._observations import Observation
from muscle_mem.model.provenance import Agree, Arg, Const, Guarded, Param, Struct, Template, nested
from muscle_mem.model.provenance import describe as describe_arg
from muscle_mem.model.trajectory import Snapshot, Step, Trajectory, Usage
from muscle_mem.secrecy.declared import looks_secret

NAME = "show"
FAMILY_WIDTH = 160
"""The longest line of a family's evidence printed whole (without ``--full``)."""
HELP = "Show one trajectory: each step's tool, version, arguments (values, params, data flow) and checks."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="a trajectory id, or a unique prefix of one (see `muscle-mem ls`)")
    parser.add_argument("--full", action="store_true", help="print snapshots and values whole, not clipped")
    parser.add_argument("--json", action="store_true", help="the trajectory's record, as `export` writes it")
    parser.add_argument(
        "--family",
        action="store_true",
        help="what every stored run of its task saw at each step, and how far that lets a replay vary",
    )


def run(args: argparse.Namespace) -> int:
    with cache.opened(args) as store:
        trajectory = cache.load(store, args.id)
        usage = figures_of(store.usage(trajectory.id))
        runs = family_of(store, trajectory) if args.family and not args.json else None
    if args.json:
        secret = looks_secret(trajectory)
        if secret is not None:
            raise UsageError(
                f"trajectory {trajectory.id} holds what looks like {secret}: its record is not printed "
                "(`show` without --json prints it redacted)"
            )
        record = json.loads(records.line(trajectory, usage))
        json.dump(record, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    out = Output()
    for text in describe(trajectory, usage, width=None if args.full else 100):
        out.line(text)
    if runs is not None:
        out.line("")
        for text in describe_family(trajectory, runs):
            out.line(text if args.full or len(text) <= FAMILY_WIDTH else text[: FAMILY_WIDTH - 1] + "…")
    return 0


def describe(t: Trajectory, usage: Usage | None, *, width: int | None) -> list[str]:
    """The lines ``show`` prints; values are clipped to ``width`` characters (None: whole).

    Every stored text is printed escaped and redacted (:func:`untrusted.shown`).
    """

    def value(text: str) -> str:
        return shown(text) if width is None else cache.clip(shown(text), width)

    lines = [
        f"trajectory  {shown(t.id)}",
        f"task        {shown(t.task)}",
        f"task key    {shown(t.task_key)}",
        f"tags        {shown(', '.join(t.tags)) or '-'}",
        f"recorded    {cache.timestamp(t.created_at)} ({cache.ago(t.created_at)}): {plural(len(t.steps), 'step')}, "
        f"{cache.seconds(t.agent_seconds)} of agent time, {plural(t.tokens, 'token')}",
    ]
    if usage is not None:
        last = cache.ago(usage.last_used) if usage.hits else "never"
        lines.append(
            f"usage       {plural(usage.hits, 'hit')}, last {last}, {cache.seconds(usage.saved_seconds)} of agent time saved"
        )
    lines.append(f"answer      {value(describe_arg(t.result))}  [{shown(arg_kind(t.result))}]")
    for number, step in enumerate(t.steps):
        lines.append("")
        lines.extend(_step(number, step, value))
    return lines


def _step(number: int, step: Step, value: Callable[[str], str]) -> list[str]:
    lines = [
        f"step {number}  {shown(step.tool)}  version {shown(step.version)}  "
        f"({cache.seconds(step.seconds)} when recorded)"
    ]
    named = [(f"arg {i}", a) for i, a in enumerate(step.args)] + [(shown(k), a) for k, a in step.kwargs]
    if not named:
        lines.append("  (no arguments)")
    label_width = max([len(n) for n, _ in named] + [10])
    for name, arg in named:
        lines.append(f"  {name.ljust(label_width)}  {value(describe_arg(arg))}  [{shown(arg_kind(arg))}]")
    lines.append(f"  {'pre-check'.ljust(label_width)}  {_snapshot(step.pre, value)}")
    lines.append(f"  {'post-check'.ljust(label_width)}  {_snapshot(step.post, value)}")
    if step.given is not None:
        lines.append(f"  {'params'.ljust(label_width)}  {value(_observation(step.given))}")
    lines.append(f"  {'saw'.ljust(label_width)}  {value(_observation(step.observed))}")
    return lines


def _observation(seen: Observation | None) -> str:
    """What a step's output showed the run: its leaves, identities as ``<name>``, digests as ``#``."""
    if seen is None:
        return "not kept (recorded before 0.3.0: a replay stops after this step)"
    shown_leaves = []
    for path, kind, leaf, _ in seen.leaves:
        if kind == "r":
            continue
        where = shown(path) or "output"
        if kind == "#":
            shown_leaves.append(f"{where}=<name>")
        elif kind in ("i", "p", "x"):
            shown_leaves.append(f"{where}=#")
        elif kind == "l":
            shown_leaves.append(f"{where}=[{leaf} items]")
        elif kind == "e":
            shown_leaves.append(f"{where}={{}}")
        else:
            shown_leaves.append(f"{where}={shown(repr(leaf))}")
    return ", ".join(shown_leaves) or "nothing"


def _snapshot(snapshot: Snapshot | None, value: Callable[[str], str]) -> str:
    if snapshot is None:
        return "none"
    if not snapshot.kept:
        return f"stored as its hash only  (key {shown(snapshot.key[:12])})"
    return f"{value(pv.readable(snapshot.value))}  (key {shown(snapshot.key[:12])})"


def arg_kind(arg: Arg) -> str:
    """Where a value comes from: a constant, a param, data flow, or several origins that must agree."""
    match arg:
        case Const():
            return "static value"
        case Param(_, form):
            return "param" if form == SAME else f"param as {form.describe()}"
        case pv.Output(step, _, _, picks):
            return f"data flow from step {step}" + (" (a chosen element)" if picks else "")
        case Agree(options):
            return "agreement of " + " and ".join(sorted({arg_kind(o) for o in options}))
        case Guarded(value, params, outputs):
            watched = [n for n, _ in params] + [f"step {s}'s output" for s, _, _ in outputs]
            return f"{arg_kind(value)}, while {', '.join(watched)} unchanged"
        case Template():
            return f"template of {' and '.join(sorted(_references(arg)))}"
        case Struct(container, _):
            kinds = sorted(_references(arg))
            return f"{container} with {' and '.join(kinds)}" if kinds else f"{container} of static values"
    raise TypeError(f"not a recorded value: {arg!r}")


def _references(arg: Arg) -> set[str]:
    match arg:
        case Param():
            return {"params"}
        case pv.Output():
            return {"data flow"}
        case Agree() | Guarded():
            return {"agreement"}
    return set().union(*(_references(a) for a in nested(arg)))
