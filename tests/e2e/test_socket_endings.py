"""signOut and an API key's revocation end the sockets that stood on them at once, through the
broker, in every server process: not at the next re-check round. The servers here re-check only
once an hour, so a socket closed within the test's wait was closed by the ending itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import websockets
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.realtime import Broker
from dealroom.resolvers.live import SESSION_ENDED
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.factories import written_offer
from tests.support.graphql import (
    EVENT_SECONDS,
    PANE_EVENTS,
    Client,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.offers import OFFER_STAGE, open_deal
from tests.support.partners import REVOKE_KEY, create_key
from tests.support.processes import free_port, serve, wait_healthy

HOURLY = 3600.0
SIGN_OUT = "mutation { signOut }"
FROM_START = event_cursor(0)


@pytest.fixture
async def hourly(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """A server whose periodic re-check would come only after an hour."""
    slow = settings.model_copy(update={"subscription_recheck_seconds": HOURLY})
    async with serving(slow, engine, broker, clock) as running:
        await asyncio.wait_for(running.state.rechecks.listening(), EVENT_SECONDS)
        yield running


async def _closed_code(ws: websockets.ClientConnection) -> int | None:
    async def drain() -> None:
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                await ws.recv()

    with pytest.raises(websockets.ConnectionClosed) as closed:
        await drain()
    return closed.value.rcvd.code if closed.value.rcvd else None


async def test_sign_out_closes_the_sessions_socket_at_once(hourly: Server) -> None:
    host = hourly.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = hourly.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(hourly.ws_url, PANE_EVENTS, variables, init=ws_init_for(host)) as sub:
        await post(guest, room_id, "live?")
        assert (await sub.event())["message"]["body"] == "live?"

        await host.query(SIGN_OUT)

        assert await _closed_code(sub.ws) == SESSION_ENDED


async def test_another_sessions_socket_stays_open(hourly: Server) -> None:
    host = hourly.client()
    await sign_up(host, "mara", "Mara Ellison")
    other_device = hourly.client()
    await other_device.query(
        'mutation { signIn(input: {email: "mara@example.com", password: '
        '"correct horse battery"}) { token } }'
    )
    other_device.headers["Authorization"] = (
        "Bearer " + other_device.http.cookies["dealroom_session"]
    )
    guest = hourly.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
    async with subscribe(
        hourly.ws_url, PANE_EVENTS, variables, init=ws_init_for(other_device)
    ) as sub:
        await host.query(SIGN_OUT)
        await post(guest, room_id, "still here")

        assert (await sub.event())["message"]["body"] == "still here"


async def test_revoking_an_api_key_closes_its_socket_at_once(hourly: Server) -> None:
    d = await open_deal(hourly)
    offer_id = await written_offer(hourly, d.room_id)
    created = await create_key(d.host, ["offers:read"])
    init = {"authorization": f"Bearer {created['key']}"}
    variables = {"offerId": offer_id, "after": FROM_START}
    async with subscribe(hourly.ws_url, OFFER_STAGE, variables, init=init) as sub:
        assert (await sub.next()).get("data"), "the key's stream is live"

        await d.host.query(REVOKE_KEY, {"id": created["apiKey"]["id"]})

        assert await _closed_code(sub.ws) == SESSION_ENDED


@pytest.fixture
async def two_hourly_servers(
    database_url: str, engine: AsyncEngine, tmp_path: Path
) -> AsyncIterator[tuple[str, str]]:
    del engine  # migrated by the session fixture
    ports = free_port(), free_port()
    logs = [(tmp_path / f"server-{port}.log").open("wb") for port in ports]
    hourly = {"subscription_recheck_seconds": str(HOURLY)}
    with (
        serve(database_url, ports[0], logs[0], **hourly) as a,
        serve(database_url, ports[1], logs[1], **hourly) as b,
    ):
        urls = f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"
        await wait_healthy(urls[0], a)
        await wait_healthy(urls[1], b)
        yield urls
    for log in logs:
        log.close()
        print(Path(log.name).read_text())  # noqa: ASYNC240  # shown when the test fails


async def test_sign_out_in_one_process_closes_the_socket_held_by_another(
    two_hourly_servers: tuple[str, str],
) -> None:
    url_a, url_b = two_hourly_servers
    async with (
        httpx.AsyncClient(base_url=url_a) as http_a,
        httpx.AsyncClient(base_url=url_b) as http_b,
    ):
        host_on_b = Client(http_b)
        await sign_up(host_on_b, "twoproc", "Two Proc")
        guest = Client(http_a)
        room_id = (await open_room(guest, "twoproc"))["room"]["id"]
        ws_a = url_a.replace("http", "ws") + "/graphql"
        variables = {"roomId": room_id, "seat": "VISITOR", "after": FROM_START}
        async with subscribe(ws_a, PANE_EVENTS, variables, init=ws_init_for(host_on_b)) as sub:
            await post(guest, room_id, "live on A")
            # The host's welcome (on by default in ``dealroom serve``) may come first.
            while (await sub.event())["message"]["body"] != "live on A":
                pass

            await host_on_b.query(SIGN_OUT)  # on B

            assert await _closed_code(sub.ws) == SESSION_ENDED
