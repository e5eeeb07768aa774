"""Subscriptions that really end: signOut and expiry close the socket with 4401; a revoked act-as
edge ends the operation FORBIDDEN; a guest key that no longer holds the pane's seat ends the
operation NOT_FOUND (the socket, which has no session, stays open)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
import websockets
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant
from dealroom.realtime import Broker
from dealroom.resolvers.live import SESSION_ENDED
from dealroom.services.accounts.identity import digest, new_guest_key
from dealroom.services.accounts.service import revoke_manager
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import (
    LEGACY_WS,
    PANE_EVENTS,
    TRANSPORT_WS,
    Client,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.rooms import grant

RECHECK = 0.3
FROM_START = event_cursor(0)
"""Subscribing from the pane's start: nothing posted while the subscription starts is missed."""
SIGN_OUT = "mutation { signOut }"


@pytest.fixture
async def quick(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """A server whose subscriptions re-check every 0.3 s (default 5 s)."""
    quick_settings = settings.model_copy(update={"subscription_recheck_seconds": RECHECK})
    async with serving(quick_settings, engine, broker, clock) as running:
        yield running


async def _host_room(server: Server) -> tuple[Client, Client, str]:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    return host, guest, room_id


async def _closed_code(sub_ws: websockets.ClientConnection, within: float) -> int | None:
    async def drain() -> None:
        async with asyncio.timeout(within):
            while True:
                await sub_ws.recv()

    with pytest.raises(websockets.ConnectionClosed) as closed:
        await drain()
    return closed.value.rcvd.code if closed.value.rcvd else None


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_sign_out_closes_a_live_subscription_with_4401(quick: Server, protocol: str) -> None:
    host, guest, room_id = await _host_room(quick)
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(
        quick.ws_url, PANE_EVENTS, variables, protocol=protocol, init=ws_init_for(host)
    ) as sub:
        await post(guest, room_id, "still open?")
        assert (await sub.event())["message"]["body"] == "still open?"

        await host.query(SIGN_OUT)

        assert await _closed_code(sub.ws, within=10) == SESSION_ENDED


async def test_an_expired_session_closes_its_subscription(quick: Server) -> None:
    host, guest, room_id = await _host_room(quick)
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(quick.ws_url, PANE_EVENTS, variables, init=ws_init_for(host)) as sub:
        await post(guest, room_id, "hello")
        await sub.event()  # the subscription is live

        quick.clock.advance(timedelta(days=31))  # past DEALROOM_SESSION_TTL_DAYS

        assert await _closed_code(sub.ws, within=10) == SESSION_ENDED


async def test_a_revoked_act_as_edge_ends_the_subscription_forbidden(quick: Server, db: Db) -> None:
    _talent, guest, room_id = await _host_room(quick)
    agency = quick.client()
    await sign_up(agency, "agency", "Agency")
    await grant(db, "agency", "mara")
    talent_id = (await quick.client().query('{ account(handle: "mara") { id } }'))["account"]["id"]
    agency.headers["X-Act-As"] = talent_id
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(quick.ws_url, PANE_EVENTS, variables, init=ws_init_for(agency)) as sub:
        await post(guest, room_id, "hello")
        await sub.event()

        await revoke_manager(db, manager_handle="agency", managed_handle="mara")
        await db.commit()

        payload = await sub.next(timeout=10)

    assert [e["extensions"]["code"] for e in payload["errors"]] == ["FORBIDDEN"]


async def test_a_live_session_keeps_its_subscription(quick: Server) -> None:
    host, guest, room_id = await _host_room(quick)
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(quick.ws_url, PANE_EVENTS, variables, init=ws_init_for(host)) as sub:
        await asyncio.sleep(RECHECK * 5)  # several re-checks pass
        await post(guest, room_id, "after the re-checks")

        assert (await sub.event())["message"]["body"] == "after the re-checks"


async def _guest_events(sub: Subscription, body: str) -> None:
    """Read the guest's stream until the message ``body`` (a claim's LoginRequiredChanged may
    come first)."""
    while True:
        event = await sub.event()
        if event.get("message", {}).get("body") == body:
            return


async def test_a_claimed_room_keeps_the_claiming_accounts_subscription(quick: Server) -> None:
    """After the claim the account holds the visitor seat (R1) and its old guest key none (R7;
    that key's own streams end: tests/e2e/test_claimed_guest_key.py). A socket presenting both,
    as the signed-up browser does (docs/DECISIONS.md, "Identity from headers and cookies"),
    passes the re-checks."""
    _host, guest, room_id = await _host_room(quick)
    await post(guest, room_id, "before the claim")
    await sign_up(guest, "glowlabs", "Glow Labs")  # claims the guest key's room
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(quick.ws_url, PANE_EVENTS, variables, init=ws_init_for(guest)) as sub:
        await _guest_events(sub, "before the claim")

        await asyncio.sleep(RECHECK * 5)  # several re-checks pass
        await post(guest, room_id, "after the claim")

        await _guest_events(sub, "after the claim")


async def test_a_guest_key_that_lost_its_seat_ends_the_subscription_not_found(
    quick: Server, db: Db
) -> None:
    _host, guest, room_id = await _host_room(quick)
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(quick.ws_url, PANE_EVENTS, variables, init=ws_init_for(guest)) as sub:
        await post(guest, room_id, "hello")
        await sub.event()  # the subscription is live

        # No mutation takes a seat from a guest key (R4: a key holds the seats bound to it):
        # re-key the visitor seat in the database, the way the re-check would see it.
        await db.execute(
            update(Participant)
            .where(Participant.room_id == uuid.UUID(room_id), Participant.key == "visitor")
            .values(guest_key_hash=digest(new_guest_key()))
        )
        await db.commit()

        payload = await sub.next(timeout=10)
        assert [e["extensions"]["code"] for e in payload["errors"]] == ["NOT_FOUND"]
        # Only the operation ended: a guest key is not a session, so no 4401 close.
        assert await sub.next() == {"complete": True}
        await sub.nothing_for(RECHECK * 3)
        assert sub.ws.close_code is None
