"""The notification bell, on a phone and on a desktop: the host's unread count, the list under
it, and a notification that opens its room; a guest has no bell."""

from __future__ import annotations

import uuid

import pytest
from playwright.async_api import Page

from dealroom.persistence.engine import create_sessionmaker
from dealroom.services.notify import outbox
from dealroom.services.notify.kinds import Audience, Kind
from dealroom.services.unit_of_work import UnitOfWork
from tests.browser.conftest import DESKTOP, PHONE, NewContext, Offline
from tests.browser.support import own_pane, until
from tests.conftest import Server
from tests.support.graphql import open_room, sign_up
from tests.support.rooms import PASSWORD


async def _sign_in(page: Page, handle: str) -> None:
    await page.get_by_label("Email").fill(f"{handle}@example.com")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
async def test_the_bell_counts_lists_and_opens_the_room(
    server: Server, new_context: NewContext, offline: Offline, viewport: dict[str, int]
) -> None:
    host = server.client()
    account = await sign_up(host, "devraman", "Dev Raman")
    brand = server.client()
    await sign_up(brand, "acmebrand", "Acme Brand")
    room_id = (await open_room(brand, "devraman"))["room"]["id"]

    note = outbox.Note(
        account_id=uuid.UUID(account["account"]["id"]),
        kind=Kind.DECISION,
        audience=Audience.HOST,
        source="bell-test",
        title="Acme Brand asked something only you can decide",
        body="Acme Brand proposes a reel for $3,000.",
        link=outbox.host_link(uuid.UUID(room_id)),
        reason="test",
        room_id=uuid.UUID(room_id),
    )
    async with UnitOfWork(create_sessionmaker(server.engine)) as unit:
        await outbox.write(unit.db, server.clock.now(), [note])

    page = await (await new_context(viewport)).new_page()
    await page.goto(f"{server.base_url}/")
    await _sign_in(page, "devraman")
    bell = page.get_by_role("button", name="Notifications, 1 unread")
    await bell.wait_for()
    await bell.click()
    item = page.get_by_role("dialog", name="Notifications").get_by_role(
        "link", name="Acme Brand asked something only you can decide"
    )
    await item.wait_for()
    await item.click()
    await page.wait_for_url(f"**/r/{room_id}")
    await page.get_by_role("heading", name="Acme Brand × Dev Raman").wait_for()

    async def read() -> bool:
        data = await host.query("{ notifications(first: 5) { unreadCount } }")
        return bool(data["notifications"]["unreadCount"] == 0)

    await until(read, "the opened notification marked read")
    assert offline.blocked == []


async def test_a_guest_has_no_bell(server: Server, new_context: NewContext) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    page = await (await new_context(PHONE)).new_page()
    await page.goto(f"{server.base_url}/z/devraman")
    await own_pane(page).get_by_role("textbox", name="Message", exact=True).wait_for()
    await page.wait_for_timeout(500)
    assert await page.locator(".bell").count() == 0
