"""The original muscle-mem README's example and the examples run unchanged."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = os.environ.get("MUSCLE_MEM_SEEDS", str(ROOT.parent / "shared" / "seeds"))

# The original muscle-mem README's example, verbatim, comments included.
ORIGINAL_EXAMPLE = r"""from dataclasses import dataclass
from muscle_mem import Check, Engine
import time

engine = Engine()

@dataclass
class T:
    name: str
    time: float

def capture(name: str) -> T:
    now = time.time()
    return T(name=name, time=now)

def compare(current: T, candidate: T) -> bool:
    diff = current.time - candidate.time
    return diff <= 1  # 缓存有效期为1秒

@engine.tool(pre_check=Check(capture, compare))
def hello(name: str):
    time.sleep(0.1)
    print(f"hello {name}")

def agent(name: str):
    for i in range(9):
        hello(name + " + " + str(i))

engine.set_agent(agent)

# 首次运行：缓存未命中
cache_hit = engine("erik")
assert not cache_hit

# 再次运行：缓存命中
cache_hit = engine("erik")
assert cache_hit

# 等待3秒后运行：缓存过期，未命中
time.sleep(3)
cache_hit = engine("erik")
assert not cache_hit
"""


VIRTUAL_CLOCK = """
import time as _time

_now = [_time.time()]


def _sleep(seconds):
    _now[0] += seconds


_time.sleep = _sleep
_time.time = lambda: _now[0]
"""
"""A ``sitecustomize`` that makes ``time.time()`` move only when the program sleeps. The original
README's example allows 1 s between recording and replay and takes 0.9 s to record: 100 ms of slack that a
loaded CI machine can use up. With this clock its verdicts depend on its code alone, which runs
unchanged."""


def run_python(
    args: list[str], cwd: Path, *, virtual_clock: bool = False
) -> subprocess.CompletedProcess[str]:
    path = str(ROOT / "src")
    if virtual_clock:
        clock = cwd / "virtual_clock"
        clock.mkdir(exist_ok=True)
        (clock / "sitecustomize.py").write_text(VIRTUAL_CLOCK, encoding="utf-8")
        path = os.pathsep.join((str(clock), path))
    env = {**os.environ, "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8"}
    env.pop("MUSCLE_MEM_STORE", None)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_original_example_is_copied_verbatim() -> None:
    seeds = glob.glob(os.path.join(SEEDS, "000_*.txt"))
    if not seeds:
        pytest.skip(f"the original muscle-mem README's example is not at {SEEDS} (set MUSCLE_MEM_SEEDS)")
    original = Path(seeds[0]).read_text(encoding="utf-8")
    start = original.index("from dataclasses import dataclass")
    end = original.rindex("assert not cache_hit") + len("assert not cache_hit")
    assert original[start:end] + "\n" == ORIGINAL_EXAMPLE


def test_the_original_example_runs_unchanged(tmp_path: Path) -> None:
    script = tmp_path / "original_example.py"
    script.write_text(ORIGINAL_EXAMPLE, encoding="utf-8")
    done = run_python([str(script)], tmp_path, virtual_clock=True)
    assert done.returncode == 0, done.stderr
    greetings = done.stdout.splitlines()
    # the agent greets 9 times on the first run, the replay 9 times, and the agent again after 3 s
    assert greetings == [f"hello erik + {i}" for i in range(9)] * 3
    assert done.stderr == ""


def test_greeter_example_runs(tmp_path: Path) -> None:
    done = run_python([str(ROOT / "examples" / "greeter.py")], tmp_path, virtual_clock=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    erik = [f"hello erik + {i}" for i in range(9)]
    john = [f"hello john + {i}" for i in range(9)]
    # erik (agent), erik (replay), john (agent: never erik's trajectory), erik after 3 s (agent)
    assert lines[:36] == erik + erik + john + erik
    assert lines[36].startswith("after 3 s: pre-check of tool 'hello' failed")


def test_multistep_example_runs(tmp_path: Path) -> None:
    done = run_python([str(ROOT / "examples" / "multistep.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ada@example.com: hit=False invoice=1001 replayed=0"
    assert lines[2] == "bob@example.com: hit=True invoice=1002 replayed=3"
    assert lines[3] == "eve@example.com: hit=False invoice=None replayed=1"
    assert lines[4] == "  why: step 0 Billing.find_customer output['status']: 'suspended', recorded 'active'"


def test_mcp_example_runs_offline(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    done = run_python([str(ROOT / "examples" / "mcp_agent.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "CachedSession, onboard Ada: hit=False replayed=0 model calls=3 -> welcome sent to usr_1001",
        "CachedSession, onboard Bob: hit=True replayed=2 model calls=0 -> welcome sent to usr_1002",
        "proxy, onboard Ada: no recording; proceed, and call muscle_mem_end(answer) when the task is done",
        "proxy, end: stored: the next task like this one is done by replay",
        "proxy, onboard Bob: done by replay: welcome sent to usr_1004 (2 steps)",
    ]


def spent_and_saved_match_the_frameworks_usage(lines: list[str]) -> None:
    """Each call's tokens, as the engine counted them, are the framework's own figure printed under it;
    a hit saves what the first run spent; the ledger's last line adds them up."""
    calls = [(i, line) for i, line in enumerate(lines) if re.search(r": (hit|miss|partial replay): ", line)]
    spent = saved = 0
    first = None
    for i, line in calls:
        engine = int(re.findall(r"([\d,]+) tokens (?:spent|saved)", line)[0].replace(",", ""))
        framework = int(re.findall(r"([\d,]+) tokens\)?$", lines[i + 1])[0].replace(",", ""))
        if ": hit: " in line:
            assert framework == 0 and engine == first, line
            saved += engine
        else:
            assert engine == framework, line
            first = engine if first is None else first
            spent += engine
    assert lines[-1] == f"ledger: {spent:,} tokens spent, {saved:,} saved"


