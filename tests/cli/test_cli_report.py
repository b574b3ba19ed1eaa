"""``muscle-mem report``: a self-contained HTML page that opens in headless Chromium without errors.

The Chromium tests use ``/usr/bin/chromium`` (or ``$CHROMIUM``) and skip, saying how to get it
(``apt-get install chromium``), when it is absent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cli_support import NOW, events, make_cache, run_cli
from muscle_mem.cli import analysis, report, svg
from muscle_mem.stores import MemoryStore, SQLiteStore
from muscle_mem.stores.base import Event

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="needs Debian's chromium (apt-get install chromium)",
)


@pytest.fixture
def cache_url(tmp_path: Path) -> str:
    make_cache(tmp_path / "cache.db")
    return f"sqlite:///{tmp_path / 'cache.db'}"


class _Page(HTMLParser):
    """Collects the tags of a page and every attribute that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.loads: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.loads += [f"{tag} {k}={v}" for k, v in attrs if k in ("src", "href", "srcset", "data", "action")]


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def test_report_writes_a_self_contained_page(
    cache_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    ran = run_cli(capsys, "report", "--out", str(out), "--store", cache_url)
    assert ran.status == 0 and ran.out.startswith(f"Wrote {out} (")
    page = out.read_text()
    parsed = parse(page)
    assert parsed.loads == []  # nothing to fetch: no links, images, scripts or frames
    assert "script" not in parsed.tags and "@import" not in page and "url(" not in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert parsed.tags.count("svg") == 5
    for title in (
        "Hit rate over time",
        "Agent time saved",
        "LLM tokens saved",
        "Misses by reason",
        "Misses by tool",
    ):
        assert f"<h2>{title}</h2>" in page
    assert "76.2%" in page and "32 hits of 42 calls" in page  # the cards
    assert "post_check_failed" in page  # misses grouped by the kind of their cause
    assert "Refund ${amount} to {email}: {reason}" in page  # the most used trajectories


def test_report_of_an_empty_store_says_there_is_nothing_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    SQLiteStore(tmp_path / "empty.db").close()
    out = tmp_path / "r.html"
    ran = run_cli(capsys, "report", "--out", str(out), "--store", f"sqlite:///{tmp_path / 'empty.db'}")
    assert ran.status == 0
    page = out.read_text()
    assert "No engine calls are recorded in this store yet" in page
    assert page.count("no data yet") == 5 and "The store holds no trajectories." in page


def test_report_since_and_bad_input(
    cache_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    assert run_cli(capsys, "report", "--out", str(out), "--store", cache_url, "--since", "2h").status == 0
    assert "No engine calls are recorded" in out.read_text()  # the fixture's events are from 2023
    cases = [
        (["--out", str(tmp_path)], f"--out {tmp_path} is a directory"),
        (["--out", str(tmp_path / "missing" / "r.html")], "cannot write"),
        (["--since", "soon"], "not a duration"),
    ]
    for argv, message in cases:
        ran = run_cli(capsys, "report", "--store", cache_url, *argv)
        assert ran.status == 2 and message in ran.err and ran.err.count("\n") == 1, ran.err


def test_untrusted_text_is_escaped() -> None:
    store = MemoryStore()
    store.log_events(
        [
            Event(
                at=NOW,
                task="<script>alert(1)</script>",
                task_key="k",
                hit=False,
                miss_reason="<img src=x onerror=alert(1)>",
                tool="<b>",
            )
        ]
    )
    page = report.render(store, "memory://<i>", now=NOW)
    parsed = parse(page)
    assert (
        "script" not in parsed.tags
        and "img" not in parsed.tags
        and "b" not in parsed.tags
        and "i" not in parsed.tags
    )
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_figures_behind_the_charts() -> None:
    found = events()
    buckets = analysis.buckets(found, 4)
    assert sum(b.calls for b in buckets) == len(found) and sum(b.hits for b in buckets) == 32
    assert all(b.start < b.end for b in buckets)
    rates = analysis.running_hit_rate(found)
    assert rates[0] == (NOW - 7200, 0.0) and rates[-1] == (found[-1].at, pytest.approx(32 / 42))
    long = [Event(at=float(i), task="t", task_key="k", hit=i % 2 == 0) for i in range(1001)]
    thinned = analysis.running_hit_rate(long, points=100)
    assert len(thinned) <= 101 and thinned[-1] == (1000.0, pytest.approx(501 / 1001))
    saved = analysis.cumulative(long, [1.0] * len(long), points=100)
    assert saved[-1] == (1000.0, 1001.0)
    assert analysis.miss_reasons(found) == {"post_check_failed": 8, "no_trajectory": 1, "pre_check_failed": 1}
    legacy = Event(at=0.0, task="t", task_key="k", hit=False, reason="written before reason kinds")
    assert analysis.miss_reasons([legacy]) == {analysis.UNCLASSIFIED: 1}
    assert analysis.not_stored_reasons(found) == {"unstorable_value": 1}
    assert svg.nice_ticks(0, 0.93) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.nice_ticks(0, 1234) == [0, 250, 500, 750, 1000, 1250]


# headless Chromium


def chromium(page: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            *flags,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


CONSOLE = re.compile(r":CONSOLE[(:]")
"""How Chromium logs a page's console messages (errors, CSP violations, uncaught exceptions) on stderr."""


def png_ink(path: Path) -> tuple[int, int, float]:
    """Width, height and the share of non-zero bytes in a PNG's filtered scanlines.

    A blank page's rows filter to zeros (about 0.04% non-zero at 900x1800), a page of charts and text
    does not (about 3%): a cheap test of "something was drawn" with the standard library only.
    """
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, header = 8, b"", b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        idat += body if kind == b"IDAT" else b""
        header = body if kind == b"IHDR" else header
        at += 12 + length
    width, height = struct.unpack(">II", header[:8])
    raw = zlib.decompress(idat)
    return width, height, 1 - raw.count(0) / len(raw)


@pytest.mark.slow
@needs_chromium
def test_the_report_opens_in_headless_chromium_without_errors(
    cache_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert run_cli(capsys, "report", "--out", str(out), "--store", cache_url).status == 0
    shot = tmp_path / "report.png"
    ran = chromium(out, tmp_path, f"--screenshot={shot}", "--window-size=900,1800", "--hide-scrollbars")
    assert ran.returncode == 0, ran.stderr[-2000:]
    messages = [line for line in ran.stderr.splitlines() if CONSOLE.search(line)]
    assert messages == []
    width, height, ink = png_ink(shot)
    assert (width, height) == (900, 1800)
    assert ink > 0.005  # charts and text were drawn, not a blank page

    dom = chromium(out, tmp_path, "--dump-dom")
    assert dom.returncode == 0
    assert dom.stdout.count("<svg") == 5 and "muscle-mem cache report" in dom.stdout
    assert not [line for line in dom.stderr.splitlines() if CONSOLE.search(line)]


@pytest.mark.slow
@needs_chromium
def test_markup_in_stored_rows_stays_text_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Markup written into a row's task, tags, step count, event tool and miss kind by SQL is text on the
    rendered page (or its row is left out): Chromium builds no element from it and logs no error."""
    path = tmp_path / "cache.db"
    stored = make_cache(path)
    markup = "<img src=x onerror=alert(1)><script>alert(2)</script><svg onload=alert(3)>"
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE trajectories SET task = ?, tags = ? WHERE id = ?",
            (markup, json.dumps([markup]), stored["refund"].id),
        )
        db.execute("UPDATE usage SET hits = 99 WHERE id = ?", (stored["refund"].id,))
        db.execute("UPDATE trajectories SET steps = ? WHERE id = ?", (markup, stored["plain"].id))
        for seq, data in db.execute("SELECT seq, data FROM events").fetchall():
            event = json.loads(data)
            if not event["hit"]:
                event |= {"tool": markup, "miss_reason": markup}
                db.execute("UPDATE events SET data = ? WHERE seq = ?", (json.dumps(event), seq))
    db.close()
    out = tmp_path / "report.html"
    assert run_cli(capsys, "report", "--out", str(out), "--store", f"sqlite:///{path}").status == 0
    dom = chromium(out, tmp_path, "--dump-dom")
    assert dom.returncode == 0
    assert not [line for line in dom.stderr.splitlines() if CONSOLE.search(line)]
    parsed = parse(dom.stdout)
    assert "img" not in parsed.tags and "script" not in parsed.tags and parsed.tags.count("svg") == 5
    assert re.search(r"<\w+[^<>]*\son\w+=", dom.stdout) is None  # no element got an event handler
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom.stdout


@pytest.mark.slow
@needs_chromium
def test_the_chromium_check_does_see_page_errors(tmp_path: Path) -> None:
    """The control: the same check flags a page with a script error and a blocked external load."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'\"></head><body><script>missing()</script>"
        '<img src="http://example.invalid/x.png"></body></html>'
    )
    ran = chromium(bad, tmp_path, "--dump-dom")
    messages = [line for line in ran.stderr.splitlines() if CONSOLE.search(line)]
    assert any("Uncaught ReferenceError" in m for m in messages)
    assert any("Content Security Policy" in m for m in messages)


@pytest.fixture
def utc() -> Iterator[None]:
    """The process's local time zone is UTC for the test."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_the_report_writes_absolute_times_with_their_zone(
    cache_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], utc: None
) -> None:
    """A report is read later: times are dates with a UTC offset, never "3 min ago"."""
    out = tmp_path / "report.html"
    assert run_cli(capsys, "report", "--out", str(out), "--store", cache_url).status == 0
    page = out.read_text()
    assert " ago" not in page
    assert "Engine calls from 2023-11-14 20:13:20+00:00 to 2023-11-14 21:38:20+00:00." in page
    assert "<td>2023-11-14 22:13:10+00:00</td>" in page  # the last use of the most used trajectory


def test_running_totals_are_drawn_as_steps(
    cache_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hit rate so far, time and tokens saved and spent hold their value until the next call: no slopes."""
    out = tmp_path / "report.html"
    assert run_cli(capsys, "report", "--out", str(out), "--store", cache_url).status == 0
    paths = re.findall(r'<path d="([^"]*)"', out.read_text())
    stepped = [p for p in paths if re.fullmatch(r"M[\d.]+,[\d.]+( H[\d.]+ V[\d.]+)+", p)]
    sloped = [p for p in paths if " L" in p]
    assert (len(stepped), len(sloped)) == (5, 1)  # only the hit rate of each interval joins its dots


def test_a_stepped_series_has_only_level_and_upright_segments() -> None:
    """``Series(steps=True)`` goes across to each point's x, then up or down to its y."""
    chart = svg.line_chart(
        [svg.Series("total", [(0.0, 0.0), (1.0, 1.0), (3.0, 2.0)], "#000", steps=True)],
        label="t",
        x_format=str,
        y_format=str,
    )
    (path,) = re.findall(r'<path d="([^"]*)"', chart)
    commands = re.findall(r"[A-Z]", path)
    assert commands == ["M", "H", "V", "H", "V"]
