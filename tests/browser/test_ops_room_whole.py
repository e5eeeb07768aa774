"""An operator reads a room whole on a phone (390×844): both panes' transcripts, the memory and
its history, the dispatch record; the page stays phone-wide, and the read is recorded."""

from __future__ import annotations

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import OperatorRead
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.test_ops import fits_the_phone, open_page, sign_in
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.offers import open_deal, settle
from tests.support.partners import make_operator


async def test_an_operator_reads_both_panes_and_the_memory_of_a_room(
    server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "Hi! We'd like a sponsored post next month.")
    await settle(server)
    await make_operator(db, server.client(), "opsjane")

    page = await (await new_context(PHONE)).new_page()
    await open_page(page, f"{server.base_url}/ops")
    await sign_in(page, "opsjane")
    await page.get_by_role("heading", name="Rooms").wait_for()
    await open_page(page, f"{server.base_url}/ops/rooms/{d.room_id}")
    visitor = page.get_by_role("log", name="visitor pane")
    await visitor.get_by_text("We'd like a sponsored post next month").wait_for()
    assert await visitor.locator("li").count() >= 2  # the visitor's line and the agent's answer
    await page.get_by_role("log", name="host pane").wait_for()
    memory = await page.locator(".ops-memory").inner_text()
    assert memory.strip().startswith("{")
    await page.get_by_role("heading", name="Dispatch record").wait_for()
    await fits_the_phone(page)

    found = list(await db.scalars(select(OperatorRead)))
    await db.close()
    assert any("transcript:visitor" in r.what and "memory" in r.what for r in found)


async def test_an_operator_reads_a_teammates_pane_too(
    server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    from tests.support.graphql import sign_up
    from tests.support.team import seat_member

    d = await open_deal(server)
    colleague = server.client()
    lee = (await sign_up(colleague, "leelegal", "Lee Legal"))["account"]
    await seat_member(db, d.room_id, "visitor_2", lee["id"])
    await post(colleague, d.room_id, "Legal here: six months of usage rights at most.")
    await settle(server)
    await make_operator(db, server.client(), "opsjane")

    page = await (await new_context(PHONE)).new_page()
    await open_page(page, f"{server.base_url}/ops")
    await sign_in(page, "opsjane")
    await page.get_by_role("heading", name="Rooms").wait_for()
    await open_page(page, f"{server.base_url}/ops/rooms/{d.room_id}")
    teammate = page.get_by_role("log", name="visitor_2 pane")
    await teammate.get_by_text("six months of usage rights at most").wait_for()
    await fits_the_phone(page)
