"""Held subscriptions are re-checked together: a round's SQL does not grow with the subscriptions
(or sessions) held, and whatever takes a stream away without changing who the reader is (a seat
unbound, an API key revoked) still ends it within the interval, while an API key's stream that
stands goes on."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

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
from dealroom.services.ops import metrics
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.factories import written_offer
from tests.support.graphql import (
    PANE_EVENTS,
    Client,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.offers import OFFER_STAGE, open_deal
from tests.support.partners import REVOKE_KEY, create_key

RECHECK = 0.3
ROUNDS = 6
FROM_START = event_cursor(0)
PER_ROUND = 2
"""One round over held session subscriptions: the sessions' liveness (one ``IN``), the rooms'
seat bindings (one ``IN``)."""
SIGN_IN = """
mutation($input: SignInInput!) { signIn(input: $input) { token } }
"""


@pytest.fixture
async def quick(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """A server whose subscriptions re-check every 0.3 s (default 5 s)."""
    quick_settings = settings.model_copy(update={"subscription_recheck_seconds": RECHECK})
    async with serving(quick_settings, engine, broker, clock) as running:
        yield running


async def _held_by(
    server: Server, stack: contextlib.AsyncExitStack, hosts: list[Client], rooms: list[str], n: int
) -> None:
    """``n`` live pane subscriptions, spread over the hosts' sessions, the rooms and both
    seats, each past its replay (so held, and its set-up's statements done)."""
    for i in range(n):
        variables = {
            "roomId": rooms[i % len(rooms)],
            "seat": ("VISITOR", "HOST")[i % 2],
            "after": FROM_START,
        }
        init = ws_init_for(hosts[i % len(hosts)])
        sub = await stack.enter_async_context(
            subscribe(server.ws_url, PANE_EVENTS, variables, init=init)
        )
        with contextlib.suppress(TimeoutError):
            while True:  # replayed until quiet: the subscription is live
                await sub.next(timeout=0.1)
    # Quiet is not started on a loaded machine (a start-up queued for its slot sends nothing
    # for a while): wait until every one has authorised and counted itself open, so no
    # start-up's reads fall in the counted window.
    for _ in range(600):
        if _open_now() >= n:  # this test's are the only ones open then
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{n} subscriptions did not all start: {_open_now()} open")


def _open_now() -> float:
    return (
        metrics.REGISTRY.get_sample_value("dealroom_subscriptions_open", {"field": "paneEvents"})
        or 0.0
    )


async def _statements_in_rounds(counting: Callable[[], Any]) -> list[str]:
    # The last subscriptions' start-ups may still run on a loaded machine: wait for a window
    # with no replay read (a start-up's last step; a re-check, old or new, never replays).
    for _ in range(100):
        with counting() as settling:
            await asyncio.sleep(RECHECK)
        if not any("FROM messages" in s or "FROM offer_events" in s for s in settling):
            break
    with counting() as seen:
        await asyncio.sleep(RECHECK * ROUNDS)
    return list(seen)


@pytest.mark.parametrize("sessions", [1, 2])
async def test_a_recheck_round_costs_the_same_for_one_subscription_or_twenty(
    quick: Server, count_statements: Callable[[], Any], sessions: int
) -> None:
    host = quick.client()
    await sign_up(host, "mara", "Mara Ellison")
    hosts = [host]
    for _ in range(sessions - 1):
        again = quick.client()
        credentials = {"email": "mara@example.com", "password": "correct horse battery"}
        token = (await again.query(SIGN_IN, {"input": credentials}))["signIn"]["token"]
        hosts.append(again.bearer(token))
    rooms = []
    for _ in range(4):
        guest = quick.client()
        room_id = (await open_room(guest, "mara", new=True))["room"]["id"]
        await post(guest, room_id, "hello")
        rooms.append(room_id)

    async with contextlib.AsyncExitStack() as stack:
        await _held_by(quick, stack, hosts, rooms, 1)
        one = await _statements_in_rounds(count_statements)
    async with contextlib.AsyncExitStack() as stack:
        await _held_by(quick, stack, hosts, rooms, 20)
        twenty = await _statements_in_rounds(count_statements)

    # Per round, not per window: on a loaded machine a window of ROUNDS intervals held from
    # ROUNDS - 1 to ROUNDS + 1 rounds (one subscription 4 rounds, twenty 6: 8 against 12).
    for label, seen in (("one subscription", one), ("twenty", twenty)):
        rounds = sum("FROM sessions" in statement for statement in seen)
        counts = f"{label}: {len(seen)} statements in {rounds} rounds\n" + "\n".join(seen)
        assert rounds >= 2, counts
        # a round cut by either edge of the window counts in part
        assert len(seen) <= (rounds + 1) * PER_ROUND, counts
    assert len(twenty) <= (ROUNDS + 1) * PER_ROUND, f"{len(twenty)}\n" + "\n".join(twenty)


async def _unbound(db: Db, room_id: str, seat: str) -> None:
    """No mutation takes a seat from its holder: unbind it in the database, the way the
    re-check would see a participant removed."""
    await db.execute(
        update(Participant)
        .where(Participant.room_id == uuid.UUID(room_id), Participant.key == seat)
        .values(account_id=None, guest_key_hash=None)
    )
    await db.commit()


async def test_an_account_unbound_from_its_seat_ends_the_subscription_not_found(
    quick: Server, db: Db
) -> None:
    """The session stands and resolves to the same account; only the room changed."""
    host = quick.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = quick.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(quick.ws_url, PANE_EVENTS, variables, init=ws_init_for(host)) as sub:
        await post(guest, room_id, "hello")
        await sub.event()

        await _unbound(db, room_id, "host")

        payload = await sub.next(timeout=10)
        assert [e["extensions"]["code"] for e in payload["errors"]] == ["NOT_FOUND"]
        assert await sub.next() == {"complete": True}
        await sub.nothing_for(RECHECK * 3)
        assert sub.ws.close_code is None  # the session stands: the socket stays open


async def _partner_stream(server: Server) -> tuple[Client, str, dict[str, Any], dict[str, Any]]:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    created = await create_key(d.host, ["offers:read"])
    init = {"authorization": f"Bearer {created['key']}"}
    return d.host, created["apiKey"]["id"], init, {"offerId": offer_id, "after": FROM_START}


async def _first_stage(sub: Subscription) -> None:
    first = await sub.next()
    assert first.get("data"), first


async def test_an_api_key_subscription_outlives_its_rechecks(quick: Server) -> None:
    """An API key is not a session: the re-check reads it among the keys, not the sessions."""
    owner, _key_id, init, variables = await _partner_stream(quick)
    async with subscribe(quick.ws_url, OFFER_STAGE, variables, init=init) as sub:
        await _first_stage(sub)
        with contextlib.suppress(TimeoutError):
            while True:  # the offer's replayed stages, then silence through the re-checks
                await asyncio.wait_for(sub.next(), RECHECK * 5)
        assert (await owner.query("{ me { id } }"))["me"]["id"]  # nothing held the database
        await sub.nothing_for(RECHECK * 3)
        assert sub.ws.close_code is None


async def test_a_revoked_api_key_closes_its_subscription(quick: Server) -> None:
    owner, key_id, init, variables = await _partner_stream(quick)
    async with subscribe(quick.ws_url, OFFER_STAGE, variables, init=init) as sub:
        await _first_stage(sub)

        await owner.query(REVOKE_KEY, {"id": key_id})

        with pytest.raises(websockets.ConnectionClosed) as closed:
            await _drain(sub.ws, within=10)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == SESSION_ENDED


async def _drain(ws: websockets.ClientConnection, within: float) -> None:
    async with asyncio.timeout(within):
        while True:
            await ws.recv()
