"""``muscle-mem mcp-proxy``: its usage, and clear errors when the upstream server is missing or broken."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cli_support import run_cli
from muscle_mem import Engine

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


def test_mcp_proxy_checks_must_name_a_mapping_of_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "proxy_checks.py").write_text(
        "from muscle_mem import Check\n"
        "GOOD = {'send_welcome': Check.equal(lambda user_id: 'up')}\n"
        "NOT_A_MAP = [1]\n"
        "BAD_VALUE = {'send_welcome': 'up'}\n"
        "TYPO = {'send_welcom': Check.equal(lambda user_id: 'up')}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    upstream = ["--", sys.executable, "-c", "pass"]
    cases = {
        "proxy_checks": "--checks takes MODULE:ATTR",
        "no_such_module:CHECKS": "cannot import 'no_such_module'",
        "proxy_checks:MISSING": "must be a mapping of tool names to checks, found nothing",
        "proxy_checks:NOT_A_MAP": "found list",
        "proxy_checks:BAD_VALUE": "['send_welcome'] must be a Check or a (pre_check, post_check) pair",
    }
    for spec, said in cases.items():
        ran = run_cli(capsys, "mcp-proxy", "--store", "memory://", "--checks", spec, *upstream)
        assert ran.status == 2 and said in ran.err and ran.out == "", (spec, ran.err)
    good = run_cli(capsys, "mcp-proxy", "--store", "memory://", "--checks", "proxy_checks:GOOD", *upstream)
    assert good.status == 1 and "cannot use the upstream MCP server" in good.err  # the checks loaded
    desk = Path(__file__).resolve().parents[1] / "integrations" / "mcp_upstream_server.py"
    typo = run_cli(
        capsys, "mcp-proxy", "--store", "memory://", "--checks", "proxy_checks:TYPO", "--", sys.executable,
        str(desk), str(tmp_path / "log"),
    )  # fmt: skip
    assert typo.status == 1 and "checks name tools" in typo.err and "'send_welcom'" in typo.err


def test_mcp_proxy_serves_through_an_engine_in_the_mode_asked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from muscle_mem.integrations import mcp_proxy

    served: list[tuple[str, int]] = []

    async def serve(engine: Engine, command: list[str], **_: object) -> None:
        served.append((engine.mode, engine.proof))

    monkeypatch.setattr(mcp_proxy, "serve_stdio", serve)
    upstream = ["--", sys.executable, "-c", "pass"]
    assert (
        run_cli(
            capsys, "mcp-proxy", "--store", "memory://", "--mode", "proven", "--proof", "5", *upstream
        ).status
        == 0
    )
    assert run_cli(capsys, "mcp-proxy", "--store", "memory://", "--mode", "shadow", *upstream).status == 0
    assert served == [("proven", 5), ("shadow", 3)]
    for bad in (["--mode", "fast"], ["--proof", "0"]):
        ran = run_cli(capsys, "mcp-proxy", "--store", "memory://", *bad, *upstream)
        assert ran.status == 2 and ran.out == "", bad
