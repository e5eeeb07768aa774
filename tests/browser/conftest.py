"""Real headless Chromium (Debian's /usr/bin/chromium, never a browser Playwright downloads)
driven by Playwright against the real server. Every context blocks any request that is not
to the loopback server, so the pages are proven to need nothing else."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.async_api import Browser, BrowserContext, Route, async_playwright

CHROMIUM = "/usr/bin/chromium"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}


def _chromium() -> str:
    """Debian's Chromium, or a skip that says how to get it. CI installs it (``.ci/run``) and
    must run these tests, so there a missing browser fails instead of skipping."""
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is missing: apt-get install chromium to run the browser tests"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    executable = _chromium()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        yield launched
        await launched.close()


class Offline:
    """The requests a context tried to make off this machine (each was aborted)."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    async def route(self, route: Route) -> None:
        host = urlparse(route.request.url).hostname or ""
        if host in LOOPBACK:
            await route.continue_()
        else:
            self.blocked.append(route.request.url)
            await route.abort("internetdisconnected")


@pytest.fixture
def offline() -> Offline:
    return Offline()


NewContext = Callable[..., Awaitable[BrowserContext]]


@pytest.fixture
async def new_context(browser: Browser, offline: Offline) -> AsyncIterator[NewContext]:
    """``await new_context(viewport)``: a fresh context (its own cookies) with the network
    blocked beyond loopback."""
    made: list[BrowserContext] = []

    async def make(viewport: dict[str, int] | None = None) -> BrowserContext:
        context = await browser.new_context(viewport=viewport or DESKTOP)  # type: ignore[arg-type]
        context.set_default_timeout(30_000)
        await context.route("**/*", offline.route)
        made.append(context)
        return context

    yield make
    for context in made:
        await context.close()


def screenshot_dir(tmp_path: Path) -> Path:
    """Where the story's screenshots go: docs/screenshots when DEALROOM_SCREENSHOTS=1 (to
    refresh the README's pictures), else the test's temporary directory."""
    if os.environ.get("DEALROOM_SCREENSHOTS") == "1":
        target = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
        target.mkdir(parents=True, exist_ok=True)
        return target
    return tmp_path
