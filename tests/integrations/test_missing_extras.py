"""Each integration without its framework: one ImportError naming the extra to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("muscle_mem.integrations.langchain", "langchain_core", "langchain"),
    ("muscle_mem.integrations.openai_agents", "agents", "openai-agents"),
    ("muscle_mem.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("muscle_mem.integrations.mcp", "mcp", "mcp"),
    ("muscle_mem.integrations.mcp_proxy", "mcp", "mcp"),
    ("muscle_mem.integrations.smolagents", "smolagents", "smolagents"),
    ("muscle_mem.integrations.playwright", "playwright", "playwright"),
    ("muscle_mem.telemetry", "opentelemetry", "otel"),
]


@pytest.mark.parametrize(("module", "framework", "extra"), CASES)
def test_an_integration_without_its_framework_says_which_extra_to_install(
    module: str, framework: str, extra: str
) -> None:
    hide = f"import sys; sys.modules[{framework!r}] = None\n"  # an import of it now raises ImportError
    said = python(hide + f"try:\n    import {module}\nexcept ImportError as exc:\n    print(exc)\n")
    assert f"pip install 'muscle-mem[{extra}]'" in said


def test_the_integrations_package_imports_no_framework() -> None:
    frameworks = sorted({framework for _, framework, _ in CASES})
    probe = f"import sys, muscle_mem.integrations\nprint([m for m in {frameworks!r} if m in sys.modules])"
    assert python(probe).strip() == "[]"


def test_an_engine_and_its_calls_import_no_opentelemetry_unless_telemetry_is_asked_for() -> None:
    """OpenTelemetry is opt-in: an engine without ``telemetry=True`` never imports it."""
    probe = (
        "import sys\nfrom muscle_mem import Engine\nengine = Engine()\n"
        "engine.set_agent(lambda task: 'done')\nengine('a task')\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    assert python(probe).strip() == "[]"


def test_telemetry_without_the_otel_extra_says_which_extra_to_install() -> None:
    """``Engine(telemetry=True)`` without OpenTelemetry raises an ImportError naming the extra."""
    hide = "import sys; sys.modules['opentelemetry'] = None\n"
    said = python(
        hide
        + "from muscle_mem import Engine\ntry:\n    Engine(telemetry=True)\nexcept ImportError as exc:\n    print(exc)\n"
    )
    assert "pip install 'muscle-mem[otel]'" in said


def python(code: str) -> str:
    """What ``code`` prints, run by a fresh interpreter that sees only this checkout's sources."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
