"""Helpers for written-offer tests: drive the offline negotiation to a written offer, the
offer GraphQL documents, and reading the rows the offer flow leaves behind (``offer_events``,
``goal_events``) straight from the database."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Agreement, GoalEvent, Offer, OfferEvent, Payment
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up
from tests.support.turns import HOME, RULES, Deal, memory, visitor_client

OPENING = "Hi, we'd like a sponsored post on 15 March 2027, {upfront}"
BID = "We can pay $7,000"
AGREE = "Yes, that works"
"""The offline engine's path to a written offer: the host side counters $8,000 on the bid
and the visitor's agreement meets ``new-offer``."""

MINTED = [("new-offer", None, "open"), ("new-offer", "open", "met")]
"""The goal's flips up to the first written offer: opened by the first ask, met on agreement."""

OFFER_FIELDS = """
  id stage stageGloss version brandApprovedAt createdAt updatedAt
  terms {
    deliverables fee { amount currency } dates usageRights exclusivity dueSlicePercent
    openQuestions seller { id handle } buyer { id handle }
  }
  payment { currency fee duePercent due platformFee total remaining defaultSchedule }
  payments { id status method currency due platformFee total offerVersion }
  agreement { text version fingerprint current }
  viewerActions
  room { id }
"""

OFFER = f"query($id: ID!) {{ offer(id: $id) {{ {OFFER_FIELDS} }} }}"

ROOM_STAGE = """
query($id: ID!) {
  room(id: $id) {
    id stage
    offer { id stage version }
    offers(first: 20) { edges { cursor node { id stage version } } hasNextPage endCursor }
  }
}
"""

APPROVE = f"""
mutation($offerId: ID!, $version: Int) {{
  approveOffer(offerId: $offerId, version: $version) {{ {OFFER_FIELDS} }}
}}
"""

_CHAT_PAYLOAD = f"""
  message {{ id cursor body seat authorKind alignment clientMessageId roomId }}
  offer {{ {OFFER_FIELDS} }}
"""

COUNTER = f"""
mutation($offerId: ID!, $text: String!, $cid: String) {{
  counterOffer(offerId: $offerId, text: $text, clientMessageId: $cid) {{ {_CHAT_PAYLOAD} }}
}}
"""

REJECT = f"""
mutation($offerId: ID!, $text: String! = "", $cid: String) {{
  rejectOffer(offerId: $offerId, text: $text, clientMessageId: $cid) {{ {_CHAT_PAYLOAD} }}
}}
"""

ADD = f"""
mutation($offerId: ID!, $text: String!, $cid: String) {{
  addToOffer(offerId: $offerId, text: $text, clientMessageId: $cid) {{ {_CHAT_PAYLOAD} }}
}}
"""

PAY = f"""
mutation($offerId: ID!, $method: String!, $key: String!) {{
  payOffer(offerId: $offerId, paymentMethod: $method, idempotencyKey: $key) {{
    payment {{ id status method currency due platformFee total offerVersion }}
    offer {{ {OFFER_FIELDS} }}
  }}
}}
"""

OFFER_STAGE = """
subscription($offerId: ID!, $after: String) {
  offerStage(offerId: $offerId, after: $after) { cursor offerId stage stageGloss version at }
}
"""


async def settle(server: Server) -> None:
    """Let the agents finish every due run. On ``agent_server`` the workers run them; on
    ``server`` (workers=0) this test runs them itself, one after another, so a test can read
    the rows between a click and the agents' answer to it."""
    if server.runner.deps.settings.workers:
        await server.settle()
        return
    while await server.runner.run_once():
        pass


async def open_deal(
    server: Server, rules: str = RULES, handle: str = "devraman", *, guest: bool = False
) -> Deal:
    """``turns.deal`` on either server fixture: a host with standing rules (recorded by the
    agents) and a visitor (a signed-in brand; ``guest``: an anonymous one) in a deal room."""
    host = server.client()
    await sign_up(host, handle, "Dev Raman")
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, rules)
    await settle(server)
    visitor = await visitor_client(server, guest=guest)
    opened = await open_room(visitor, handle)
    return Deal(host, visitor, home_id, opened["room"]["id"])


