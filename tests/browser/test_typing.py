"""The typing indicator and the streamed reply, frame by frame: a proxy between the page and
the server holds the reply's frames back, so each state is on screen long enough to see —
the typing dots after AgentTyping, the growing text after each MessageDelta, then one stored
line after MessageAdded."""

from __future__ import annotations

import asyncio
import json
import re

from playwright.async_api import WebSocketRoute

from dealroom.persistence.db import Db
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext
from tests.browser.support import own_pane, say, until
from tests.conftest import Server
from tests.support.offers import BID, OPENING


class Gate:
    """Forwards the server's frames to the page, except that once armed it queues every
    frame from the first AgentTyping on, to be released one at a time by the test."""

    def __init__(self) -> None:
        self.armed = False
        self.holding = False
        self.held: asyncio.Queue[str] = asyncio.Queue()
        self._page_side: WebSocketRoute | None = None

    def route(self, page_side: WebSocketRoute) -> None:
        self._page_side = page_side
        server_side = page_side.connect_to_server()

        def from_server(message: str | bytes) -> None:
            text = message if isinstance(message, str) else message.decode()
            if self.armed and '"AgentTyping"' in text:
                self.armed = False
                self.holding = True
            if self.holding:
                self.held.put_nowait(text)
            else:
                page_side.send(message)

        server_side.on_message(from_server)

    async def release(self) -> str:
        """Send the next held frame on; returns its event type."""
        text = await asyncio.wait_for(self.held.get(), 30)
        assert self._page_side is not None
        self._page_side.send(text)
        payload = json.loads(text).get("payload", {})
        event: dict[str, object] = next(iter((payload.get("data") or {}).values()), {}) or {}
        return str(event.get("__typename", json.loads(text).get("type")))


async def test_typing_dots_then_the_streamed_text_then_one_line(
    agent_server: Server, db: Db, new_context: NewContext
) -> None:
    server = agent_server
    await server.seed_demo(db)
    gate = Gate()
    page = await (await new_context(PHONE)).new_page()
    await page.route_web_socket(re.compile(r".*/graphql$"), gate.route)
    await page.goto(f"{server.base_url}/z/{demo.HANDLE}")
    pane = own_pane(page)
    await pane.get_by_role("textbox", name="Message", exact=True).wait_for()

    # A first exchange, so the pane's stream is established (resumed from a stored cursor).
    await say(page, OPENING.format(upfront="50% upfront"))
    await server.settle()
    await pane.locator(".msg.agent").first.wait_for()

    gate.armed = True
    await say(page, BID)
    await server.settle()  # the reply is stored; the page has seen none of it yet

    assert await gate.release() == "AgentTyping"
    dots = pane.get_by_label("The agent is typing")
    await dots.wait_for()
    assert await pane.locator(".msg.agent[data-message-id]").count() == 1  # the first only

    deltas = 0
    draft = pane.locator("[data-draft-id] .body")
    streamed = ""
    while (kind := await gate.release()) == "MessageDelta":
        deltas += 1

        async def grew(before: str = streamed) -> bool:
            return await draft.count() == 1 and await draft.inner_text() != before

        await until(grew, "the draft to show the delta")  # the text so far, not the dots
        streamed = await draft.inner_text()
        assert await dots.count() == 0
    assert deltas > 0, "the reply was not streamed"
    assert kind == "MessageAdded"
    line = pane.locator(".msg.agent[data-message-id]").nth(1)
    await line.wait_for()
    # The stored line replaces the draft: one agent line, with the text that streamed.
    assert await pane.locator("[data-draft-id]").count() == 0
    assert await pane.locator(".msg.agent[data-message-id]").count() == 2
    assert await line.locator(".body").inner_text() == streamed
