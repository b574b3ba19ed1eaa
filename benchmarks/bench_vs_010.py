"""Side by side with muscle-mem 0.1.0: hit and miss latency at 1 to 10,000 stored trajectories,
recording overhead per tool call, and correctness on the behaviours 0.1.0's README documents.

Both projects import as ``muscle_mem``, so 0.1.0 is installed from the package index into its own
virtual environment (``benchmarks/.venv-010``, made once), and ``vs010_workload.py`` runs under that
environment's Python and under this project's, taking turns size by size in the same run. The table,
its ratios (0.1.0's time over ours), ``docs/vs_010.png`` and ``docs/vs_010.md`` come from those runs.

Run: python benchmarks/bench_vs_010.py [--quick] [--sizes 1 10 100 1000 10000] [--no-docs]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKLOAD = HERE / "_lib" / "vs010_workload.py"
VENV = HERE / ".venv-010"
DOCS = ROOT / "docs"
REFERENCE = "muscle-mem==0.1.0"
RUN_COMMAND = "python benchmarks/bench_vs_010.py"


# the two interpreters


def venv_python(path: Path) -> Path:
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def clean_environment() -> dict[str, str]:
    """This process's environment without what would put our sources or store on a child's path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MUSCLE_MEM_STORE")}


def has_reference(python: Path) -> bool:
    probe = "import importlib.metadata as m, colorama, muscle_mem; assert m.version('muscle-mem') == '0.1.0'"
    if not python.exists():
        return False
    return (
        subprocess.run([str(python), "-c", probe], capture_output=True, env=clean_environment()).returncode
        == 0
    )


def reference_python(path: Path = VENV) -> Path:
    """The Python of a virtual environment holding muscle-mem 0.1.0 (and colorama), made on first use."""
    python = venv_python(path)
    if has_reference(python):
        return python
    print(
        f"creating {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} with {REFERENCE} ...",
        flush=True,
    )
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", REFERENCE, "colorama"],
        check=True,
        env=clean_environment(),
    )
    if not has_reference(python):
        raise SystemExit(f"{path}: {REFERENCE} did not install")
    return python


