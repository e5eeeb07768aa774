"""The operators' pages on a phone (390×844): an operator signs in at /ops, finds a room by its
host's handle, opens it, reads a run and the spend, takes over the visitor pane, speaks there as
operator (the line is stored and shown authored OPERATOR) and releases it; the prompts page shows
each prompt's SHA-256. A non-operator who opens /ops is told the pages are for operators only (the
API's FORBIDDEN), and sees no room."""

from __future__ import annotations

import hashlib
from pathlib import Path

from playwright.async_api import Page

from dealroom.agents import persona
from dealroom.persistence.db import Db
from tests.browser.conftest import PHONE, NewContext, Offline, screenshot_dir
from tests.browser.support import until
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.offers import open_deal, settle
from tests.support.partners import make_operator
from tests.support.turns import messages_in

PASSWORD = "correct horse battery"  # tests.support.graphql.sign_up's


async def open_page(page: Page, url: str) -> None:
    """The server serves the client's shell at the ops routes (dealroom/webapp.py)."""
    response = await page.goto(url)
    assert response is not None
    assert response.status == 200, f"{url} answered {response.status}"


async def every_control_is_named(page: Page) -> None:
    unnamed = await page.locator("input, textarea, select, button").evaluate_all(
        """els => els.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                 && !e.textContent.trim()).map(e => e.outerHTML)"""
    )
    assert unnamed == []


async def sign_in(page: Page, handle: str) -> None:
    await page.get_by_label("Email").fill(f"{handle}@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()


async def fits_the_phone(page: Page) -> None:
    width = await page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide on a {PHONE['width']}px phone"


async def test_an_operator_finds_a_room_and_takes_over_its_visitor_pane(
    server: Server, db: Db, new_context: NewContext, offline: Offline, tmp_path: Path
) -> None:
    shots = screenshot_dir(tmp_path)
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Hi! We'd like a sponsored post next month.")
    await settle(server)
    await make_operator(db, server.client(), "opsjane")

    page = await (await new_context(PHONE)).new_page()
    await open_page(page, f"{server.base_url}/ops")
    await sign_in(page, "opsjane")
    await page.get_by_role("heading", name="Rooms").wait_for()

    # Narrow the list to the host's rooms: its home room and the deal room, with spend.
    filters = page.get_by_role("form", name="Filter rooms")
    await filters.get_by_label("Host handle").fill("devraman")
    await filters.get_by_label("Flagged").select_option("no")
    await filters.get_by_role("button", name="Filter").click()
    listed = page.locator(f'.ops-room-item[data-room-id="{d.room_id}"]')
    await listed.wait_for()

    async def only_devraman() -> bool:
        hosts = await page.locator(".ops-room-item .muted").all_inner_texts()
        return bool(hosts) and all(h.startswith("@devraman ") for h in hosts)

    await until(only_devraman, "the list to hold only devraman's rooms")
    assert "Spend $" in await listed.locator(".spend").inner_text()
    assert await listed.locator(".flags").inner_text() == "0 flags"
    await fits_the_phone(page)
    await page.screenshot(path=shots / "ops-rooms-phone.png", full_page=True)
    await every_control_is_named(page)

    # The room: its persona run with tokens and price, and spend by agent.
    await listed.get_by_role("link").click()
    assert page.url == f"{server.base_url}/ops/rooms/{d.room_id}"
    runs = page.get_by_role("region", name="Run history")
    await runs.locator(".run-row", has_text="persona").first.wait_for()
    assert "done" in await runs.locator(".run-row", has_text="persona").first.inner_text()
    by_agent = page.get_by_role("region", name="Spend by agent")
    await by_agent.get_by_role("cell", name="persona", exact=True).wait_for()
    await page.get_by_role("form", name="Models for this room").get_by_label("persona").wait_for()
    await fits_the_phone(page)

    # Take over the visitor pane, speak in the agent's seat, release.
    visitor_pane = page.locator('.takeover-seat[data-seat="VISITOR"]')
    await visitor_pane.get_by_role("button", name="Take over the visitor pane").click()
    box = visitor_pane.get_by_label("Say as operator in the visitor pane")
    await box.fill("Hi, this is the dealroom team: we'll have an answer for you shortly.")
    await visitor_pane.get_by_role("button", name="Post as operator").click()
    line = visitor_pane.locator('[data-author="OPERATOR"]')
    await line.get_by_text("this is the dealroom team").wait_for()
    await page.screenshot(path=shots / "ops-room-phone.png", full_page=True)
    await every_control_is_named(page)
    assert await line.locator(".who").inner_text() == "Operator"
    stored = await messages_in(db, d.room_id, "visitor")
    assert stored[-1].author_kind == "operator"
    assert stored[-1].body.startswith("Hi, this is the dealroom team")
    await visitor_pane.get_by_role("button", name="Release the visitor pane").click()
    await visitor_pane.get_by_role("button", name="Take over the visitor pane").wait_for()
    await fits_the_phone(page)

    # The prompts, read-only, each with its SHA-256.
    await page.get_by_role("link", name="Prompts").click()
    await page.get_by_role("heading", name="Agent prompts").wait_for()
    digest = hashlib.sha256(persona.SYSTEM.encode()).hexdigest()  # the text that runs
    await page.get_by_text(f"sha256 {digest}").wait_for()
    assert offline.blocked == []


async def test_a_non_operator_is_told_the_pages_are_for_operators_only(
    server: Server, new_context: NewContext, offline: Offline
) -> None:
    d = await open_deal(server)
    page = await (await new_context(PHONE)).new_page()
    await open_page(page, f"{server.base_url}/ops")
    await sign_in(page, "devraman")

    await page.get_by_role("heading", name="Operators only").wait_for()
    assert await page.locator(f'[data-room-id="{d.room_id}"]').count() == 0
    for path in (f"/ops/rooms/{d.room_id}", "/ops/prompts"):
        await open_page(page, server.base_url + path)
        await page.get_by_role("heading", name="Operators only").wait_for()
        assert await page.get_by_role("table").count() == 0
    assert offline.blocked == []
