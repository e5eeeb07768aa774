"""The pages as a person meets them: an unknown link's friendly page; the accessibility
basics of a room — labelled controls, keyboard send with focus kept in the composer, a live
region that announces the agent's incoming line, and focus that follows a new line for a
reader who is in the list; and the host app at 390×844."""

from __future__ import annotations

from playwright.async_api import Page

from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.support import own_pane, say, shows_the_stored_pane, stored_ids, until
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
    await server.seed_demo(db)
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


async def test_focus_follows_a_new_line_when_the_reader_is_in_the_list(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    server = agent_server
    await server.seed_demo(db)
    page = await (await new_context(PHONE)).new_page()
    await page.goto(f"{server.base_url}/z/{demo.HANDLE}")
    await say(page, "Hello")
    await server.settle()
    room_id = page.url.rsplit("/", 1)[1]
    lines = own_pane(page).locator("[data-message-id]")
    await shows_the_stored_pane(own_pane(page), db, room_id, Seat.VISITOR)
    # A keyboard reader is on an earlier line (not typing) when new lines come in.
    await lines.first.focus()
    response = await page.request.post(
        f"{server.base_url}/graphql",
        data={
            "query": "mutation($input: PostMessageInput!) { postMessage(input: $input) { id } }",
            "variables": {
                "input": {
                    "roomId": room_id,
                    "body": OPENING.format(upfront="50% upfront"),
                    "clientMessageId": "from-another-tab",
                }
            },
        },
    )
    assert (await response.json()).get("errors") is None, await response.text()
    await server.settle()
    await shows_the_stored_pane(own_pane(page), db, room_id, Seat.VISITOR)
    stored = await stored_ids(db, room_id, Seat.VISITOR)
    assert len(stored) >= 4  # the two lines before and the two since
    newest = stored[-1]

    async def focused_on_newest() -> bool:
        focused = await page.evaluate("() => document.activeElement?.dataset?.messageId ?? null")
        return bool(focused == newest)

    await until(focused_on_newest, "the focus on the newest line")
    assert offline.blocked == []


async def test_the_host_app_works_on_a_phone(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    server = agent_server
    await server.seed_demo(db)
    brand = await (await new_context(PHONE)).new_page()
    await brand.goto(f"{server.base_url}/z/{demo.HANDLE}")
    await say(brand, OPENING.format(upfront="50% upfront"))
    await server.settle()
    room_id = brand.url.rsplit("/", 1)[1]

    host = await (await new_context(PHONE)).new_page()
    await host.goto(server.base_url + "/")
    await host.get_by_label("Email").fill(demo.EMAIL)
    await host.get_by_label("Password").fill(demo.PASSWORD)
    await host.get_by_role("button", name="Sign in").click()
    listed = host.locator(f'.room-item[data-room-id="{room_id}"]')
    await listed.wait_for()
    await _fits_the_phone(host)

    # Opening the room shows it alone, its two panes stacked, and a way back to the list.
    await listed.get_by_role("link").click()
    own = own_pane(host)
    visitor = host.locator('.pane.readonly[data-seat="VISITOR"]')
    await shows_the_stored_pane(visitor, db, room_id, Seat.VISITOR)
    await own.get_by_role("textbox", name="Message", exact=True).wait_for()
    assert not await listed.is_visible()
    own_box, visitor_box = await own.bounding_box(), await visitor.bounding_box()
    assert own_box is not None
    assert visitor_box is not None
    assert visitor_box["y"] >= own_box["y"] + own_box["height"]  # stacked, not side by side
    for box in (own_box, visitor_box):
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"]
    await _fits_the_phone(host)
    await host.get_by_role("link", name="‹ Rooms").click()
    await listed.wait_for()
    assert offline.blocked == []


async def _fits_the_phone(page: Page) -> None:
    """Nothing on the page is wider than the screen (no sideways scrolling)."""
    width = await page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
