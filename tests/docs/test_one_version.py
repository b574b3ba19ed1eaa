"""One version everywhere: the library, the package metadata, the CLI, the CHANGELOG and the README."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from cli_support import run_cli
from muscle_mem import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_reads_its_version_from_the_library() -> None:
    """pyproject.toml writes no version of its own: setuptools reads ``muscle_mem.__version__``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "muscle_mem.__version__"}


def test_the_cli_prints_the_library_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(capsys, "--version").out == f"muscle-mem {__version__}\n"


def test_the_changelog_opens_with_this_version_released_on_a_date() -> None:
    """The CHANGELOG's newest section is this version, dated: it is released, not "unreleased"."""
    first = next(
        line
        for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    )
    assert re.fullmatch(rf"## {re.escape(__version__)} \(\d{{4}}-\d{{2}}-\d{{2}}\)", first), first


def test_the_readme_names_no_version_after_this_one() -> None:
    """Every version the README mentions (``0.3.0``, ``0.1.0``) is this one or an earlier release."""
    current = tuple(int(part) for part in __version__.split("."))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = {tuple(int(p) for p in found.split(".")) for found in re.findall(r"\b(\d+\.\d+\.\d+)\b", readme)}
    versions = {v for v in named if v[0] == 0}  # muscle-mem's own (others, such as AgentDojo v1.2.2, are 1.x)
    assert versions and max(versions) <= current, sorted(versions)