def run_workload(python: Path, args: Sequence[str]) -> dict[str, Any]:
    """Run the workload in ``python``; its JSON result. The environment keeps our sources off its path."""
    done = subprocess.run(
        [str(python), str(WORKLOAD), *args], capture_output=True, text=True, env=clean_environment(), cwd=HERE
    )
    if done.returncode != 0:
        raise SystemExit(f"the workload failed under {python}:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# rendering


def _us(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 1_000:
        return f"{value / 1000:,.1f} ms" if value >= 10_000 else f"{value / 1000:.2f} ms"
    return f"{value:,.0f} µs" if value >= 100 else f"{value:.1f} µs"


def _ratio(reference: float | None, ours: float | None) -> str:
    """0.1.0's time over ours: above 1, ours is faster."""
    if reference is None or ours is None or ours <= 0:
        return "n/a"
    ratio = reference / ours
    return f"{ratio:,.1f}×" if ratio >= 1 else f"{ratio:#.2g}×"


def _rows(result: dict[str, Any], variant: str) -> dict[int, dict[str, Any]]:
    return {row["size"]: row for row in result["hits"] if row["variant"] == variant}


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    rule = "| --- |" + "".join(" ---: |" for _ in header[1:])
    lines = ["| " + " | ".join(header) + " |", rule]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def hit_table(old: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Hit latency (matching trajectory recorded last) and miss latency, per number stored."""
    ref, plain, equal = _rows(old, "plain"), _rows(ours, "plain"), _rows(ours, "equal")
    rows = []
    for size in sorted(ref):
        r, p, e = ref[size], plain[size], equal[size]
        rows.append(
            [
                f"{size:,}",
                _us(r["hit_us"]),
                _us(p["hit_us"]),
                _ratio(r["hit_us"], p["hit_us"]),
                _us(e["hit_us"]),
                _ratio(r["hit_us"], e["hit_us"]),
                _us(r["miss_us"]),
                _us(p["miss_us"]),
                _ratio(r["miss_us"], p["miss_us"]),
                _us(e["miss_us"]),
                _ratio(r["miss_us"], e["miss_us"]),
            ]
        )
    header = [
        "stored",
        "0.1.0 hit",
        "ours hit",
        "0.1.0/ours",
        "ours hit, `Check.equal`",
        "0.1.0/ours",
        "0.1.0 miss",
        "ours miss",
        "0.1.0/ours",
        "ours miss, `Check.equal`",
        "0.1.0/ours",
    ]
    return _table(header, rows)


def oldest_table(old: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """First hit on a trajectory recorded early and not used since."""
    ref, plain, equal = _rows(old, "plain"), _rows(ours, "plain"), _rows(ours, "equal")
    rows = [
        [
            f"{size:,}",
            _us(ref[size]["oldest_hit_us"]),
            _us(plain[size]["oldest_hit_us"]),
            _ratio(ref[size]["oldest_hit_us"], plain[size]["oldest_hit_us"]),
            _us(equal[size]["oldest_hit_us"]),
            _ratio(ref[size]["oldest_hit_us"], equal[size]["oldest_hit_us"]),
        ]
        for size in sorted(ref)
        if ref[size]["oldest_hit_us"] is not None
    ]
    header = ["stored", "0.1.0", "ours", "0.1.0/ours", "ours, `Check.equal`", "0.1.0/ours"]
    return _table(header, rows)


def record_table(old: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    labels = {
        "no_check_us": "tool call, no check (in the call)",
        "pre_check_us": "tool call with a pre-check (in the call)",
        "end_to_end_us": "end to end: 20-call tasks, storing included",
    }
    rows = [
        [
            label,
            _us(old["record"][key]),
            _us(ours["record"][key]),
            _ratio(old["record"][key], ours["record"][key]),
        ]
        for key, label in labels.items()
    ]
    return _table(["recording overhead per tool call", "0.1.0", "ours", "0.1.0/ours"], rows)


def check_table(old: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    def mark(entry: dict[str, Any] | None) -> str:
        return "—" if entry is None else ("pass" if entry["passed"] else "**fail**")

    rows = []
    for name in dict.fromkeys([*old["checks"], *ours["checks"]]):
        a, b = old["checks"].get(name), ours["checks"].get(name)
        notes = [f"{who}: {e['detail']}" for who, e in (("0.1.0", a), ("ours", b)) if e and not e["passed"]]
        rows.append([name, mark(a), mark(b), "; ".join(notes).replace("|", "/")])
    header = ["behaviour (0.1.0 README)", "0.1.0", "ours", "what went otherwise"]
    return ["| " + " | ".join(header) + " |", "| --- | :---: | :---: | --- |"] + [
        "| " + " | ".join(row) + " |" for row in rows
    ]


def summary_lines(old: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    ref, plain, equal = _rows(old, "plain"), _rows(ours, "plain"), _rows(ours, "equal")
    sizes = sorted(ref)
    small, large = sizes[0], sizes[-1]
    passed_old = sum(c["passed"] for c in old["checks"].values())
    passed_ours = sum(c["passed"] for c in ours["checks"].values())
    return [
        f"hit latency, {small:,} → {large:,} stored: 0.1.0 {_us(ref[small]['hit_us'])} → {_us(ref[large]['hit_us'])} "
        f"({ref[large]['hit_us'] / ref[small]['hit_us']:,.1f}×); ours {_us(plain[small]['hit_us'])} → "
        f"{_us(plain[large]['hit_us'])} ({plain[large]['hit_us'] / plain[small]['hit_us']:,.1f}×), "
        f"with Check.equal {_us(equal[small]['hit_us'])} → {_us(equal[large]['hit_us'])} "
        f"({equal[large]['hit_us'] / equal[small]['hit_us']:,.1f}×)",
        f"at {large:,} stored ours hits {_ratio(ref[large]['hit_us'], plain[large]['hit_us'])} faster "
        f"({_ratio(ref[large]['hit_us'], equal[large]['hit_us'])} with Check.equal)",
        f"miss (lookup + agent + recording) at {small:,} stored: 0.1.0 {_us(ref[small]['miss_us'])}, ours "
        f"{_us(plain[small]['miss_us'])} ({_ratio(ref[small]['miss_us'], plain[small]['miss_us'])}); at {large:,}:"
        f" 0.1.0 {_us(ref[large]['miss_us'])}, ours {_us(plain[large]['miss_us'])} "
        f"({_ratio(ref[large]['miss_us'], plain[large]['miss_us'])}), with Check.equal "
        f"{_us(equal[large]['miss_us'])} ({_ratio(ref[large]['miss_us'], equal[large]['miss_us'])})",
        f"correctness: 0.1.0 passes {passed_old}/{len(old['checks'])}, ours {passed_ours}/{len(ours['checks'])}",
    ]


def capped_note(old: dict[str, Any], ours: dict[str, Any]) -> str:
    capped = [
        f"{result['flavor']} {row['variant']} at {row['size']:,}: {row['hit_repeats']} hits in all"
        for result in (old, ours)
        for row in result["hits"]
        if row["hit_repeats_capped"]
    ]
    return "; ".join(capped) or "none"


def plot(old: dict[str, Any], ours: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = [
        ("muscle-mem 0.1.0", _rows(old, "plain"), "#c0392b", "o"),
        ("ours, Check(capture, compare)", _rows(ours, "plain"), "#2471a3", "s"),
        ("ours, Check.equal", _rows(ours, "equal"), "#1e8449", "^"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    panels = [
        ("hit_us", "Full hit, matching trajectory recorded last"),
        ("oldest_hit_us", "First hit on an old, unused trajectory"),
        ("miss_us", "Miss: lookup + agent + recording"),
    ]
    for ax, (key, title) in zip(axes, panels, strict=True):
        for label, rows, color, marker in series:
            sizes = [s for s in sorted(rows) if rows[s][key] is not None]
            ax.plot(sizes, [rows[s][key] / 1000 for s in sizes], marker=marker, color=color, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("trajectories stored for the task")
        ax.set_ylabel("milliseconds (median)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(
        "muscle-mem vs muscle-mem 0.1.0: a 5-step task with cheap pre-checks (same machine, same run)"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(
    old: dict[str, Any], ours: dict[str, Any], seconds: float, load: tuple[float, float] | None = None
) -> str:
    """docs/vs_010.md; ``load``: the 1-minute load average when the run began and ended."""
    settings = ours["settings"]
    rounds = max((row.get("rounds", 1) for row in ours["hits"]), default=1)
    machine = f"{os.cpu_count()} CPUs" + (
        f", load average {load[0]:.1f} at the start and {load[1]:.1f} at the end" if load else ""
    )
    lines = [
        "# Side by side with muscle-mem 0.1.0",
        "",
        f"Generated by `{RUN_COMMAND}` in {seconds:.0f} s (Python {ours['python']}; "
        f"0.1.0 from the package index in `benchmarks/.venv-010`, ours {ours['version']} from this tree). "
        f"Medians; ratios are 0.1.0's time over ours (above 1: ours is faster), both measured in the same run"
        f" on the same machine ({machine}).",
        "",
        "![hit and miss latency against the number of stored trajectories](vs_010.png)",
        "",
        "## Summary",
        "",
        *[f"- {line}" for line in summary_lines(old, ours)],
        "",
        "## Hit and miss latency",
        "",
        "A 5-step task whose tools have cheap pre-checks (the capture reads one value of the environment).",
        "N trajectories are stored under the task, each recorded in a different environment state; the one",
        "that matches the environment is recorded last. *Hit*: a full replay of the 5 steps. *Miss*: a new",
        "environment state, so the lookup fails, the agent runs the 5 tools and the run is recorded.",
        "0.1.0 has no equality-by-key Check, so both engines use `Check(capture, compare)` with",
        "`compare = current == candidate`; ours is also measured with `Check.equal(capture)`, whose stored",
        "snapshots are found by hash.",
        "",
        *hit_table(old, ours),
        "",
        "First hit on an early trajectory not used since (the median over the oldest states, one hit each):",
        "",
        *oldest_table(old, ours),
        "",
        "## Recording overhead",
        "",
        f"*In the call*: {settings['record_calls']:,} calls of a tool inside one run, in batches interleaved",
        "with the same body called bare (with a pre-check, the bare loop calls the capture too). Ours defers",
        "param and data-flow detection and serialization to the end of the run, so the last row matters too:",
        "*end to end*, 200 tasks of 20 tool calls each (half with a pre-check), each a miss on a new task,",
        "against the same calls made bare; the difference, building and storing the trajectory included, per",
        "call.",
        "",
        *record_table(old, ours),
        "",
        "## Correctness on the behaviours 0.1.0's README documents",
        "",
        *check_table(old, ours),
        "",
        "*0.1.0 examples/greeter.py* is the example shipped in 0.1.0's repository, run step by step with its",
        "own assertions. 0.1.0 goes wrong at step 2: asked to greet erik within a second of greeting john,",
        "it replays john's greetings (it matches on tags and checks only). Ours tells the tasks apart and",
        "goes as the example expects. At step 4, the third erik, the first erik run is 1.8 s old against a",
        "1 s window; the example expects a hit because the hit of step 3 renewed the window (0.1.0 stores a",
        "copy of the run on every hit). Ours stores nothing on a hit, but a full hit keeps its snapshots in",
        "the process next to the recorded ones (`Check(renew=True)`, the default), so step 4 hits on them.",
        "*another task is not replayed* is the same question without a clock.",
        "",
        "## How to run",
        "",
        "```bash",
        ".venv/bin/pip install -e '.[bench]'        # matplotlib, for docs/vs_010.png",
        f".venv/bin/{RUN_COMMAND}   # ~3 min; --quick: sizes to 1,000, no docs",
        "```",
        "",
        "The first run creates `benchmarks/.venv-010` and installs `muscle-mem==0.1.0` (and `colorama`)",
        "from the package index. Both engines run `benchmarks/_lib/vs010_workload.py`, which prints JSON.",
        "",
        "## Notes",
        "",
        "- **Same run.** Each engine runs in its own process (both import as `muscle_mem`); they take",
        "  turns size by size, alternating which goes first, so that a change of load on the machine falls",
        "  on both alike.",
        "- **Printing.** 0.1.0 prints colour codes on every engine call; in both runs everything printed goes",
        "  to an in-memory buffer (`contextlib.redirect_stdout` to `io.StringIO`), so that terminal output does",
        "  not distort the timings.",
        "- **0.1.0 stores a copy of the trajectory on every hit** (`Engine._record` always adds the run). The",
        "  benchmark drops that copy after each timed hit, outside the timing, so that N stay stored. Kept,",
        "  the copies are compared too (up to its page of 20): with 1 trajectory recorded, after 100 hits,",
        f"  a hit takes {_us(old['hit_keeping_copies_us'])} in 0.1.0 (ours stores nothing on a hit: "
        f"{_us(ours['hit_keeping_copies_us'])}).",
        f"- **Fill.** Up to {ours['full_fill_limit']:,} stored, every trajectory is recorded by a real miss. A miss with a plain",
        "  compare costs O(stored) in both engines, so above that the trajectories before the timed ones are",
        "  stored by a state-equivalent fast fill: 0.1.0 records each with its bucket's list set aside and",
        "  joins the lists in order; ours records through a twin engine with `Check.equal` on the same store",
        "  (the snapshot stored does not depend on the Check's kind). The timed misses are always real.",
        f"- **Repetitions.** At most {settings['repeat']} timed hits per size and round, at least 5, within"
        f" {settings['budget']:g} s per size and round; capped by the time budget: {capped_note(old, ours)}.",
        f"  Timings are taken in {rounds} rounds; each figure is the lower of the rounds' medians (the machine",
        "  is shared, and load only adds time). Even so, on a shared machine, runs differ by up to ~1.5× at",
        "  1 to 10 stored, where both engines take about 0.1 ms; the growth with N is well above that.",
        f"  Misses: {settings['miss_samples']} per size: the last ones of the fill, or below"
        f" {10 * settings['miss_samples']} stored each from a fill of its own.",
        "- **Order.** Ours tries the most recently successful step first and a hit promotes its trajectory,",
        "  so repeated hits on the same state find it first whatever the recording order; 0.1.0 scans from",
        "  the oldest. The table with the oldest trajectories shows the other side: there 0.1.0 finds the",
        "  match on its first page, while ours, with a plain compare, compares the newer snapshots first.",
        "- **Where ours is slower.** A miss with few trajectories stored: when a run ends, ours builds the",
        "  trajectory (params, data flow), fingerprints each step and serializes it for the store, where 0.1.0",
        "  appends Python objects to a list (see the end-to-end recording row). And, with a plain compare, the",
        "  first hit on an old trajectory, whose snapshot is compared after the newer ones (`Check.equal` has",
        "  no such cost).",
        "- **Greeter checks** run with the README's own timings (a 1 s window, 0.1 s per greeting).",
        "",
    ]
    return "\n".join(lines)


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _lower(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _combine(row: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """One size measured in two rounds: the lower median of each figure (load only adds time)."""
    out = dict(row)
    for key, value in other.items():
        if key.endswith("_us"):
            out[key] = _lower(row[key], value)
        elif key in ("hit_repeats", "miss_samples", "oldest_samples"):
            out[key] = row[key] + value
        elif key == "hit_repeats_capped":
            out[key] = row[key] or value
        elif key == "fill_seconds":
            out[key] = max(row[key], value)
    out["rounds"] = row.get("rounds", 1) + other.get("rounds", 1)
    return out


def merge(into: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    """Add one partial workload result (some sizes, the recording overhead or the checks) to ``into``;
    a size or figure measured again keeps the lower of the two medians."""
    rows = {(r["variant"], r["size"]): r for r in into.get("hits", [])}
    for row in part["hits"]:
        key = (row["variant"], row["size"])
        rows[key] = _combine(rows[key], row) if key in rows else row
    record = into.get("record")
    copies = into.get("hit_keeping_copies_us")
    into.update(part)
    into["hits"] = list(rows.values())
    if record is not None and "record" in part:
        into["record"] = {k: _lower(record[k], v) for k, v in part["record"].items()}
    if copies is not None and "hit_keeping_copies_us" in part:
        into["hit_keeping_copies_us"] = _lower(copies, part["hit_keeping_copies_us"])
    return into


def run_interleaved(
    pythons: dict[str, Path], args: argparse.Namespace
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both engines, one size (or part) at a time, taking turns at going first, so that a change of
    load on the machine during the run falls on both alike; timings in ``args.rounds`` rounds."""
    common = ["--repeat", str(args.repeat), "--budget", str(args.budget)]
    timings = [("hits", ["--sizes", str(size)]) for size in args.sizes] + [("record", [])]
    parts = [(r, part, extra) for r in range(args.rounds) for part, extra in timings] + [(0, "checks", [])]
    results: dict[str, dict[str, Any]] = {name: {} for name in pythons}
    for turn, (round_no, part, extra) in enumerate(parts):
        label = f"{int(extra[1]):,} stored" if extra else part
        print(f"  round {round_no + 1}, {label} ..." if part != "checks" else "  checks ...", flush=True)
        names = list(pythons) if turn % 2 == 0 else list(reversed(pythons))
        for name in names:
            merge(results[name], run_workload(pythons[name], [*common, "--parts", part, *extra]))
    return results["0.1.0"], results["ours"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100, 1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=300, help="timed hits per size, at most")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timed hits per size")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds; each figure keeps its lowest")
    parser.add_argument("--quick", action="store_true", help="sizes up to 1,000, shorter budgets, no docs")
    parser.add_argument("--no-docs", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--python", default=sys.executable, help="our interpreter (default: this one)")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes = [s for s in args.sizes if s <= 1_000]
        args.budget = min(args.budget, 0.5)
        args.rounds = 1
        args.no_docs = True
    started, load_before = time.perf_counter(), _load()
    pythons = {"0.1.0": reference_python(), "ours": Path(args.python)}
    print(f"muscle-mem 0.1.0: {pythons['0.1.0']}; ours: {pythons['ours']}", flush=True)
    old, ours = run_interleaved(pythons, args)
    if old["flavor"] != "0.1.0" or ours["flavor"] != "ours":
        raise SystemExit(
            f"wrong engines: {old['module']} ({old['flavor']}), {ours['module']} ({ours['flavor']})"
        )
    seconds = time.perf_counter() - started
    print()
    for block in (hit_table, oldest_table, record_table, check_table):
        print("\n".join(block(old, ours)))
        print()
    print("\n".join(summary_lines(old, ours)))
    print(f"total {seconds:.0f} s")
    if not args.no_docs:
        (DOCS / "vs_010.md").write_text(markdown(old, ours, seconds, (load_before, _load())))
        try:
            plot(old, ours, DOCS / "vs_010.png")
        except ImportError:
            print("matplotlib is missing (pip install -e '.[bench]'): docs/vs_010.png not written")
        print(f"wrote {DOCS / 'vs_010.md'} and {DOCS / 'vs_010.png'}")


if __name__ == "__main__":
    main()
