"""The whole first-run story in two browsers: the demo host (desktop) and a brand on a phone
(390×844). The brand chats as a guest, meets the login gate (its note and the written offer are
held), signs up in the gate without leaving the room, the held offer appears with its stage,
the brand approves, the host approves, the brand pays with a test card, and the stage moves
live in both — no reload.
Screenshots of the two panes and the offer card (DEALROOM_SCREENSHOTS=1 writes them into
docs/screenshots for the README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dealroom.config import Settings
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext, Offline, screenshot_dir
from tests.browser.support import (
    gate_is_up,
    own_pane,
    reaches_stage,
    say,
    shows_the_stored_pane,
    sign_up_in_gate,
    until,
)
from tests.conftest import Server
from tests.support.offers import AGREE, BID, OPENING


@pytest.fixture
def agent_settings(settings: Settings) -> Settings:
    """As served: the visitor is greeted when the room opens."""
    return settings.model_copy(
        update={"workers": 2, "worker_poll_seconds": 0.05, "greet_visitors": True}
    )


async def test_host_and_brand_run_the_whole_story(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline, tmp_path: Path
) -> None:
    server = agent_server
    shots = screenshot_dir(tmp_path)
    await server.seed_demo(db)

    # The host signs in with the demo's printed credentials and lands in its home room.
    host = await (await new_context()).new_page()
    await host.goto(server.base_url + "/")
    await host.get_by_label("Email").fill(demo.EMAIL)
    await host.get_by_label("Password").fill(demo.PASSWORD)
    await host.get_by_role("button", name="Sign in").click()
    await host.get_by_role("heading", name="Maya Lin · your agent").wait_for()
    await own_pane(host).get_by_text(demo.RULES).wait_for()

    # The brand opens the link on a phone and chats to a written offer.
    brand = await (await new_context(PHONE)).new_page()
    await brand.goto(f"{server.base_url}/z/{demo.HANDLE}")
    await own_pane(brand).get_by_role("textbox", name="Message", exact=True).wait_for()
    await until(lambda: _url_has_room(brand.url), "the room id in the URL")
    room_id = brand.url.rsplit("/", 1)[1]
    # The host's agent has greeted the brand before anyone said anything.
    await own_pane(brand).get_by_text("I'm the agent for Maya Lin").wait_for()
    # As a guest, the brand's note to the host is held: the gate comes up live, nothing went out.
    for line in (OPENING.format(upfront="50% upfront"), BID):
        await say(brand, line)
        await server.settle()
        await shows_the_stored_pane(own_pane(brand), db, room_id, Seat.VISITOR)
    await gate_is_up(brand)
    assert await brand.locator(".offer").count() == 0
    # The brand signs up in the gate and stays in the room; the held note goes out and the
    # host's agent answers in the brand's pane; the brand agrees, now as itself.
    await sign_up_in_gate(brand, "glowco", "Glow Co")
    assert brand.url == f"{server.base_url}/z/{demo.HANDLE}/{room_id}"  # the same room
    await server.settle()
    await say(brand, AGREE)
    await server.settle()
    await shows_the_stored_pane(own_pane(brand), db, room_id, Seat.VISITOR)
    await reaches_stage(brand, "WRITTEN_AWAITING_BRAND")
    card = brand.locator(".offer")
    await card.get_by_text("$8,000").first.wait_for()
    assert await card.get_by_role("button", name="Approve offer").is_visible()
    # The phone shows the room at its width: nothing wider than the screen.
    for part in (card, own_pane(brand)):
        box = await part.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= PHONE["width"]

    # The host sees the deal room listed with its stage and an unread marker, and opens it.
    listed = host.locator(f'.room-item[data-room-id="{room_id}"]')
    await listed.locator('[data-stage="WRITTEN_AWAITING_BRAND"]').wait_for()
    assert await listed.get_by_label("unread").count() == 1
    await listed.get_by_role("link").click()
    await reaches_stage(host, "WRITTEN_AWAITING_BRAND")
    visitor_pane = host.locator('.pane.readonly[data-seat="VISITOR"]')
    await shows_the_stored_pane(visitor_pane, db, room_id, Seat.VISITOR)
    await shows_the_stored_pane(own_pane(host), db, room_id, Seat.HOST)
    assert await visitor_pane.get_by_role("textbox").count() == 0  # read-only
    # The talent cannot approve before the brand: the server's viewerActions say so.
    assert await host.locator(".offer").get_by_role("button", name="Approve offer").count() == 0

    # The brand approves; the host's card moves live and now offers Approve.
    await card.get_by_role("button", name="Approve offer").click()
    await reaches_stage(brand, "BRAND_ACKED_AWAITING_TALENT")
    await reaches_stage(host, "BRAND_ACKED_AWAITING_TALENT")
    await host.locator(".offer").get_by_role("button", name="Approve offer").click()
    await reaches_stage(host, "BOOKED_AWAITING_PAYMENT")
    await reaches_stage(brand, "BOOKED_AWAITING_PAYMENT")

    # The brand pays with the test card; both see the payment held, live.
    await card.get_by_label("Payment method").select_option("test_card_ok")
    await card.locator('[data-money="total"]').get_by_text("$4,800").wait_for()
    await card.get_by_role("button", name="Pay now").click()
    await reaches_stage(brand, "BOOKED_PAYMENT_HELD")
    await reaches_stage(host, "BOOKED_PAYMENT_HELD")
    await card.locator('[data-money="paid"]').get_by_text("$4,800").wait_for()
    assert await card.get_by_text("Due now").count() == 0  # nothing is due once it is paid
    assert await card.get_by_text("Paid", exact=True).count() == 1  # said once
    await listed.locator('[data-stage="BOOKED_PAYMENT_HELD"]').wait_for()
    assert await host.locator(".offer").get_by_role("button").filter(has_text="Pay").count() == 0

    # The host's private rules never reached the brand's screen (the floor, the exclusion).
    shown_to_brand = await brand.locator("body").inner_text()
    for secret in ("6,000", "6000", "alcohol"):
        assert secret not in shown_to_brand

    await host.screenshot(path=str(shots / "host-deal-room.png"))
    await host.locator(".offer").screenshot(path=str(shots / "offer-card.png"))
    await brand.screenshot(path=str(shots / "brand-phone.png"))
    assert offline.blocked == [], offline.blocked


async def _url_has_room(url: str) -> bool:
    return url.count("/") >= 5
