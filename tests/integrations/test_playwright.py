"""Playwright checks against a real page in Debian's headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("playwright")

from browser_form import FORM, LAUNCH, needs_chromium
from playwright.sync_api import Page, sync_playwright

from muscle_mem import Engine, MissReason
from muscle_mem.integrations.playwright import element_check, page_check

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        yield browser.new_page()
        browser.close()


def form_engine(page: Page) -> tuple[Engine, list[str]]:
    engine = Engine()
    agent_runs: list[str] = []

    @engine.tool(pre_check=page_check(page))
    def fill(selector: str, text: str) -> None:
        page.fill(selector, text)

    @engine.tool(pre_check=element_check(page))
    def click(selector: str) -> str:
        page.click(selector)
        return page.title()

    def agent(task: str, name: str) -> str:
        agent_runs.append(name)
        fill("#name", name)
        return click("#go")

    engine.set_agent(agent)
    return engine, agent_runs


def test_a_form_task_replays_for_another_name_while_the_button_is_the_same(page: Page) -> None:
    engine, agent_runs = form_engine(page)
    page.set_content(FORM.format(button="Send"))
    assert engine("write to Ada", "Ada", params={"name": "Ada"}).output == "sent Ada"
    page.set_content(FORM.format(button="Send"))
    hit = engine("write to Bob", "Bob", params={"name": "Bob"})
    assert hit.hit and hit.output == "sent Bob" and agent_runs == ["Ada"]


def test_a_button_that_changed_stops_the_replay_before_the_click(page: Page) -> None:
    engine, agent_runs = form_engine(page)
    page.set_content(FORM.format(button="Send"))
    engine("write to Ada", "Ada", params={"name": "Ada"})
    page.set_content(FORM.format(button="Delete account"))
    result = engine("write to Bob", "Bob", params={"name": "Bob"})
    assert not result.hit and result.steps_replayed == 1  # the fill was safe, the click was not
    assert result.miss_reason is MissReason.PRE_CHECK_FAILED and result.miss_tool == "click"
    assert agent_runs == ["Ada", "Bob"]


def test_a_missing_or_ambiguous_element_is_captured_without_waiting(page: Page) -> None:
    check = element_check(page)
    page.set_content(FORM.format(button="Send"))
    url, count, snapshot = check.capture(selector="#go")
    assert count == 1 and snapshot is not None and "Send" in snapshot
    assert check.capture("#nothing") == (url, 0, None)
    assert check.capture(selector="input, button")[1:] == (2, None)
    with pytest.raises(TypeError, match="'selector' argument"):
        check.capture(target=3)


def test_another_page_stops_a_replay_guarded_by_page_check(page: Page) -> None:
    engine, _ = form_engine(page)
    page.set_content(FORM.format(button="Send"))
    engine("write to Ada", "Ada", params={"name": "Ada"})
    page.set_content(FORM.format(button="Send").replace("Contact", "Billing"))
    result = engine("write to Bob", "Bob", params={"name": "Bob"})
    assert not result.hit and result.steps_replayed == 0 and result.miss_tool == "fill"