async def negotiate_to_offer(server: Server, d: Deal, *, upfront: str = "50% upfront") -> str:
    """Chat the offline negotiation in ``d``'s room to agreement (each line settled, as a
    visitor waiting for the reply would) and return the written offer's id. Works on either
    server fixture (see ``settle``)."""
    for line in (OPENING.format(upfront=upfront), BID, AGREE):
        await post(d.visitor, d.room_id, line)
        await settle(server)
    data = await d.visitor.query(ROOM_STAGE, {"id": d.room_id})
    offer = data["room"]["offer"]
    assert offer is not None, f"no written offer after agreement: {data}"
    offer_id: str = offer["id"]
    return offer_id


async def offer_events(db: Db, offer_id: str) -> list[OfferEvent]:
    """The offer's stage changes, in the room's event order."""
    try:
        return list(
            await db.scalars(
                select(OfferEvent)
                .where(OfferEvent.offer_id == uuid.UUID(offer_id))
                .order_by(OfferEvent.seq)
            )
        )
    finally:
        await db.close()


async def goal_events(db: Db, room_id: str) -> list[GoalEvent]:
    """The room's goal flips, oldest first."""
    try:
        return list(
            await db.scalars(
                select(GoalEvent)
                .where(GoalEvent.room_id == uuid.UUID(room_id))
                .order_by(GoalEvent.created_at, GoalEvent.id)
            )
        )
    finally:
        await db.close()


async def offer_row(db: Db, offer_id: str) -> Offer:
    """The offers row as stored now."""
    try:
        row = await db.get(Offer, uuid.UUID(offer_id))
        assert row is not None, offer_id
        return row
    finally:
        await db.close()


async def room_offers(db: Db, room_id: str) -> list[Offer]:
    """Every offers row of a room, oldest first."""
    try:
        return list(
            await db.scalars(
                select(Offer).where(Offer.room_id == uuid.UUID(room_id)).order_by(Offer.created_at)
            )
        )
    finally:
        await db.close()


def stages(events: list[OfferEvent]) -> list[tuple[str, int]]:
    """(stage, version) of each stage change, in order: what a test compares."""
    return [(e.stage, e.version) for e in events]


def flips(events: list[GoalEvent]) -> list[tuple[str, str | None, str]]:
    """(goal, from, to) of each goal flip, in order."""
    return [(e.goal_key, e.from_status, e.to_status) for e in events]


async def offer_as(client: Any, offer_id: str) -> dict[str, Any]:
    """The offer read through GraphQL by ``client``."""
    data: dict[str, Any] = (await client.query(OFFER, {"id": offer_id}))["offer"]
    return data


async def approve_as_read(client: Any, offer_id: str) -> dict[str, Any]:
    """Approve the version the reader sees now (as a client app does); the offer after it."""
    version = (await offer_as(client, offer_id))["version"]
    data: dict[str, Any] = (await client.query(APPROVE, {"offerId": offer_id, "version": version}))[
        "approveOffer"
    ]
    return data


async def goal_status(db: Db, room_id: str) -> str | None:
    """The ``new-offer`` goal's status in room memory."""
    goal = (await memory(db, room_id)).get("goals", {}).get("new-offer")
    return goal["status"] if isinstance(goal, dict) else None


async def stored_payments(db: Db, offer_id: str) -> list[Payment]:
    """The offer's payments rows, oldest first."""
    try:
        return list(
            await db.scalars(
                select(Payment)
                .where(Payment.offer_id == uuid.UUID(offer_id))
                .order_by(Payment.created_at)
            )
        )
    finally:
        await db.close()


async def stored_agreements(db: Db, offer_id: str) -> list[Agreement]:
    """The offer's agreement drafts, oldest first."""
    try:
        return list(
            await db.scalars(
                select(Agreement)
                .where(Agreement.offer_id == uuid.UUID(offer_id))
                .order_by(Agreement.created_at)
            )
        )
    finally:
        await db.close()
