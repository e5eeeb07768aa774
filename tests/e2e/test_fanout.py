"""Fan-out: an event reaching many subscribers of one pane is executed and encoded once per
selection, and every subscriber still gets exactly the documented payload."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import pytest

from dealroom.domain.cursors import event_cursor
from dealroom.schema import fanout
from tests.conftest import Server
from tests.e2e.test_metrics import Samples, metered, scrape, value
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

TOKEN = "scrape-me"  # the metered server's
SAME_OP = "op-1"
"""Every socket names its operation alike, so the whole frames can be compared byte for byte."""

ONLY_CURSORS = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    ... on MessageAdded { cursor }
  }
}
"""

READERS = 6
__all__ = ["metered"]  # the fixture, used here


async def _deal(server: Server) -> tuple[Client, Client, dict[str, Any]]:
    """A host, a guest in the host's room, and the variables following the visitor pane from
    its start (so every socket is subscribed once it has replayed what came first)."""
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    return host, guest, {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}


async def _open(
    stack: AsyncExitStack, server: Server, query: str, variables: dict[str, Any], init: Any
) -> Subscription:
    return await stack.enter_async_context(
        subscribe(server.ws_url, query, variables, init=init, op_id=SAME_OP)
    )


async def _frame_with(sub: Subscription, needle: str) -> str:
    """The raw text of the first ``next`` frame that contains ``needle``."""
    async with asyncio.timeout(10):
        while True:
            raw = await sub.ws.recv()
            assert isinstance(raw, str)
            if '"type":"next"' in raw and needle in raw:
                return raw


def _moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


async def test_many_readers_of_a_pane_share_one_execution_and_one_encoding(
    metered: Server,
) -> None:
    server = metered
    host, guest, variables = await _deal(server)
    room_id = variables["roomId"]
    async with AsyncExitStack() as stack:
        same = [
            await _open(stack, server, PANE_EVENTS, variables, ws_init_for(guest))
            for _ in range(READERS)
        ]
        other_shape = await _open(stack, server, ONLY_CURSORS, variables, ws_init_for(guest))
        other_reader = await _open(stack, server, PANE_EVENTS, variables, ws_init_for(host))
        everyone = [*same, other_shape, other_reader]
        warm = await post(guest, room_id, "warm-up")
        for sub in everyone:
            await _frame_with(sub, warm["cursor"])
        fanout.reset()
        before = await scrape(server, TOKEN)
        sent = await post(guest, room_id, "Can you do a post for $4,000?")
        frames = [await _frame_with(sub, sent["cursor"]) for sub in everyone]
        after = await scrape(server, TOKEN)

    # Byte-identical for one selection and reader, and exactly what encode_json would write.
    assert len(set(frames[:READERS])) == 1
    assert frames[0] == json.dumps(json.loads(frames[0]), separators=(",", ":"))
    event = json.loads(frames[0])["payload"]["data"]["paneEvents"]
    assert event["message"]["id"] == sent["id"]
    assert event["message"]["alignment"] == "RIGHT"
    # Another selection gets its own shape; another reader its own view.
    assert json.loads(frames[READERS])["payload"] == {
        "data": {"paneEvents": {"cursor": sent["cursor"]}}
    }
    host_view = json.loads(frames[READERS + 1])["payload"]["data"]["paneEvents"]
    assert host_view["message"]["alignment"] == "LEFT"

    executions = "dealroom_subscription_event_executions_total"
    # One execution per (selection, reader): the guests' two documents and the host's.
    assert _moved(before, after, executions, path="shared") == 3
    assert _moved(before, after, executions, path="reused") == READERS - 1
    assert _moved(before, after, executions, path="own") == 0
    assert _moved(before, after, "dealroom_subscription_payload_serialisations_total") == 3


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_a_shared_frame_is_the_frame_the_protocol_would_send(
    metered: Server, protocol: str
) -> None:
    """Over both protocols a shared payload keeps the envelope (id, type) of its own
    operation."""
    server = metered
    _, guest, variables = await _deal(server)
    room_id = variables["roomId"]
    async with AsyncExitStack() as stack:
        subs = [
            await stack.enter_async_context(
                subscribe(
                    server.ws_url,
                    PANE_EVENTS,
                    variables,
                    protocol=protocol,
                    init=ws_init_for(guest),
                )
            )
            for _ in range(2)
        ]
        sent = await post(guest, room_id, "hello")
        frames = [json.loads(await _frame_with_any(sub, sent["cursor"])) for sub in subs]
    kind = "next" if protocol == TRANSPORT_WS else "data"
    for sub, frame in zip(subs, frames, strict=True):
        assert frame["id"] == sub.op_id
        assert frame["type"] == kind
        assert frame["payload"]["data"]["paneEvents"]["message"]["id"] == sent["id"]


async def _frame_with_any(sub: Subscription, needle: str) -> str:
    async with asyncio.timeout(10):
        while True:
            raw = await sub.ws.recv()
            assert isinstance(raw, str)
            if needle in raw:
                return raw
