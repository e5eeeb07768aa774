"""A websocket dropped in the middle of the agent's reply: the client reconnects, resubscribes
after the last stored cursor it showed, and the pane ends with every stored message exactly
once — the reply that was streaming when the connection died included, its draft gone."""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import WebSocketRoute

from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.support import own_pane, say, shown_ids, shows_the_stored_pane, stored_ids
from tests.conftest import Server
from tests.support.offers import AGREE, BID, OPENING


class Cutter:
    """Proxies the page's websockets to the server; when armed, forwards the first
    MessageDelta of a reply and then drops the connection (both sides)."""

    def __init__(self) -> None:
        self.armed = False
        self.dropped = asyncio.Event()
        self.connections = 0
        self._tasks: list[asyncio.Task[None]] = []

    def route(self, page_side: WebSocketRoute) -> None:
        self.connections += 1
        server_side = page_side.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if self.armed and isinstance(message, str) and '"MessageDelta"' in message:
                self.armed = False
                page_side.send(message)  # the page has begun showing the reply
                self._tasks.append(asyncio.ensure_future(self._cut(page_side, server_side)))
                return
            page_side.send(message)

        server_side.on_message(from_server)

    async def _cut(self, page_side: WebSocketRoute, server_side: WebSocketRoute) -> None:
        await page_side.close(code=1011, reason="cut by the test")
        await server_side.close()
        self.dropped.set()


async def test_a_dropped_websocket_mid_reply_resumes_without_loss_or_duplicate(
    agent_server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    server = agent_server
    await server.seed_demo(db)
    cutter = Cutter()
    brand = await (await new_context(PHONE)).new_page()
    await brand.route_web_socket(re.compile(r".*/graphql$"), cutter.route)
    await brand.goto(f"{server.base_url}/z/{demo.HANDLE}")
    pane = own_pane(brand)
    await pane.get_by_role("textbox", name="Message", exact=True).wait_for()
    room_id = brand.url.rsplit("/", 1)[1]

    await say(brand, OPENING.format(upfront="50% upfront"))
    await server.settle()
    await shows_the_stored_pane(pane, db, room_id, Seat.VISITOR)

    cutter.armed = True
    await say(brand, BID)
    await asyncio.wait_for(cutter.dropped.wait(), 30)
    # Mid-reply: the page shows the reply's draft, and the connection is gone.
    await pane.locator("[data-draft-id]").wait_for(state="attached")
    draft_id = await pane.locator("[data-draft-id]").first.get_attribute("data-draft-id")

    await server.settle()
    await shows_the_stored_pane(pane, db, room_id, Seat.VISITOR)
    assert draft_id in await stored_ids(db, room_id, Seat.VISITOR)
    assert (await shown_ids(pane)).count(draft_id) == 1
    assert await pane.locator("[data-draft-id]").count() == 0
    assert cutter.connections >= 2  # it reconnected

    # Live again: the next exchange arrives without a reload.
    await say(brand, AGREE)
    await server.settle()
    await shows_the_stored_pane(pane, db, room_id, Seat.VISITOR)
    assert offline.blocked == []
