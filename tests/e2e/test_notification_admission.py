"""``notificationEvents`` starts like every stream (services/live/admission.py): while the
database is held a start-up beyond the slots ends UNAVAILABLE with a retry hint instead of
queueing on the pool, and a socket acked with its credentials unchecked has them checked at its
first subscribe (a credential that is not valid closes the socket, 4401)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest
import websockets
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.realtime import Broker
from tests.conftest import Server
from tests.e2e.test_notification_api import EVENTS, _account, _notify
from tests.e2e.test_subscription_admission import database_held, serving_admission
from tests.support.clock import ManualClock
from tests.support.graphql import subscribe, until_listening, ws_init_for

HOLD_SECONDS = 3.0


@pytest.fixture
async def admitting(
    settings: Settings,
    database_url: str,
    engine: AsyncEngine,  # the run's engine: its tables are emptied after the test
    broker: Broker,
    clock: ManualClock,
) -> AsyncIterator[Server]:
    async with serving_admission(
        settings, database_url, broker, clock, slots=1, wait=0.5, pool_timeout=2.0
    ) as running:
        yield running


async def test_a_start_up_past_the_slots_is_refused_then_goes_live(admitting: Server) -> None:
    server = admitting
    dev, dev_id = await _account(server, "devraman")
    async with contextlib.AsyncExitStack() as stack:
        async with database_held(server.state.settings.resolved_database_url):
            # The first socket's credential check takes the one slot and waits on the hold.
            first = await stack.enter_async_context(
                subscribe(server.ws_url, EVENTS, {}, init=ws_init_for(dev))
            )
            await asyncio.sleep(0.2)
            second = await stack.enter_async_context(
                subscribe(server.ws_url, EVENTS, {}, init=ws_init_for(dev))
            )
            refused = await second.next(timeout=HOLD_SECONDS)
            assert [e["extensions"]["code"] for e in refused["errors"]] == ["UNAVAILABLE"]
            assert refused["errors"][0]["extensions"]["retryAfterSeconds"] >= 1
        # The hold is over: the first stream started, and delivers.
        await until_listening(server.broker, str(dev_id))
        await _notify(server, dev_id, 1)
        payload = await first.next()
        assert payload["data"]["notificationEvents"]["notification"]["title"] == "Update 1"


async def test_credentials_left_unchecked_are_checked_at_the_first_subscribe(
    admitting: Server,
) -> None:
    server = admitting
    dev, _ = await _account(server, "devraman")
    bogus = {"authorization": f"Bearer {uuid.uuid4().hex}{uuid.uuid4().hex}"}
    async with contextlib.AsyncExitStack() as stack:
        async with database_held(server.state.settings.resolved_database_url):
            # The slot is taken by another socket's check: this one is acked unchecked.
            await stack.enter_async_context(
                subscribe(server.ws_url, EVENTS, {}, init=ws_init_for(dev))
            )
            await asyncio.sleep(0.2)
            unchecked = await stack.enter_async_context(
                subscribe(server.ws_url, EVENTS, {}, init=bogus)
            )
            first = await unchecked.next(timeout=HOLD_SECONDS)
            assert [e["extensions"]["code"] for e in first["errors"]] == ["UNAVAILABLE"]
        # Subscribing again once the database is free checks the credentials: not valid.
        await unchecked.ws.send(
            '{"id": "again", "type": "subscribe", "payload": {"query": '
            '"subscription { notificationEvents { unreadCount } }"}}'
        )
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await _drain(unchecked.ws)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4401


async def _drain(ws: websockets.ClientConnection) -> None:
    """Read until the server closes the socket."""
    while True:
        await asyncio.wait_for(ws.recv(), HOLD_SECONDS)
