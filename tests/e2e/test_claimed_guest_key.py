"""Claimed means claimed (rule R7 of ``dealroom.domain.access``): once a guest's room is claimed,
the old guest key — sent as ``X-Guest-Key`` or as the guest cookie — reads and writes nothing of
the room, exactly as a stranger is refused (``NOT_FOUND``), and a stream it held ends within the
re-check interval."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.persistence.db import Db
from dealroom.realtime import Broker
from dealroom.schema.context import GUEST_COOKIE
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.gate import arrange_offer, sign_up_here
from tests.support.graphql import (
    PANE_EVENTS,
    POST,
    Client,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    until_listening,
)
from tests.support.offers import OFFER, OFFER_STAGE
from tests.support.rooms import ROOM, ROOMS, only_error
from tests.support.turns import messages_in

RECHECK = 0.3
FROM_START = event_cursor(0)
VIA = ["header", "cookie"]

PANE = """
query($id: ID!, $seat: Seat!) {
  room(id: $id) { pane(seat: $seat) { messages(first: 50) { edges { node { body } } } } }
}
"""


@pytest.fixture
async def quick(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """A server whose subscriptions re-check every 0.3 s (default 5 s)."""
    quick_settings = settings.model_copy(update={"subscription_recheck_seconds": RECHECK})
    async with serving(quick_settings, engine, broker, clock) as running:
        yield running


@dataclass
class Claimed:
    brand: Client
    """The guest's own client, signed up (Bearer) from the claim on."""
    key: str
    room_id: str
    offer_id: str


def _holding(server: Server, key: str, via: str) -> Client:
    """A client that presents only the guest key, as the header or as the cookie."""
    client = server.client()
    if via == "header":
        client.headers["X-Guest-Key"] = key
    else:
        client.headers["Cookie"] = f"{GUEST_COOKIE}={key}"
    return client


def _ws_holding(key: str, via: str) -> dict[str, Any]:
    """``subscribe`` keyword arguments presenting only the guest key."""
    if via == "header":
        return {"init": {"guestKey": key}}
    return {"headers": {"Cookie": f"{GUEST_COOKIE}={key}"}}


