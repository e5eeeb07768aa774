"""An operator works a flagged room end to end on a phone (390×844) while the brand watches its
own pane live in a second browser: the queue leads to the room, the operator reads both panes,
takes over the visitor pane, answers and releases it. The brand reads the answer as the agent's
line (nothing on its page says an operator was there) and then the release line; the item
leaves the queue and stays in the room's history as resolved, and the agent answers the brand's
next line."""

from __future__ import annotations

import uuid
from datetime import timedelta

from playwright.async_api import Page
from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant, Room
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.support import own_pane, say, until
from tests.browser.test_ops import fits_the_phone, open_page, sign_in
from tests.conftest import Server
from tests.support.graphql import Client, post
from tests.support.offers import open_deal, settle
from tests.support.ops_queue import HISTORY, QUEUE, QueueRoom, add_flag
from tests.support.partners import make_operator

ASKED = "This is the third time I ask: can a person confirm you do reels in March?"
ANSWER = "Yes: Dev has two reel slots in March, and the offer can name the dates you pick."
RELEASED = "The agent picks up from here."


async def _as_queue_room(db: Db, host: Client, room_id: str) -> QueueRoom:
    """The deal room's panes, for the queue's row factories."""
    rid = uuid.UUID(room_id)
    try:
        room = await db.get(Room, rid)
        assert room is not None
        panes = {
            p.key: p.id
            for p in await db.scalars(select(Participant).where(Participant.room_id == rid))
        }
        return QueueRoom(rid, room.host_account_id, panes["host"], panes["visitor"], host)
    finally:
        await db.close()


async def _visitor_page(
    server: Server, new_context: NewContext, visitor: Client, room_id: str
) -> Page:
    """The brand's own browser, signed in with the brand's session, on its room."""
    context = await new_context(PHONE)
    await context.add_cookies(
        [
            {"name": cookie.name, "value": cookie.value or "", "url": server.base_url}
            for cookie in visitor.http.cookies.jar
        ]
    )
    page = await context.new_page()
    await page.goto(f"{server.base_url}/z/devraman/{room_id}")
    return page


async def test_an_operator_answers_a_flagged_room_in_the_agents_voice_and_resolves_it(
    server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    d = await open_deal(server)
    await post(d.visitor, d.room_id, ASKED)
    await settle(server)
    room = await _as_queue_room(db, d.host, d.room_id)
    item = await add_flag(
        db, room, "high", server.clock.now() - timedelta(hours=1), "asked for a person three times"
    )
    operator = await make_operator(db, server.client(), "opsjane")

    # The brand watches its pane: its question and the agent's first answer.
    brand = await _visitor_page(server, new_context, d.visitor, d.room_id)
    mine = own_pane(brand)
    await mine.get_by_text(ASKED).wait_for()
    await mine.locator(".msg.agent").first.wait_for()

    # The operator finds the room through the queue.
    ops = await (await new_context(PHONE)).new_page()
    await open_page(ops, f"{server.base_url}/ops")
    await sign_in(ops, "opsjane")
    await ops.get_by_role("heading", name="Rooms").wait_for()
    await ops.get_by_role("link", name="Queue").click()
    flagged = ops.locator(f'li.queue-item[data-item-id="{item}"]')
    await flagged.get_by_text("asked for a person three times").wait_for()
    await fits_the_phone(ops)
    await flagged.get_by_role("link").click()
    await ops.wait_for_url(f"**/ops/rooms/{d.room_id}")

    # Both panes, read before acting.
    visitor_log = ops.get_by_role("log", name="visitor pane")
    await visitor_log.get_by_text(ASKED).wait_for()
    assert await visitor_log.locator("li").count() >= 2  # the brand's line and the agent's
    await ops.get_by_role("log", name="host pane").wait_for()

    # Take over the visitor pane: its agent's last plan is shown; answer; release.
    seat = ops.locator('.takeover-seat[data-seat="VISITOR"]')
    await seat.get_by_role("button", name="Take over the visitor pane").click()
    await seat.get_by_text("Its agent's last plan:").wait_for()
    await seat.get_by_label("Say as operator in the visitor pane").fill(ANSWER)
    await seat.get_by_role("button", name="Post as operator").click()
    await seat.locator('[data-author="OPERATOR"]').get_by_text(ANSWER).wait_for()
    await fits_the_phone(ops)

    # Live on the brand's page: the answer is the agent's line, nothing says "operator".
    answer = mine.locator(".msg", has_text=ANSWER)
    await answer.wait_for()
    assert await answer.locator(".who").inner_text() == "Agent"
    assert "agent" in (await answer.get_attribute("class") or "").split()

    async def no_operator_anywhere() -> bool:
        text = await brand.locator("body").inner_text()
        marked = await brand.locator(".operator, [data-author='OPERATOR']").count()
        return "operator" not in text.lower() and marked == 0

    assert await no_operator_anywhere(), await brand.locator("body").inner_text()

    await seat.get_by_role("button", name="Release the visitor pane").click()
    await seat.get_by_role("button", name="Take over the visitor pane").wait_for()
    released = mine.locator(".msg.system", has_text=RELEASED)
    await released.wait_for()
    lines = [t.strip() for t in await mine.locator(".msg .body").all_inner_texts()]
    assert lines.index(ANSWER) < lines.index(RELEASED), lines
    assert await no_operator_anywhere(), await brand.locator("body").inner_text()

    # The pane is the agent's again: the brand's next line is answered by it.
    agent_lines = await mine.locator(".msg.agent").count()
    await say(brand, "Great, the 12th and the 19th then.")
    await settle(server)

    async def answered() -> bool:
        return await mine.locator(".msg.agent").count() > agent_lines

    await until(answered, "the agent to answer after the release")
    assert await no_operator_anywhere(), await brand.locator("body").inner_text()

    # Back to the queue: resolve the item with a note; it leaves the queue.
    await ops.get_by_role("link", name="Queue").click()
    await flagged.get_by_role("textbox", name="Resolution note").fill("Answered as the agent.")
    await flagged.get_by_role("button", name="Resolve").click()
    await flagged.wait_for(state="detached")

    async def not_queued() -> bool:
        nodes = (await operator.query(QUEUE, {"first": 50}))["opsQueue"]["nodes"]
        return item not in {n["id"] for n in nodes}

    await until(not_queued, "the item to leave the queue")

    # The room keeps it, resolved: on its page and in queueHistory.
    await open_page(ops, f"{server.base_url}/ops/rooms/{d.room_id}")
    history_list = ops.get_by_role("list", name="Resolved queue items")
    await history_list.get_by_text("Answered as the agent.").wait_for()
    assert "@opsjane" in await history_list.inner_text()
    await fits_the_phone(ops)
    history = (await operator.query(HISTORY, {"room": d.room_id}))["opsRoom"]["queueHistory"]
    resolved = [n for n in history["nodes"] if n["id"] == item]
    assert resolved == [
        {
            "id": item,
            "kind": "FLAG",
            "note": "Answered as the agent.",
            "resolvedBy": "opsjane",
            "assignee": None,
        }
    ], history
    assert offline.blocked == [], offline.blocked
