"""``muscle-mem mcp-proxy``: its usage, and clear errors when the upstream server is missing or broken."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli_support import run_cli

pytest.importorskip("mcp")


def test_mcp_proxy_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    ran = run_cli(capsys, "mcp-proxy", "--help")
    assert ran.status == 0 and "--store" in ran.out and "-- COMMAND" in ran.out


def test_mcp_proxy_needs_the_upstream_command_after_a_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["mcp-proxy", "--store", "memory://"], ["mcp-proxy", "--"]):
        ran = run_cli(capsys, *argv)
        assert ran.status == 2 and "name the upstream MCP server after --" in ran.err
        assert ran.out == ""


def test_mcp_proxy_says_when_the_upstream_cannot_start_or_answer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = run_cli(capsys, "mcp-proxy", "--store", "memory://", "--", str(tmp_path / "no-such-server"))
    assert missing.status == 1 and "cannot use the upstream MCP server" in missing.err
    assert "No such file" in missing.err and "Traceback" not in missing.err
    silent = run_cli(capsys, "mcp-proxy", "--store", "memory://", "--", sys.executable, "-c", "pass")
    assert silent.status == 1 and "cannot use the upstream MCP server" in silent.err and silent.out == ""