async def _guest_room(server: Server, db: Db) -> Claimed:
    """A guest's room with a line in its pane and a written offer, not claimed yet."""
    await sign_up(server.client(), "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, "before the claim")
    offer_id = await arrange_offer(db, room_id, server.clock.now())
    return Claimed(guest, guest.headers["X-Guest-Key"], room_id, offer_id)


def _post_vars(room_id: str, body: str) -> dict[str, Any]:
    return {"input": {"roomId": room_id, "body": body, "clientMessageId": body.replace(" ", "-")}}


async def _answer(client: Client, query: str, variables: dict[str, Any]) -> Any:
    """A request's errors (message, path, code), or ``"served"`` when it was answered."""
    body = await client.raw(query, variables)
    return body.get("errors") or "served"


async def _stream_answer(
    server: Server, query: str, variables: dict[str, Any], **presenting: Any
) -> Any:
    """A subscription's first payload's errors, or ``"streamed"`` when it streamed data or
    stayed open (an offer with no stage event yet sends nothing until one comes)."""
    async with subscribe(server.ws_url, query, variables, **presenting) as sub:
        try:
            payload = await sub.next(timeout=5)
        except TimeoutError:
            return "streamed"
    return payload.get("errors") or "streamed"


def _codes(answers: dict[str, Any]) -> dict[str, Any]:
    return {
        path: answer if isinstance(answer, str) else [e["extensions"]["code"] for e in answer]
        for path, answer in answers.items()
    }


@pytest.mark.parametrize("via", VIA)
async def test_the_old_guest_key_is_refused_the_claimed_room_as_a_stranger(
    server: Server, db: Db, via: str
) -> None:
    c = await _guest_room(server, db)
    old = _holding(server, c.key, via)
    assert (await old.query(ROOM, {"id": c.room_id}))["room"]["id"] == c.room_id  # before: its own
    stranger = server.client()
    stranger_key = (await open_room(stranger, "devraman"))["guestKey"]  # a room of its own

    await sign_up_here(c.brand, "mara", "Mara Ellison")  # claims the key's room

    requests: dict[str, tuple[str, dict[str, Any]]] = {
        "room": (ROOM, {"id": c.room_id}),
        "pane messages": (PANE, {"id": c.room_id, "seat": "VISITOR"}),
        "offer": (OFFER, {"id": c.offer_id}),
        "postMessage": (POST, _post_vars(c.room_id, "as the brand")),
    }
    streams: dict[str, tuple[str, dict[str, Any]]] = {
        "paneEvents": (
            PANE_EVENTS,
            {"roomId": c.room_id, "seat": "VISITOR", "after": FROM_START},
        ),
        "offerStage": (OFFER_STAGE, {"offerId": c.offer_id, "after": FROM_START}),
    }
    answers: dict[str, dict[str, Any]] = {}
    for who, client, key in (("old key", old, c.key), ("stranger", stranger, stranger_key)):
        answers[who] = {path: await _answer(client, *sent) for path, sent in requests.items()}
        for path, (query, variables) in streams.items():
            answers[who][path] = await _stream_answer(
                server, query, variables, **_ws_holding(key, via)
            )

    listed = (await old.query(ROOMS, {"first": 10}))["rooms"]
    refused = {path: ["NOT_FOUND"] for path in [*requests, *streams]}
    assert _codes(answers["old key"]) | {"rooms listed": listed["totalCount"]} == refused | {
        "rooms listed": 0
    }
    assert listed["edges"] == []
    assert answers["old key"] == answers["stranger"]  # the same errors, word for word
    bodies = [m.body for m in await messages_in(db, c.room_id, "visitor")]
    assert bodies == ["before the claim"]  # the refused post stored nothing
    # The brand itself reads and writes on: its account holds the seat (R1).
    assert (await c.brand.query(ROOM, {"id": c.room_id}))["room"]["title"] == (
        "Mara Ellison × Dev Raman"
    )
    await post(c.brand, c.room_id, "after the claim")


async def test_the_old_guest_key_beside_another_account_is_refused(server: Server, db: Db) -> None:
    """A second tab of the same browser signs up as someone else: its account holds nothing
    in the room and the key it still carries no longer does either."""
    c = await _guest_room(server, db)
    other_tab = _holding(server, c.key, "header")
    await sign_up_here(c.brand, "mara", "Mara Ellison")

    await sign_up(other_tab, "otto", "Otto Other")  # Bearer for Otto, still the old key

    for query, variables in (
        (ROOM, {"id": c.room_id}),
        (POST, _post_vars(c.room_id, "as otto")),
    ):
        refused = await only_error(other_tab, query, variables)
        assert refused["extensions"]["code"] == "NOT_FOUND", (query, refused)


async def _ended_not_found(sub: Subscription) -> None:
    """Read the stream until it ends: NOT_FOUND, then complete (the claim's own
    ``LoginRequiredChanged`` may come first, within the re-check interval)."""
    while True:
        payload = await sub.next(timeout=10)
        if payload.get("errors"):
            break
        event = next(iter(payload["data"].values()))
        assert event.get("__typename") in (None, "LoginRequiredChanged"), event
    assert [e["extensions"]["code"] for e in payload["errors"]] == ["NOT_FOUND"]
    assert await sub.next() == {"complete": True}


@pytest.mark.parametrize("via", VIA)
async def test_a_stream_the_guest_key_held_ends_not_found_after_the_claim(
    quick: Server, db: Db, via: str
) -> None:
    c = await _guest_room(quick, db)
    pane_vars = {"roomId": c.room_id, "seat": "VISITOR", "after": FROM_START}
    stage_vars = {"offerId": c.offer_id}
    async with contextlib.AsyncExitStack() as stack:
        pane = await stack.enter_async_context(
            subscribe(quick.ws_url, PANE_EVENTS, pane_vars, **_ws_holding(c.key, via))
        )
        stage = await stack.enter_async_context(
            subscribe(quick.ws_url, OFFER_STAGE, stage_vars, **_ws_holding(c.key, via))
        )
        assert (await pane.event())["message"]["body"] == "before the claim"
        await until_listening(quick.broker, c.offer_id)  # the offer's stream is live
        await pane.nothing_for(RECHECK * 3)  # re-checks pass while the key holds the seat

        await sign_up_here(c.brand, "mara", "Mara Ellison")  # claims the key's room

        await _ended_not_found(pane)
        await _ended_not_found(stage)
        # A guest key is not a session: only the operations end, the sockets stay open.
        await pane.nothing_for(RECHECK * 3)
        assert pane.ws.close_code is None
        assert stage.ws.close_code is None
