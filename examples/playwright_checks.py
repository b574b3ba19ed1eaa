"""Browser tools guarded by Playwright checks, in Debian's headless Chromium (no network).

A form task recorded for Ada replays for Bob while the button is the same. When the button becomes
"Delete account", the click's element check fails: the fill is replayed, then the agent takes over.

Run: python examples/playwright_checks.py   (needs pip install 'muscle-mem[playwright]'
     and Debian's chromium: apt-get install chromium)
"""

from __future__ import annotations

import shutil

from playwright.sync_api import sync_playwright

from muscle_mem import Engine
from muscle_mem.integrations.playwright import element_check, page_check

FORM = """<title>Contact</title>
<label>Name <input id="name"></label>
<button id="go" onclick="document.title = 'sent ' + document.getElementById('name').value">{button}</button>"""

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None:
    raise SystemExit("this example needs Debian's chromium: apt-get install chromium")

with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    page = browser.new_page()
    engine = Engine()

    @engine.tool(pre_check=page_check(page))
    def fill(selector: str, text: str) -> None:
        page.fill(selector, text)

    @engine.tool(pre_check=element_check(page))
    def click(selector: str) -> str:
        page.click(selector)
        return page.title()

    def agent(task: str, name: str) -> str:
        print(f"  (the agent works on {task!r})")
        fill("#name", name)
        return click("#go")

    engine.set_agent(agent)
    for name, button in (("Ada", "Send"), ("Bob", "Send"), ("Cy", "Delete account")):
        page.set_content(FORM.format(button=button))
        result = engine(f"write to {name}", name, params={"name": name})
        print(f"{name}: hit={result.hit} replayed={result.steps_replayed} -> {result.output}")
        if result.reason and result.steps_replayed:
            print(f"  why: {result.reason}")
    browser.close()
