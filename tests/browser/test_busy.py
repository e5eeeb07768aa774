"""A server refusing a subscribe burst (UNAVAILABLE, from admission) tells the client when to come
back (``retryAfterSeconds``): the web client waits that long before it subscribes again, instead of
its 200 ms reconnect, and goes live once the server has room."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import WebSocketRoute
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.realtime import Broker
from dealroom.services.rooms import demo
from tests.browser.conftest import PHONE, NewContext, Offline
from tests.browser.support import own_pane, say, until
from tests.conftest import Server
from tests.e2e.test_subscription_admission import database_held, serving_admission
from tests.support.clock import ManualClock
from tests.support.graphql import PANE_EVENTS, open_room, sign_up, subscribe, ws_init_for

WAIT = 0.5
"""The admission wait: a refusal says to come back in 1-2 s (whole seconds)."""


@pytest.fixture
async def busy_server(
    settings: Settings,
    database_url: str,
    engine: AsyncEngine,  # the run's engine: its tables are emptied after the test
    broker: Broker,
    clock: ManualClock,
) -> AsyncIterator[Server]:
    """One subscription start-up at a time, a half-second wait for it."""
    async with serving_admission(
        settings, database_url, broker, clock, slots=1, wait=WAIT
    ) as running:
        yield running


@dataclass
class Frames:
    """Proxies the page's websockets to the server, noting when the page subscribes and
    when the server refuses; ``cut()`` drops the current connection."""

    subscribes: list[float] = field(default_factory=list)
    refusals: list[tuple[float, int]] = field(default_factory=list)
    """(when, retryAfterSeconds) of each UNAVAILABLE the server sent the page."""
    delivered: list[str] = field(default_factory=list)
    """Every data frame the server sent the page."""
    _current: WebSocketRoute | None = None

    def route(self, page_side: WebSocketRoute) -> None:
        server_side = page_side.connect_to_server()
        self._current = page_side

        def from_page(message: str | bytes) -> None:
            if isinstance(message, str) and json.loads(message).get("type") == "subscribe":
                self.subscribes.append(time.monotonic())
            server_side.send(message)

        def from_server(message: str | bytes) -> None:
            if isinstance(message, str):
                if '"data"' in message:
                    self.delivered.append(message)
                errors: list[dict[str, Any]] = (
                    json.loads(message).get("payload", {}).get("errors") or []
                    if '"errors"' in message
                    else []
                )
                for error in errors:
                    if error.get("extensions", {}).get("code") == "UNAVAILABLE":
                        retry = int(error["extensions"]["retryAfterSeconds"])
                        self.refusals.append((time.monotonic(), retry))
            page_side.send(message)

        page_side.on_message(from_page)
        server_side.on_message(from_server)

    async def cut(self) -> None:
        assert self._current is not None
        await self._current.close(code=1011, reason="cut by the test")


async def test_a_refused_subscribe_comes_back_after_the_servers_hint_and_goes_live(
    busy_server: Server, db: Db, new_context: NewContext, offline: Offline
) -> None:
    server = busy_server
    await server.seed_demo(db)
    frames = Frames()
    brand = await (await new_context(PHONE)).new_page()
    await brand.route_web_socket(re.compile(r".*/graphql$"), frames.route)
    await brand.goto(f"{server.base_url}/z/{demo.HANDLE}")
    pane = own_pane(brand)
    await pane.get_by_role("textbox", name="Message", exact=True).wait_for()

    async def subscribed() -> bool:
        return len(frames.subscribes) >= 1

    await until(subscribed, "the page subscribed")

    # Another reader's start-up takes the one slot and waits on the held database, so the
    # page's resubscribe after the cut is refused once its half-second wait is up.
    other = server.client()
    await sign_up(other, "ines", "Ines Ortega")
    room_id = (await open_room(other, demo.HANDLE))["room"]["id"]
    variables = {"roomId": room_id, "seat": "VISITOR"}
    async with contextlib.AsyncExitStack() as stack:
        async with database_held(server.state.settings.resolved_database_url):
            await stack.enter_async_context(
                subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(other))
            )
            await asyncio.sleep(0.2)  # the other start-up holds the slot
            seen = len(frames.subscribes)
            await frames.cut()

            async def refused() -> bool:
                return bool(frames.refusals)

            await until(refused, "the server refused the page's resubscribe")
            await asyncio.sleep(3.0)  # refused again (or waiting) while the hold lasts

        # Every refusal was followed by a subscribe no sooner than the hint said.
        async def came_back() -> bool:
            last_refusal = max(at for at, _ in frames.refusals)
            return any(at > last_refusal for at in frames.subscribes)

        await until(came_back, "the page subscribed again after the last refusal")
        for refused_at, retry in frames.refusals:
            again = min(at for at in frames.subscribes if at >= refused_at)
            assert again - refused_at >= retry - 0.1, (again - refused_at, retry)
        assert len(frames.subscribes) > seen

        # Live again: the next line reaches the page over its new subscription.
        await say(brand, "Still there?")

        async def live() -> bool:
            return any("Still there?" in frame for frame in frames.delivered)

        await until(live, "the new line over the resubscribed stream")
    assert offline.blocked == []
