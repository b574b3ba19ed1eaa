"""The page the Playwright tests act on, and the browser they drive: Debian's headless Chromium."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"
)
LAUNCH = {"executable_path": CHROMIUM, "args": ["--no-sandbox"]}

FORM = """<title>Contact</title>
<label>Name <input id="name"></label>
<button id="go" onclick="document.title = 'sent ' + document.getElementById('name').value">{button}</button>"""