def test_langchain_agent_example_runs(tmp_path: Path) -> None:
    """The LangChain example records ada's request, replays bob's, and hands cy's over after two calls."""
    pytest.importorskip("langchain")
    done = run_python([str(ROOT / "examples" / "langchain_agent.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "ada@example.com: miss: 0 steps replayed, 4 model calls, 2,035 tokens spent",
        "  answer 'Ticket T1 for usr_ada is assigned.'; usage_metadata: 2,035 tokens",
        "bob@example.com: hit: 3 steps replayed, 0 model calls, 2,035 tokens saved",
        "  answer 'Ticket T2 for usr_bob is assigned.'; usage_metadata: 0 tokens",
        "cy@example.com: partial replay: 2 steps replayed, 2 model calls, 1,377 tokens spent",
        "  answer 'The queue is closed: ticket T3 for usr_cy is escalated.'; usage_metadata: 1,377 tokens",
        "ledger: 3,412 tokens spent, 2,035 saved",
    ]
    spent_and_saved_match_the_frameworks_usage(lines)


def test_the_readme_quick_start_runs_as_written() -> None:
    """The first Python block of the README's quick start runs unchanged."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})


def test_the_readme_plain_text_example_prints_what_its_comments_say(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The quick start's second block (no params declared) runs and prints the hit its comments promise."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n")[2].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["True refund order {1} {'1': 1017} [1000, 1040, 1017]", "False"]


def test_smolagents_example_runs_offline(tmp_path: Path) -> None:
    pytest.importorskip("smolagents")
    done = run_python([str(ROOT / "examples" / "smolagents_agent.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "ada@example.com: miss: 0 steps replayed, 4 model calls, 2,018 tokens spent -> reset sent to usr_ada (T-100)",
        "  (the run's token_usage: 2,018 tokens)",
        "bob@example.com: hit: 3 steps replayed, 0 model calls, 2,018 tokens saved -> reset sent to usr_bob (T-101)",
        "  (the run's token_usage: 0 tokens)",
        "ledger: 2,018 tokens spent, 2,018 saved",
    ]
    spent_and_saved_match_the_frameworks_usage(lines)


def test_playwright_example_runs_offline(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    if shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    done = run_python([str(ROOT / "examples" / "playwright_checks.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if not line.startswith("  (the agent")]
    assert lines[:3] == [
        "Ada: hit=False replayed=0 -> sent Ada",
        "Bob: hit=True replayed=2 -> sent Bob",
        "Cy: hit=False replayed=1 -> sent Cy",
    ]
    assert "pre-check of tool 'click' failed" in lines[3]


def test_openai_agents_example_misses_then_replays_without_the_model(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    done = run_python([str(ROOT / "examples" / "openai_agents_agent.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ada@example.com: miss: 0 steps replayed, 4 model calls, 1,917 tokens spent"
    assert lines[1] == "  Reset link sent to ada@example.com (ticket T-1). (the run's Usage: 1,917 tokens)"
    assert lines[5] == "bob@example.com: hit: 3 steps replayed, 0 model calls, 1,917 tokens saved"
    assert lines[6] == "  Reset link sent to bob@example.com (ticket T-2). (the run's Usage: 0 tokens)"
    assert all(line.startswith("  mm_") for line in lines[7:10])
    spent_and_saved_match_the_frameworks_usage(lines)


def test_pydantic_ai_example_runs(tmp_path: Path) -> None:
    """The pydantic-ai example misses, replays without the model, then resumes after a failed check."""
    pytest.importorskip("pydantic_ai")
    done = run_python([str(ROOT / "examples" / "pydantic_ai_agent.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ada@example.com: miss: 0 steps replayed, 4 model calls, 300 tokens spent"
    assert lines[3] == "bob@example.com: hit: 3 steps replayed, 0 model calls, 300 tokens saved"
    assert (
        lines[4] == "  Done: password of usr_42 reset under T-1002 (via smtp). (the run's RunUsage: 0 tokens)"
    )
    assert lines[5] == "eve@example.com: partial replay: 2 steps replayed, 2 model calls, 170 tokens spent"
    assert "pre-check of tool 'reset_password' failed" in lines[7]
    spent_and_saved_match_the_frameworks_usage(lines)
