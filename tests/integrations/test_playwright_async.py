"""Playwright checks on an async page (playwright.async_api) in Debian's headless Chromium."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("playwright")

from browser_form import FORM, LAUNCH, needs_chromium
from playwright.async_api import async_playwright

from muscle_mem import Engine
from muscle_mem.integrations.playwright import element_check, page_check

pytestmark = needs_chromium


async def test_checks_on_an_async_page_guard_async_tools() -> None:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(**LAUNCH)
        page: Any = await browser.new_page()
        engine = Engine()

        @engine.tool(pre_check=element_check(page, selector_arg="target"))
        async def click(target: str) -> str:
            await page.click(target)
            return str(await page.title())

        @engine.tool(pre_check=page_check(page))
        async def fill(selector: str, text: str) -> None:
            await page.fill(selector, text)

        async def agent(task: str, name: str) -> str:
            await fill("#name", name)
            return await click(target="#go")

        engine.set_agent(agent)
        await page.set_content(FORM.format(button="Send"))
        await engine.arun("write to Ada", "Ada", params={"name": "Ada"})
        await page.set_content(FORM.format(button="Send"))
        hit = await engine.arun("write to Bob", "Bob", params={"name": "Bob"})
        assert hit.hit and hit.output == "sent Bob"
        await page.set_content(FORM.format(button="Delete account"))
        miss = await engine.arun("write to Cy", "Cy", params={"name": "Cy"})
        assert not miss.hit and miss.miss_tool == "click"
        await browser.close()
