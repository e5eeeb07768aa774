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


async def test_a_teammate_follows_its_own_pane_not_its_leads(server: Server) -> None:
    """A colleague who joins the buyer's side hears of the room, then of its own pane only:
    the lead's pane is not its business (access R3), not even as a hint that it moved."""
    from tests.e2e.test_invitations import ACCEPT, INVITE, token_of

    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    buyer = server.client()
    await sign_up(buyer, "acme", "Acme Brand")
    room_id = (await open_room(buyer, "mara"))["room"]["id"]
    colleague = server.client()
    account = (await sign_up(colleague, "lee", "Lee Legal"))["account"]
    async with subscribe(server.ws_url, ROOM_EVENTS, {}, init=ws_init_for(colleague)) as sub:
        assert (await _activity(sub))["kind"] == "RESYNC"
        await until_listening(server.broker, str(account["id"]))
        invited = await buyer.query(INVITE, {"roomId": room_id, "email": "lee@example.com"})
        token = token_of(invited["inviteToRoom"]["link"])
        await colleague.query(ACCEPT, {"token": token})
        assert await _activity(sub) == {"kind": "NEW_ROOM", "roomId": room_id, "cursor": None}
        await until_listening(server.broker, f"pane:{room_id}:visitor_2")

        lead = await post(buyer, room_id, "from the lead's pane")
        own = await post(colleague, room_id, "from my own pane")
        # Its own pane's lines come (the agent's greeting may be among them), never the lead's.
        heard = [await _activity(sub)]
        while heard[-1]["cursor"] != own["cursor"]:
            heard.append(await _activity(sub))

    assert {a["kind"] for a in heard} == {"MESSAGE"}
    assert lead["cursor"] not in [a["cursor"] for a in heard]


async def test_the_host_hears_a_teammate_join_and_then_its_pane(server: Server) -> None:
    from tests.e2e.test_invitations import ACCEPT, INVITE, token_of

    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    buyer = server.client()
    await sign_up(buyer, "acme", "Acme Brand")
    room_id = (await open_room(buyer, "mara"))["room"]["id"]
    colleague = server.client()
    await sign_up(colleague, "lee", "Lee Legal")
    async with subscribe(server.ws_url, ROOM_EVENTS, {}, init=ws_init_for(host)) as sub:
        assert (await _activity(sub))["kind"] == "RESYNC"
        await until_listening(server.broker, f"pane:{room_id}:visitor")
        invited = await buyer.query(INVITE, {"roomId": room_id, "email": "lee@example.com"})
        await colleague.query(ACCEPT, {"token": token_of(invited["inviteToRoom"]["link"])})
        joined = await _activity(sub)
        await until_listening(server.broker, f"pane:{room_id}:visitor_2")
        own = await post(colleague, room_id, "from the colleague's pane")
        heard = [await _activity(sub)]  # the agent's greeting there may come first
        while heard[-1]["cursor"] != own["cursor"]:
            heard.append(await _activity(sub))

    assert joined == {"kind": "PEOPLE_CHANGED", "roomId": room_id, "cursor": None}
    assert heard[-1] == {"kind": "MESSAGE", "roomId": room_id, "cursor": own["cursor"]}
