"""A pytest plugin: the skipped tests summed up as one line per reason, not one line per test."""

from __future__ import annotations

from collections import Counter

import pytest


def skip_reason(report: pytest.TestReport) -> str:
    """Why a test was skipped, as ``pytest.skip`` was told (without pytest's ``Skipped:`` prefix)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print ``SKIPPED <count>: <reason>`` once for each reason, most frequent first."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if isinstance(r, pytest.TestReport)]
    if not skipped:
        return
    terminalreporter.section("skipped tests, by reason", sep="-")
    for reason, count in Counter(skip_reason(r) for r in skipped).most_common():
        terminalreporter.write_line(f"SKIPPED {count}: {reason}")
