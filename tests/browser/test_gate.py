"""The guest gate in the browser (README "Guests become buyers"): a guest's note to the host is
held, the gate comes up live in the room, the guest signs up inside it — the guest cookie rides
the same request, so the server claims the room — and stays on the same URL and room while the
held note goes out to the host's pane. A post refused at the guest cap (FORBIDDEN,
LOGIN_REQUIRED) brings up the same gate and keeps the typed text. The gate at 390×844 is
screenshot for the README (DEALROOM_SCREENSHOTS=1)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind, Seat
from dealroom.persistence.db import Db
from dealroom.realtime import Broker
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext, Offline, screenshot_dir
from tests.browser.support import (
    gate,
    gate_is_up,
    own_pane,
    say,
    shows_the_stored_pane,
    sign_up_in_gate,
    until,
)
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.gate import held
from tests.support.offers import BID, OPENING
from tests.support.turns import messages_in


async def _open_as_guest(server: Server, new_context: NewContext) -> tuple[Page, str]:
    brand = await (await new_context(PHONE)).new_page()
    await brand.goto(f"{server.base_url}/z/{demo.HANDLE}")
    await own_pane(brand).get_by_role("textbox", name="Message", exact=True).wait_for()

    async def has_room() -> bool:
        return brand.url.count("/") >= 5

    await until(has_room, "the room id in the URL")
    return brand, brand.url.rsplit("/", 1)[1]


async def test_the_gate_comes_up_live_and_sign_up_keeps_the_room_and_sends_the_held_note(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline, tmp_path: Path
) -> None:
    server = agent_server
    await server.seed_demo(db)
    brand, room_id = await _open_as_guest(server, new_context)
    page = brand
    url = page.url
    assert await gate(page).count() == 0

    for line in (OPENING.format(upfront="50% upfront"), BID):
        await say(page, line)
        await server.settle()
    # The note to the host is held, and the gate comes up in the open page (no reload).
    await gate_is_up(page)
    assert [(r.kind, r.status) for r in await held(db, room_id)] == [("pane_send", "held")]
    host_before = await messages_in(db, room_id, Seat.HOST.value)
    assert not [m for m in host_before if m.author_kind == AuthorKind.AGENT.value]
    await page.screenshot(path=str(screenshot_dir(tmp_path) / "gate-phone.png"))
    box = await gate(page).bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= PHONE["width"]

    await sign_up_in_gate(page, "brightbrand", "Bright Brand")
    assert page.url == url
    assert await page.locator(f'.room[data-room-id="{room_id}"]').count() == 1

    # What was held goes out: the host's agent tells the host in the host's pane.
    async def delivered() -> bool:
        await server.settle()
        host_pane = await messages_in(db, room_id, Seat.HOST.value)
        replayed = [r.status for r in await held(db, room_id)] == ["replayed"]
        return replayed and any(m.author_kind == AuthorKind.AGENT.value for m in host_pane)

    await until(delivered, "the held note in the host's pane")

    # The host sees it in the browser, in the same room the brand never left.
    host = await (await new_context()).new_page()
    await host.goto(server.base_url + "/")
    await host.get_by_label("Email").fill(demo.EMAIL)
    await host.get_by_label("Password").fill(demo.PASSWORD)
    await host.get_by_role("button", name="Sign in").click()
    await host.get_by_role("heading", name="Maya Lin · your agent").wait_for()
    await host.goto(f"{server.base_url}/r/{room_id}")
    await shows_the_stored_pane(own_pane(host), db, room_id, Seat.HOST)
    assert await own_pane(host).locator(".msg.agent").count() >= 1
    # The visitor pane keeps its history and stays live after the claim.
    await shows_the_stored_pane(own_pane(page), db, room_id, Seat.VISITOR)
    assert offline.blocked == [], offline.blocked


@pytest.fixture
async def capped_server(
    agent_settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    settings = agent_settings.model_copy(update={"guest_message_cap": 1})
    async with serving(settings, engine, broker, clock, OfflineClient()) as running:
        yield running


async def test_a_post_refused_at_the_guest_cap_shows_the_gate_and_keeps_the_text(
    capped_server: Server, db: Db, new_context: NewContext
) -> None:
    server = capped_server
    await server.seed_demo(db)
    brand, room_id = await _open_as_guest(server, new_context)
    page = brand
    await say(page, OPENING.format(upfront="50% upfront"))
    await server.settle()

    # The cap is used up: the next post is refused with LOGIN_REQUIRED, the gate shows and
    # the typed line stays in the composer.
    box = own_pane(page).get_by_role("textbox", name="Message", exact=True)
    await box.fill(BID)
    await box.press("Enter")
    await gate_is_up(page)
    assert await box.input_value() == BID
    assert await own_pane(page).get_by_role("alert").count() == 0

    await sign_up_in_gate(page, "capped-brand", "Capped Brand")
    await box.press("Enter")

    async def sent() -> bool:
        return await box.input_value() == ""

    await until(sent, "the kept line to be sent after sign-up")
    await server.settle()
    bodies = [m.body for m in await messages_in(db, room_id, Seat.VISITOR.value)]
    assert BID in bodies
