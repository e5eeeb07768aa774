"""A subscription ends on the server when its client leaves: its stream's read is cancelled
and the stream closed (``resolvers/live.Guarded``, one task reads it), so the socket's
handler finishes and ``dealroom_subscriptions_open`` falls back to zero after every close.

A cancel of the stream's read that lands during its SUBSCRIBE on the shared pub/sub connection is
swallowed by redis-py, which would leave the subscription open until the server stops: the broker
runs its (un)subscribes to completion and re-raises the cancel after (``RedisBroker._uncut``)."""

from __future__ import annotations

import asyncio

from tests.conftest import Server
from tests.e2e.test_metrics import metered, scrape, value  # noqa: F401  # the fixture
from tests.support.graphql import PANE_EVENTS, post, subscribe, ws_init_for
from tests.support.offers import open_deal, settle

ROUNDS = 60
"""Subscribe-and-leave cycles; the lost cancel showed within 10-45 of them under load."""


async def open_now(server: Server) -> float:
    return value(
        await scrape(server, "scrape-me"), "dealroom_subscriptions_open", field="paneEvents"
    )


async def test_every_subscription_ends_when_its_client_leaves(metered: Server) -> None:  # noqa: F811
    server = metered
    d = await open_deal(server)
    await post(d.visitor, d.room_id, "We'd like a sponsored post")
    await settle(server)
    variables = {"roomId": d.room_id, "seat": "VISITOR"}
    for round_ in range(ROUNDS):
        async with subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(d.visitor)):
            for _ in range(200):
                if await open_now(server) >= 1:
                    break
                await asyncio.sleep(0.01)
        for _ in range(100):  # the close reaches the server a moment after the client leaves
            if await open_now(server) == 0:
                break
            await asyncio.sleep(0.05)
        assert await open_now(server) == 0, f"round {round_}: a subscription outlived its client"
