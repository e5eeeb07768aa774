"""The login gate end to end (seed 000 "The login gate lives in the mechanism, as held
effects"; seed 002 "Incognito & Mid-Session Claiming"), as a client app drives it: chat as a
guest → the gate → sign up in the same request as the guest cookie → the same room, with what
was held delivered in its original order."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dealroom.agents.models.base import AgentName, Chunk, Generation, ModelClient, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.gate import (
    GATE_EVENTS,
    GATE_ROOM,
    arrange_standing_counter,
    held,
    room_dispatches,
    room_offers,
    sign_up_here,
)
from tests.support.graphql import open_room, post, subscribe
from tests.support.turns import host_with_rules, messages_in

BID = "Hi, we'd like a sponsored post on 15 March 2027 and can pay $7,000"


class SlowOfferGen:
    """The model edge with a slow Offer-Gen: a replay that did not wait for a held mint's run
    would deliver the next held note first."""

    engine = "offline"

    def __init__(self) -> None:
        self.inner = OfflineClient()

    async def generate(self, request: ModelRequest) -> Generation:
        if request.agent is AgentName.OFFER_GEN:
            await asyncio.sleep(1.5)
        return await self.inner.generate(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        async for chunk in self.inner.stream(request):
            yield chunk

    async def close(self) -> None:
        await self.inner.close()


@pytest.fixture
def model() -> ModelClient:
    return SlowOfferGen()


async def _until(sub: Any, want: str, timeout: float = 20) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    while True:
        event = await sub.event(timeout=timeout)
        seen.append(event)
        if event["__typename"] == want:
            return seen


async def test_a_guest_bid_is_held_gated_live_then_delivered_in_the_same_room_on_sign_up(
    agent_server: Server, db: Db
) -> None:
    host, _home = await host_with_rules(agent_server)
    guest = agent_server.client()
    opened = await open_room(guest, "devraman")
    room_id = opened["room"]["id"]
    watch = {"roomId": room_id, "seat": "VISITOR"}
    async with (
        subscribe(agent_server.ws_url, GATE_EVENTS, watch, headers=dict(guest.headers)) as sub,
        subscribe(agent_server.ws_url, GATE_EVENTS, watch, headers=dict(host.headers)) as host_sub,
    ):
        await post(guest, room_id, BID)
        events = await _until(sub, "LoginRequiredChanged")
        assert events[-1]["loginRequired"] is True
        await agent_server.settle()

        # Held, not sent: no note reached the host's pane, no dispatch, no offer.
        rows = await held(db, room_id)
        assert [(r.kind, r.status) for r in rows] == [("pane_send", "held")]
        assert "7,000" in rows[0].payload["substance"]
        assert await room_dispatches(db, room_id) == []
        assert await messages_in(db, room_id, "host") == []
        assert await room_offers(db, room_id) == []
        view = (await guest.query(GATE_ROOM, {"id": room_id}))["room"]
        assert view["loginRequired"] is True
        assert view["heldEffects"] == 1
        # The gate's line: the guest's own agent asks for a sign-in, in its words.
        visitor_pane = await messages_in(db, room_id, "visitor")
        gate_line = visitor_pane[-1]
        assert gate_line.author_kind == AuthorKind.AGENT.value
        assert "sign in" in gate_line.body.lower()
        assert "Dev Raman" in gate_line.body

        # Sign up with only the guest cookie (no header): the same request claims the room.
        guest.headers.pop("X-Guest-Key")
        participant_before = await _visitor_participant(db, room_id)
        account = await sign_up_here(guest, "mara", "Mara Ellison")
        events = await _until(sub, "LoginRequiredChanged")
        assert events[-1]["loginRequired"] is False
        await agent_server.settle()
        # The host reading the same pane never sees the gate (it is the visitor view's).
        host_saw: list[str] = []
        with contextlib.suppress(TimeoutError):
            while True:
                host_saw.append((await host_sub.event(timeout=1))["__typename"])
        assert "MessageAdded" in host_saw
        assert "LoginRequiredChanged" not in host_saw

    view = (await guest.query(GATE_ROOM, {"id": room_id}))["room"]
    assert view["id"] == room_id
    assert view["title"] == "Mara Ellison × Dev Raman"
    assert view["loginRequired"] is False
    assert view["heldEffects"] == 0
    visitor = next(p for p in view["participants"] if p["seat"] == "VISITOR")
    assert visitor == {
        "seat": "VISITOR",
        "displayName": "Mara Ellison",
        "isGuest": False,
        "account": {"handle": "mara"},
    }
    assert await _visitor_participant(db, room_id) == participant_before
    # History intact: the guest's bid and the gate line are still in the pane, in order.
    bodies = [m.body for m in await messages_in(db, room_id, "visitor")]
    assert bodies[: len(visitor_pane)] == [m.body for m in visitor_pane]
    # The held note went out once, and the host side answered it: the counter reached Mara.
    assert [r.status for r in await held(db, room_id)] == ["replayed"]
    sent = await room_dispatches(db, room_id)
    assert [(d.status, d.chain_depth) for d in sent] == [("delivered", 1), ("delivered", 2)]
    assert "7,000" in sent[0].substance
    assert any("8,000" in b for b in bodies[len(visitor_pane) :])
    # Mara agrees as herself: the written offer is minted with her as the buyer.
    await post(guest, room_id, "Yes, that works")
    await agent_server.settle()
    offer = (await guest.query(GATE_ROOM, {"id": room_id}))["room"]["offer"]
    assert offer["terms"]["buyer"] == {"handle": "mara"}
    offers = await room_offers(db, room_id)
    assert [str(o.buyer_account_id) for o in offers] == [account["account"]["id"]]


async def _visitor_participant(db: Db, room_id: str) -> uuid.UUID:
    from sqlalchemy import select

    from dealroom.persistence.models import Participant

    try:
        found = await db.scalar(
            select(Participant.id).where(
                Participant.room_id == uuid.UUID(room_id), Participant.key == "visitor"
            )
        )
    finally:
        await db.close()
    assert found is not None
    return found


async def test_a_held_mint_and_note_replay_in_their_original_order_with_the_buyer_set(
    agent_server: Server, db: Db
) -> None:
    """The guest agrees to a counter standing in its pane: the mint and the note are both
    held; after the claim Offer-Gen runs first (on the transcript as it stands then, buyer
    set), then the note reaches the host's pane."""
    await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, "Hi, we'd like a sponsored post on 15 March 2027, 50% upfront")
    await agent_server.settle()
    await arrange_standing_counter(db, room_id, agent_server.clock.now())
    await post(guest, room_id, "Yes, that works")
    await agent_server.settle()
    assert [r.kind for r in await held(db, room_id)] == ["offer_mint", "pane_send"]
    assert await room_offers(db, room_id) == []

    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle()

    assert [r.status for r in await held(db, room_id)] == ["replayed", "replayed"]
    offers = await room_offers(db, room_id)
    assert len(offers) == 1, [
        (m.author_kind, m.body) for m in await messages_in(db, room_id, "host")
    ]
    assert offers[0].buyer_account_id is not None
    assert offers[0].terms["fee"]["amount"] in ("7500", "7500.00", 7500)
    host_pane = await messages_in(db, room_id, "host")
    delivered = [m for m in host_pane if m.relayed_dispatch_id is not None]
    assert len(delivered) == 1
    first_stage = await _first_offer_event_seq(db, room_id)
    assert first_stage < delivered[0].seq  # the mint first, as it was held first


async def _first_offer_event_seq(db: Db, room_id: str) -> int:
    from sqlalchemy import func, select

    from dealroom.persistence.models import OfferEvent

    try:
        seq = await db.scalar(
            select(func.min(OfferEvent.seq)).where(OfferEvent.room_id == uuid.UUID(room_id))
        )
    finally:
        await db.close()
    assert seq is not None
    return int(seq)
