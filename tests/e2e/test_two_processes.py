"""Two `dealroom serve` processes on one database and one Redis deliver each other's events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.cursors import event_cursor
from tests.support.graphql import (
    PANE_EVENTS,
    Client,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.processes import free_port, serve, wait_healthy


@pytest.fixture
async def two_servers(
    database_url: str, engine: AsyncEngine, tmp_path: Path
) -> AsyncIterator[tuple[str, str]]:
    del engine  # migrated by the session fixture
    ports = free_port(), free_port()
    logs = [(tmp_path / f"server-{port}.log").open("wb") for port in ports]
    with serve(database_url, ports[0], logs[0]) as a, serve(database_url, ports[1], logs[1]) as b:
        urls = f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"
        await wait_healthy(urls[0], a)
        await wait_healthy(urls[1], b)
        yield urls
    for log in logs:
        log.close()
        # Shown by pytest when the test fails.
        print(Path(log.name).read_text())  # noqa: ASYNC240  # teardown, once


async def test_events_cross_between_two_server_processes(two_servers: tuple[str, str]) -> None:
    url_a, url_b = two_servers
    async with (
        httpx.AsyncClient(base_url=url_a) as http_a,
        httpx.AsyncClient(base_url=url_b) as http_b,
    ):
        host = Client(http_a)
        await sign_up(host, "twoproc", "Two Proc")
        guest = Client(http_b)
        opened = await open_room(guest, "twoproc")
        room_id = opened["room"]["id"]
        ws_a = url_a.replace("http", "ws") + "/graphql"
        ws_b = url_b.replace("http", "ws") + "/graphql"
        # From the pane's start: a subscription a busy machine opened only after a post
        # replays it instead of starting past it; the welcome comes first.
        watch = {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}
        # The host watches on A; the guest writes on B — and the other way round.
        async with (
            subscribe(ws_a, PANE_EVENTS, watch, init=ws_init_for(host)) as on_a,
            subscribe(ws_b, PANE_EVENTS, watch, init=ws_init_for(guest)) as on_b,
        ):
            await asyncio.sleep(0.3)
            via_b = await post(guest, room_id, "written on B")
            async with httpx.AsyncClient(base_url=url_a) as guest_on_a:
                # The same guest (its key), through the other process.
                via_a = await post(Client(guest_on_a, dict(guest.headers)), room_id, "written on A")
            seen_a = await on_a.events(3, timeout=10)
            seen_b = await on_b.events(3, timeout=10)
    assert seen_a[0]["message"]["id"] == seen_b[0]["message"]["id"]  # the welcome
    assert [e["message"]["id"] for e in seen_a[1:]] == [via_b["id"], via_a["id"]]
    assert [e["message"]["id"] for e in seen_b[1:]] == [via_b["id"], via_a["id"]]
