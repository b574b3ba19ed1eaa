"""Playwright: Checks that see the page a browser tool is about to act on.

>>> @engine.tool(pre_check=element_check(page))
... def click(selector: str) -> None:
...     page.click(selector)

A replay of a browser tool is only as safe as its check: a selector that still resolves may now
point at another control. ``element_check`` captures the page's URL and the accessibility snapshot
(role, name, state) of the element the tool will act on, so a replay stops when the button is not
the one it was. ``page_check`` captures the URL and title: the page a tool expects to be on.

Both work with a sync page (``playwright.sync_api``) and an async one (``playwright.async_api``);
for an async page the tool must be async too. Neither waits for an element: one that is missing
or matched more than once is captured as such, and a replay stops there.
"""

from __future__ import annotations

import inspect
from typing import Any

from muscle_mem import Check
from muscle_mem.integrations._common import missing_extra

try:
    import playwright  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("playwright", "playwright") from exc

__all__ = ["element_check", "page_check"]

ElementState = tuple[str, int, "str | None"]
"""(URL, how many elements the selector matches, the accessibility snapshot of the only one)."""


def element_check(page: Any, selector_arg: str = "selector") -> Check[Any]:
    """A pre-check on the element a tool acts on: the URL and the element's accessibility snapshot.

    The selector is the tool's argument named ``selector_arg``, or its first positional argument.
    """

    def selector_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        selector = kwargs.get(selector_arg, args[0] if args else None)
        if not isinstance(selector, str):
            raise TypeError(
                f"element_check needs the tool's {selector_arg!r} argument as a string, got {selector!r}"
            )
        return selector

    if _is_async(page):

        async def capture_async(*args: Any, **kwargs: Any) -> ElementState:
            locator = page.locator(selector_of(args, kwargs))
            count = await locator.count()
            return page.url, count, await locator.aria_snapshot() if count == 1 else None

        return Check.equal(capture_async)

    def capture(*args: Any, **kwargs: Any) -> ElementState:
        locator = page.locator(selector_of(args, kwargs))
        count = locator.count()
        return page.url, count, locator.aria_snapshot() if count == 1 else None

    return Check.equal(capture)


def page_check(page: Any) -> Check[Any]:
    """A pre-check on the page a tool expects to be on: its URL and title."""
    if _is_async(page):

        async def capture_async(*_args: Any, **_kwargs: Any) -> tuple[str, str]:
            return page.url, await page.title()

        return Check.equal(capture_async)

    def capture(*_args: Any, **_kwargs: Any) -> tuple[str, str]:
        return page.url, page.title()

    return Check.equal(capture)


def _is_async(page: Any) -> bool:
    return inspect.iscoroutinefunction(page.title)
