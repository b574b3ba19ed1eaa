"""``muscle-mem show ID``: one trajectory, step by step, with its arguments and check snapshots."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from muscle_mem.cli import cache, records
from muscle_mem.cli.output import Output
from muscle_mem.trajectory import Arg, Snapshot, Step, Trajectory, Usage

NAME = "show"
HELP = "Show one trajectory: each step's tool, version, arguments (values, params, data flow) and checks."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="a trajectory id, or a unique prefix of one (see `muscle-mem ls`)")
    parser.add_argument("--full", action="store_true", help="print snapshots and values whole, not clipped")
    parser.add_argument("--json", action="store_true", help="the trajectory's record, as `export` writes it")


def run(args: argparse.Namespace) -> int:
    with cache.opened(args) as store:
        trajectory = cache.load(store, args.id)
        usage = store.usage(trajectory.id)
    if args.json:
        record = json.loads(records.line(trajectory, usage))
        json.dump(record, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    out = Output()
    for text in describe(trajectory, usage, width=None if args.full else 100):
        out.line(text)
    return 0


def describe(t: Trajectory, usage: Usage | None, *, width: int | None) -> list[str]:
    """The lines ``show`` prints; values are clipped to ``width`` characters (None: whole)."""

    def value(text: str) -> str:
        return text if width is None else cache.clip(text, width)

    lines = [
        f"trajectory  {t.id}",
        f"task        {t.task}",
        f"task key    {t.task_key}",
        f"tags        {', '.join(t.tags) or '-'}",
        f"recorded    {cache.timestamp(t.created_at)} ({cache.ago(t.created_at)}): {len(t.steps)} steps, "
        f"{cache.seconds(t.agent_seconds)} of agent time, {t.tokens:,} tokens",
    ]
    if usage is not None:
        last = cache.ago(usage.last_used) if usage.hits else "never"
        lines.append(
            f"usage       {usage.hits} hits, last {last}, {cache.seconds(usage.saved_seconds)} of agent time saved"
        )
    lines.append(f"answer      {value(t.result.describe())}  [{arg_kind(t.result)}]")
    for number, step in enumerate(t.steps):
        lines.append("")
        lines.extend(_step(number, step, value))
    return lines


def _step(number: int, step: Step, value: Callable[[str], str]) -> list[str]:
    lines = [
        f"step {number}  {step.tool}  version {step.version}  ({cache.seconds(step.seconds)} when recorded)"
    ]
    named = [(f"arg {i}", a) for i, a in enumerate(step.args)] + [(k, a) for k, a in step.kwargs]
    if not named:
        lines.append("  (no arguments)")
    label_width = max([len(n) for n, _ in named] + [10])
    for name, arg in named:
        lines.append(f"  {name.ljust(label_width)}  {value(arg.describe())}  [{arg_kind(arg)}]")
    lines.append(f"  {'pre-check'.ljust(label_width)}  {_snapshot(step.pre, value)}")
    lines.append(f"  {'post-check'.ljust(label_width)}  {_snapshot(step.post, value)}")
    return lines


def _snapshot(snapshot: Snapshot | None, value: Callable[[str], str]) -> str:
    if snapshot is None:
        return "none"
    return f"{value(repr(snapshot.value))}  (key {snapshot.key[:12]})"


def arg_kind(arg: Arg) -> str:
    """What an argument is: a static value, a param reference or a data-flow reference."""
    if arg.kind == "static":
        return "static value"
    if arg.kind == "param":
        return "param"
    if arg.kind == "template":
        kinds = sorted(_references(arg))
        return f"template of {' and '.join(kinds)}"
    if arg.kind == "output":
        return f"data flow from step {arg.step}"
    kinds = sorted(_references(arg))
    return f"{arg.value[0]} with {' and '.join(kinds)}" if kinds else f"{arg.value[0]} of static values"


def _references(arg: Arg) -> set[str]:
    if arg.kind == "struct":
        return set().union(*(_references(a) for _, a in arg.value[1]))
    if arg.kind == "template":
        return {"params" if kind == "param" else "data flow" for kind, _ in arg.value if kind != "text"}
    return {"param": {"params"}, "output": {"data flow"}}.get(arg.kind, set())
