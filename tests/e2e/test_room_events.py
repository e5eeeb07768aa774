"""``roomEvents``: the host's room list, live, so the web client need not poll it: a new room,
a message in a pane the host reads, each named by room; RESYNC first; signing out closes it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import websockets

from dealroom.resolvers.live import SESSION_ENDED
from tests.conftest import Server
from tests.support.graphql import (
    EVENT_SECONDS,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    until_listening,
    ws_init_for,
)

ROOM_EVENTS = "subscription { roomEvents { kind roomId cursor } }"


async def _activity(sub: Subscription) -> dict[str, Any]:
    payload = await sub.next()
    assert not payload.get("errors"), payload
    activity: dict[str, Any] = payload["data"]["roomEvents"]
    return activity


async def test_a_new_room_and_its_messages_reach_the_hosts_room_list(server: Server) -> None:
    host = server.client()
    account = (await sign_up(host, "mara", "Mara Ellison"))["account"]
    async with subscribe(server.ws_url, ROOM_EVENTS, {}, init=ws_init_for(host)) as sub:
        assert await _activity(sub) == {"kind": "RESYNC", "roomId": None, "cursor": None}
        await until_listening(server.broker, str(account["id"]))

        guest = server.client()
        room_id = (await open_room(guest, "mara"))["room"]["id"]
        assert await _activity(sub) == {"kind": "NEW_ROOM", "roomId": room_id, "cursor": None}
        await until_listening(server.broker, room_id)

        message = await post(guest, room_id, "hello")
        activity = await _activity(sub)

    assert activity == {"kind": "MESSAGE", "roomId": room_id, "cursor": message["cursor"]}


async def test_another_hosts_rooms_are_not_in_the_list(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    other = server.client()
    await sign_up(other, "other", "Other Host")
    async with subscribe(server.ws_url, ROOM_EVENTS, {}, init=ws_init_for(host)) as sub:
        await _activity(sub)  # RESYNC

        guest = server.client()
        room_id = (await open_room(guest, "other"))["room"]["id"]
        await post(guest, room_id, "for the other host")

        await sub.nothing_for(1.0)


async def test_an_anonymous_reader_is_refused(server: Server) -> None:
    async with subscribe(server.ws_url, ROOM_EVENTS, {}) as sub:
        payload = await sub.next()

    assert [e["extensions"]["code"] for e in payload["errors"]] == ["UNAUTHENTICATED"]


async def test_sign_out_closes_the_room_list_stream(server: Server) -> None:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    async with subscribe(server.ws_url, ROOM_EVENTS, {}, init=ws_init_for(host)) as sub:
        await _activity(sub)  # RESYNC: following
        await host.query("mutation { signOut }")

        async def drain() -> None:
            async with asyncio.timeout(EVENT_SECONDS):
                while True:
                    await sub.ws.recv()

        with pytest.raises(websockets.ConnectionClosed) as closed:
            await drain()

    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == SESSION_ENDED
