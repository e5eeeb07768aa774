"""An operator works the queue on a phone (390×844): the flagged room's item is listed first,
the room opens from it, and resolving it with a note moves it from the queue to the room's
resolved items; the page stays phone-wide."""

from __future__ import annotations

from datetime import timedelta

from dealroom.persistence.db import Db
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.test_ops import fits_the_phone, open_page, sign_in
from tests.conftest import Server
from tests.support.ops_queue import add_flag, queue_room
from tests.support.partners import make_operator


async def test_an_operator_opens_the_flagged_room_from_the_queue_and_resolves_it(
    server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    room = await queue_room(server, db)
    now = server.clock.now()
    item = await add_flag(db, room, "high", now - timedelta(hours=2), "asked for a human twice")
    await add_flag(db, room, "low", now - timedelta(hours=1), "a sigh")
    await make_operator(db, server.client(), "opsjane")

    page = await (await new_context(PHONE)).new_page()
    await open_page(page, f"{server.base_url}/ops")
    await sign_in(page, "opsjane")
    await page.get_by_role("heading", name="Rooms").wait_for()
    await page.get_by_role("link", name="Queue").click()
    await page.get_by_role("heading", name="Queue").wait_for()
    entries = page.get_by_role("list", name="Queue items").locator("li.queue-item")
    await entries.first.get_by_text("asked for a human twice").wait_for()
    assert await entries.count() == 2
    assert await entries.first.get_attribute("data-item-id") == item  # high before low
    await fits_the_phone(page)

    # The item's link opens the room's ops page.
    await entries.first.get_by_role("link").click()
    await page.get_by_role("log", name="visitor pane").wait_for()
    assert page.url.endswith(f"/ops/rooms/{room.room_id}")
    await page.go_back()

    flagged = page.locator(f'li.queue-item[data-item-id="{item}"]')
    await flagged.get_by_role("button", name="Acknowledge").click()
    await flagged.get_by_text("acknowledged").wait_for()
    await flagged.get_by_role("textbox", name="Resolution note").fill("Answered the brand myself.")
    await flagged.get_by_role("button", name="Resolve").click()
    await flagged.wait_for(state="detached")
    assert await entries.count() == 1

    await open_page(page, f"{server.base_url}/ops/rooms/{room.room_id}")
    resolved = page.get_by_role("list", name="Resolved queue items")
    await resolved.get_by_text("Answered the brand myself.").wait_for()
    assert "@opsjane" in await resolved.inner_text()
    await fits_the_phone(page)
    assert offline.blocked == []
