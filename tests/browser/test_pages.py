"""The pages as a person meets them: an unknown link's friendly page, and the accessibility
basics of a room — labelled controls, keyboard send with focus kept in the composer, and a
live region that announces the agent's incoming line."""

from __future__ import annotations

from dealroom.persistence.db import Db
from dealroom.services import demo
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.support import own_pane, say, until
from tests.conftest import Server
from tests.support.offers import OPENING


async def test_an_unknown_link_renders_a_friendly_page(
    server: Server, new_context: NewContext
) -> None:
    page = await (await new_context(PHONE)).new_page()

    response = await page.goto(f"{server.base_url}/z/nobody-here")

    assert response is not None
    assert response.status == 404
    await page.get_by_role("heading", name="There is no one at this link").wait_for()
    await page.get_by_role("link", name="Go to dealroom").wait_for()


async def test_a_room_is_usable_by_keyboard_and_screen_reader(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    server = agent_server
    await demo.seed_demo(db, server.broker, server.clock, server.runner, posts_per_minute=60)
    page = await (await new_context(PHONE)).new_page()
    await page.goto(f"{server.base_url}/z/{demo.HANDLE}")
    box = own_pane(page).get_by_role("textbox", name="Message", exact=True)
    await box.wait_for()

    # Every control has an accessible name (a label or aria-label).
    unnamed = await page.locator("input, textarea, select, button").evaluate_all(
        """els => els.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                 && !e.textContent.trim()).map(e => e.outerHTML)"""
    )
    assert unnamed == []

    await say(page, OPENING.format(upfront="50% upfront"))
    # Sent with Enter (say() waits for the composer to empty); it keeps the focus.
    assert await box.evaluate("e => e === document.activeElement")
    # The agent's line is announced by the pane's polite live region.
    live = own_pane(page).locator('[aria-live="polite"]')

    async def announced() -> bool:
        return (await live.inner_text()).startswith("Agent: ")

    await until(announced, "the agent's line in the live region")
    assert offline.blocked == []


async def test_a_new_host_signs_up_and_teaches_its_agent(
    agent_server: Server, new_context: NewContext, offline: Offline
) -> None:
    page = await (await new_context()).new_page()
    await page.goto(agent_server.base_url + "/")
    await page.get_by_role("tab", name="Sign up").click()
    await page.get_by_label("Email").fill("dev@example.com")
    await page.get_by_label("Password").fill("correct horse battery")
    await page.get_by_label("Handle").fill("devraman")
    await page.get_by_label("Display name").fill("Dev Raman")
    await page.get_by_role("button", name="Create account").click()

    await page.get_by_role("heading", name="Dev Raman · your agent").wait_for()
    await page.get_by_role("link", name="/z/devraman").wait_for()
    await say(page, "My fee for a sponsored post is $8,000, never below $6,000.")
    await own_pane(page).locator(".msg.agent").first.wait_for()
    await agent_server.settle()
    # Signed in by cookie: a reload stays signed in, in the home room.
    await page.reload()
    await page.get_by_role("heading", name="Dev Raman · your agent").wait_for()
    await own_pane(page).locator(".msg.agent").first.wait_for()
    assert offline.blocked == []
