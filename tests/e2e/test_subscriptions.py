"""Live panes over both websocket protocols, resumable from a cursor."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import Server
from tests.support.gate import sign_up_here
from tests.support.graphql import (
    LEGACY_WS,
    PANE_EVENTS,
    TRANSPORT_WS,
    Client,
    open_room,
    post,
    sign_up,
    subscribe,
    until_listening,
    ws_init_for,
)


async def _deal(server: Server) -> tuple[Client, Client, str]:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    opened = await open_room(guest, "mara")
    return host, guest, opened["room"]["id"]


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_a_posted_message_arrives_live_in_its_pane(server: Server, protocol: str) -> None:
    _host, guest, room_id = await _deal(server)
    variables = {"roomId": room_id, "seat": "VISITOR"}
    async with subscribe(
        server.ws_url, PANE_EVENTS, variables, protocol=protocol, init=ws_init_for(guest)
    ) as sub:
        await until_listening(server.broker, room_id)
        sent = await post(guest, room_id, "Can you do a post for $4,000?")
        event = await sub.event()
    assert event["__typename"] == "MessageAdded"
    assert event["message"]["id"] == sent["id"]
    assert event["cursor"] == sent["cursor"]
    assert event["message"]["alignment"] == "RIGHT"


async def test_the_host_watching_the_visitor_pane_sees_it_from_its_side(server: Server) -> None:
    host, guest, room_id = await _deal(server)
    async with subscribe(
        server.ws_url,
        PANE_EVENTS,
        {"roomId": room_id, "seat": "VISITOR"},
        init=ws_init_for(host),
    ) as sub:
        await until_listening(server.broker, room_id)
        await post(guest, room_id, "hello")
        event = await sub.event()
    # seed 002 layer 5: the visitor is on the left when the host reads the visitor's pane.
    assert event["message"]["alignment"] == "LEFT"


async def test_a_pane_subscription_sees_only_its_own_pane(server: Server) -> None:
    host, guest, room_id = await _deal(server)
    async with subscribe(
        server.ws_url, PANE_EVENTS, {"roomId": room_id, "seat": "VISITOR"}, init=ws_init_for(guest)
    ) as sub:
        await until_listening(server.broker, room_id)
        await post(host, room_id, "private note to my agent")
        await sub.nothing_for(0.5)


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_a_visitor_cannot_subscribe_to_the_host_pane(server: Server, protocol: str) -> None:
    _, guest, room_id = await _deal(server)
    async with subscribe(
        server.ws_url,
        PANE_EVENTS,
        {"roomId": room_id, "seat": "HOST"},
        protocol=protocol,
        init=ws_init_for(guest),
    ) as sub:
        payload = await sub.next()
    assert [e["extensions"]["code"] for e in payload["errors"]] == ["FORBIDDEN"]


async def test_a_stranger_cannot_subscribe_to_a_room(server: Server) -> None:
    _, _, room_id = await _deal(server)
    stranger = server.client()
    await open_room(stranger, "mara")  # a guest key of its own, bound to another room
    async with subscribe(
        server.ws_url,
        PANE_EVENTS,
        {"roomId": room_id, "seat": "VISITOR"},
        init=ws_init_for(stranger),
    ) as sub:
        payload = await sub.next()
    assert [e["extensions"]["code"] for e in payload["errors"]] == ["NOT_FOUND"]


async def test_a_bad_cursor_is_refused(server: Server) -> None:
    _, guest, room_id = await _deal(server)
    async with subscribe(
        server.ws_url,
        PANE_EVENTS,
        {"roomId": room_id, "seat": "VISITOR", "after": "not-a-cursor"},
        init=ws_init_for(guest),
    ) as sub:
        payload = await sub.next()
    assert [e["extensions"]["code"] for e in payload["errors"]] == ["BAD_USER_INPUT"]


async def test_headers_authenticate_a_websocket_too(server: Server) -> None:
    host, _guest, room_id = await _deal(server)
    async with subscribe(
        server.ws_url,
        PANE_EVENTS,
        {"roomId": room_id, "seat": "HOST"},
        headers={"Authorization": host.headers["Authorization"]},
    ) as sub:
        await until_listening(server.broker, room_id)
        sent = await post(host, room_id, "note")
        event = await sub.event()
    assert event["message"]["id"] == sent["id"]


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_resuming_after_a_dropped_connection_loses_nothing(
    server: Server, protocol: str
) -> None:
    _, guest, room_id = await _deal(server)
    init = ws_init_for(guest)
    variables = {"roomId": room_id, "seat": "VISITOR"}
    async with subscribe(
        server.ws_url, PANE_EVENTS, variables, protocol=protocol, init=init
    ) as sub:
        await until_listening(server.broker, room_id)
        first = await post(guest, room_id, "one")
        seen = await sub.event()
    assert seen["cursor"] == first["cursor"]
    # The socket is gone; the conversation goes on.
    missed = [await post(guest, room_id, f"missed {i}") for i in range(5)]
    resumed = {**variables, "after": seen["cursor"]}
    async with subscribe(server.ws_url, PANE_EVENTS, resumed, protocol=protocol, init=init) as sub:
        replayed = await sub.events(5)
        live = await post(guest, room_id, "live again")
        after_replay = await sub.event()
        await sub.nothing_for(0.3)
    assert [e["message"]["id"] for e in replayed] == [m["id"] for m in missed]
    assert after_replay["message"]["id"] == live["id"]


async def test_posts_racing_the_replay_arrive_once_each_in_order(server: Server) -> None:
    """Subscribe-then-read: messages committed while the replay runs are neither lost nor
    delivered twice."""
    _, guest, room_id = await _deal(server)
    await sign_up_here(guest, "acmebrand", "Acme Brand")  # 50 posts: past the guest cap
    history = [await post(guest, room_id, f"old {i}") for i in range(30)]
    variables = {"roomId": room_id, "seat": "VISITOR", "after": history[4]["cursor"]}

    async def keep_posting() -> list[dict[str, str]]:
        return [await post(guest, room_id, f"new {i}") for i in range(20)]

    async with subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(guest)) as sub:
        racing = asyncio.create_task(keep_posting())
        events = await sub.events(25 + 20, timeout=10)
        fresh = await racing
        await sub.nothing_for(0.3)
    expected = [m["id"] for m in history[5:]] + [m["id"] for m in fresh]
    assert [e["message"]["id"] for e in events] == expected


async def test_a_dropped_socket_ends_its_subscription(server: Server) -> None:
    """The broker forgets a subscriber once its socket is gone (no leaked listeners)."""
    _, guest, room_id = await _deal(server)
    channel = f"pane:{room_id}:visitor"
    async with subscribe(
        server.ws_url, PANE_EVENTS, {"roomId": room_id, "seat": "VISITOR"}, init=ws_init_for(guest)
    ) as sub:
        await until_listening(server.broker, room_id)
        await post(guest, room_id, "hi")
        await sub.event()
        assert channel in _listening(server)
    for _ in range(100):
        if channel not in _listening(server):
            break
        await asyncio.sleep(0.02)
    assert channel not in _listening(server)


def _listening(server: Server) -> list[str]:
    return server.broker.listening()
