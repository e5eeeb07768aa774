"""What people read, in real Chromium on the demo: a guest asks about rates, deliverables and
dates and is answered without the gate; the first proposal meets the gate in one message naming
what waits; after sign-up the replay is one message; the agreed price, the platform fee and the
total read the same in chat and on the offer card; no line of either pane shows a stage label;
the gate fits at 1280×800 and 390×844 (its actions and the message box on screen, no scrolling);
the host's list names the room by the brand. Screenshots go to docs/screenshots with
DEALROOM_SCREENSHOTS=1."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Locator, Page

from dealroom.domain import pane_words
from dealroom.persistence.db import Db
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext, Offline, screenshot_dir
from tests.browser.support import (
    gate,
    gate_is_up,
    own_pane,
    reaches_stage,
    say,
    sign_up_in_gate,
    until,
)
from tests.conftest import Server

LAPTOP = {"width": 1280, "height": 800}
QUESTIONS = (
    "Hi! What are your rates?",
    "What do you deliver — posts, reels?",
    "How far ahead do you book?",
)
PROPOSAL = "We could pay $7,000 for one sponsored post on 15 March 2027."


async def agent_lines(page: Page) -> list[str]:
    return [t.strip() for t in await own_pane(page).locator(".msg.left .body").all_inner_texts()]


async def settled_lines(server: Server, page: Page, count: int) -> list[str]:
    """The agent's lines once the rooms are quiet and the page shows at least ``count``."""
    await server.settle()

    async def shown() -> bool:
        return len(await agent_lines(page)) >= count

    await until(shown, f"{count} agent lines")
    return await agent_lines(page)


async def on_screen(page: Page, part: Locator, viewport: dict[str, int]) -> None:
    """``part`` is inside the viewport as laid out, without scrolling the page."""
    assert await page.evaluate("() => window.scrollY") == 0
    box = await part.bounding_box()
    assert box is not None, part
    assert box["y"] >= 0, (box, viewport)
    assert box["y"] + box["height"] <= viewport["height"], (box, viewport)
    assert box["x"] >= 0, (box, viewport)
    assert box["x"] + box["width"] <= viewport["width"], (box, viewport)


async def open_as_guest(server: Server, new_context: NewContext, viewport: dict[str, int]) -> Page:
    page = await (await new_context(viewport)).new_page()
    await page.goto(f"{server.base_url}/z/{demo.HANDLE}")
    await own_pane(page).get_by_role("textbox", name="Message", exact=True).wait_for()
    return page


async def test_a_guest_talks_first_meets_one_gate_and_reads_people_words_and_one_price(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline, tmp_path: Path
) -> None:
    server = agent_server
    shots = screenshot_dir(tmp_path)
    await server.seed_demo(db)
    brand = await open_as_guest(server, new_context, LAPTOP)

    # Rates, deliverables, dates: answered from the host's public card, no gate.
    before = len(await agent_lines(brand))
    for question in QUESTIONS:
        await say(brand, question)
    answers = (await settled_lines(server, brand, before + len(QUESTIONS)))[before:]
    assert len(answers) == len(QUESTIONS), answers
    assert "$8,000" in answers[0], answers
    assert "reels" in answers[1]
    assert "two weeks" in answers[2]
    assert await gate(brand).count() == 0

    # The first proposal: the gate, in one message that names what waits.
    count = len(await agent_lines(brand))
    await say(brand, PROPOSAL)
    await gate_is_up(brand)
    said = (await settled_lines(server, brand, count + 1))[count:]
    assert len(said) == 1, said
    for named in ("$7,000", "sponsored post", "sign in"):
        assert named in said[0], said
    textbox = own_pane(brand).get_by_role("textbox", name="Message", exact=True)
    await on_screen(brand, textbox, LAPTOP)
    await on_screen(brand, gate(brand).get_by_role("tab", name="Sign up"), LAPTOP)
    await brand.screenshot(path=str(shots / "gate-laptop.png"))

    # Sign up: the replay is one coherent message at the current position.
    count = len(await agent_lines(brand))
    await sign_up_in_gate(brand, "glowco", "Glow Co")
    replay = (await settled_lines(server, brand, count + 1))[count:]
    assert len(replay) == 1, replay
    assert "$8,000" in replay[0]

    # Agreed: chat tells the whole price before the written offer, the card the same figures.
    count = len(await agent_lines(brand))
    await say(brand, "Yes, that works")
    agreed = (await settled_lines(server, brand, count + 1))[count]
    await reaches_stage(brand, "WRITTEN_AWAITING_BRAND")
    card = brand.locator(".offer")
    figures = {
        "fee": await card.locator('[data-money="fee"]').inner_text(),
        "platform-fee": await card.locator('[data-money="platform-fee"]').inner_text(),
        "total": await card.locator('[data-money="total"]').inner_text(),
    }
    assert figures == {"fee": "$8,000", "platform-fee": "$1,600", "total": "$9,600"}
    for shown in figures.values():
        assert shown in agreed, (shown, agreed)
    assert "platform fee" in agreed
    await card.screenshot(path=str(shots / "offer-card.png"))

    # The host's side: the room is named by the brand, and no line of either pane has a label.
    host = await (await new_context(LAPTOP)).new_page()
    await host.goto(server.base_url + "/")
    await host.get_by_label("Email").fill(demo.EMAIL)
    await host.get_by_label("Password").fill(demo.PASSWORD)
    await host.get_by_role("button", name="Sign in").click()
    await host.get_by_role("heading", name="Maya Lin · your agent").wait_for()
    listed = host.locator(".room-item").filter(has_text="Glow Co × Maya Lin")
    await listed.first.wait_for()
    await listed.first.get_by_role("link").click()
    await reaches_stage(host, "WRITTEN_AWAITING_BRAND")
    await host.screenshot(path=str(shots / "host-deal-room.png"))
    for page in (brand, host):
        for line in await page.locator(".pane .msg .body").all_inner_texts():
            assert pane_words.labels_in(line) == [], line
    assert offline.blocked == [], offline.blocked


async def test_the_gate_fits_a_phone_with_the_message_box_in_view(
    agent_server: Server, db: Db, new_context: NewContext, tmp_path: Path
) -> None:
    server = agent_server
    await server.seed_demo(db)
    brand = await open_as_guest(server, new_context, PHONE)
    await say(brand, PROPOSAL)
    await server.settle()
    await gate_is_up(brand)
    textbox = own_pane(brand).get_by_role("textbox", name="Message", exact=True)
    await on_screen(brand, textbox, PHONE)
    await on_screen(brand, gate(brand).get_by_role("tab", name="Sign up"), PHONE)
    await on_screen(brand, own_pane(brand).locator(".msg").last, PHONE)  # the gate's message
    await brand.screenshot(path=str(screenshot_dir(tmp_path) / "gate-phone.png"))
