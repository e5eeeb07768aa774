"""Helpers for the login-gate tests: a guest in a deal room with a host whose rules the agents
recorded, the gate's GraphQL documents, and the rows the gate leaves behind."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Dispatch, Offer, PendingEffect
from tests.conftest import Server
from tests.support.graphql import Client
from tests.support.rooms import PASSWORD

GATE_EVENTS = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    __typename
    ... on MessageAdded { cursor message { id body authorKind } }
    ... on LoginRequiredChanged { cursor loginRequired }
  }
}
"""

GATE_ROOM = """
query($id: ID!) {
  room(id: $id) {
    id title loginRequired heldEffects
    participants { seat displayName isGuest account { handle } }
    offer { id terms { buyer { handle } } }
  }
}
"""

CLAIM = "mutation($id: ID!) { claimRoom(roomId: $id) { id title loginRequired heldEffects } }"

SIGN_UP_FULL = """
mutation($input: SignUpInput!) { signUp(input: $input) { token account { id handle } } }
"""

SIGN_IN = """
mutation($input: SignInInput!) { signIn(input: $input) { token account { id handle } } }
"""


async def sign_up_here(client: Client, handle: str, name: str) -> dict[str, Any]:
    """signUp from the guest's own client (its guest key travels with the request); from then
    on the client is the account (Bearer)."""
    data = await client.query(
        SIGN_UP_FULL,
        {
            "input": {
                "email": f"{handle}@example.com",
                "password": PASSWORD,
                "handle": handle,
                "displayName": name,
            }
        },
    )
    payload: dict[str, Any] = data["signUp"]
    client.bearer(payload["token"])
    return payload


async def sign_in_here(client: Client, handle: str) -> dict[str, Any]:
    data = await client.query(
        SIGN_IN, {"input": {"email": f"{handle}@example.com", "password": PASSWORD}}
    )
    payload: dict[str, Any] = data["signIn"]
    client.bearer(payload["token"])
    return payload


async def _rows(db: Db, model: type[Any], room_id: str, *order: Any) -> list[Any]:
    try:
        statement = select(model).where(model.room_id == uuid.UUID(room_id))
        if order:
            statement = statement.order_by(*order)
        return list(await db.scalars(statement))
    finally:
        await db.close()


async def held(db: Db, room_id: str) -> list[PendingEffect]:
    return await _rows(db, PendingEffect, room_id, PendingEffect.seq)


async def room_dispatches(db: Db, room_id: str) -> list[Dispatch]:
    return await _rows(db, Dispatch, room_id, Dispatch.created_at, Dispatch.position)


async def room_offers(db: Db, room_id: str) -> list[Offer]:
    return await _rows(db, Offer, room_id, Offer.created_at)


async def room_runs(db: Db, room_id: str) -> list[AgentRun]:
    return await _rows(db, AgentRun, room_id, AgentRun.created_at)


async def wait_for(server: Server) -> None:
    await server.settle(timeout=60)


COUNTER_LINE = "Dev Raman can do the sponsored post at $7,500. Does that work for you?"


async def arrange_standing_counter(db: Db, room_id: str, now: Any) -> None:
    """A counter of $7,500 standing in the visitor's pane, as the agents would have left it
    had the host side's ruling crossed (the gate holds that for a guest, so it is arranged)."""
    from dealroom.persistence.models import Message, Participant, Room
    from dealroom.persistence.repositories import RoomRepository

    rid = uuid.UUID(room_id)
    try:
        visitor = await db.scalar(
            select(Participant).where(Participant.room_id == rid, Participant.key == "visitor")
        )
        assert visitor is not None
        seq = await RoomRepository(db).next_event_seq(rid, now)
        last = await db.scalar(
            select(Message.session_no)
            .where(Message.participant_id == visitor.id)
            .order_by(Message.seq.desc())
            .limit(1)
        )
        await db.add(
            Message(
                id=uuid.uuid4(),
                room_id=rid,
                participant_id=visitor.id,
                seq=seq,
                author_kind="agent",
                body=COUNTER_LINE,
                session_no=last or 1,
                client_message_id=f"arranged:{seq}",
                created_at=now,
            )
        )
        room = await db.get(Room, rid)
        assert room is not None
        memory = dict(room.memory or {})
        memory["rulings"] = {
            "visitor": [
                {
                    "decision": "counter",
                    "amount": "7500",
                    "currency": "USD",
                    "deliverable": "sponsored_post",
                    "dispatchId": "arranged",
                }
            ]
        }
        room.memory = memory
        room.memory_version += 1
        await db.commit()
    finally:
        await db.close()


async def arrange_offer(db: Db, room_id: str, now: Any) -> str:
    """A written offer waiting on the brand in ``room_id`` (a room from before the gate, or
    one whose guest was gated after it was drawn): what a guest could try to approve or pay."""
    from dealroom.persistence.models import Room

    rid = uuid.UUID(room_id)
    try:
        room = await db.get(Room, rid)
        assert room is not None
        offer = Offer(
            id=uuid.uuid4(),
            room_id=rid,
            key="new-offer",
            seller_account_id=room.host_account_id,
            status="APPROVED",
            terms={"fee": {"amount": "7500", "currency": "USD"}, "deliverables": ["post"]},
            open_questions=[],
            version=1,
            fingerprint="arranged",
            created_at=now,
            updated_at=now,
        )
        await db.add(offer)
        await db.commit()
        return str(offer.id)
    finally:
        await db.close()


async def arrange_held_sends(
    db: Db, room_id: str, count: int, now: Any, *, run_of: int | None = None
) -> None:
    """``count`` notes from the guest's pane to the host's, held by the gate (as a guest's
    bids would leave them), in order; with ``run_of``, a held ``offer_close`` (no offer to
    close: performed as nothing) after every ``run_of`` notes, so the replay takes several
    steps (each run of notes is one coalesced send)."""
    from dealroom.persistence.models import Participant

    rid = uuid.UUID(room_id)
    try:
        seats = {
            p.key: p.id
            for p in await db.scalars(select(Participant).where(Participant.room_id == rid))
        }
        source = uuid.uuid4()
        seq = 0
        for index in range(count):
            if run_of and index and index % run_of == 0:
                seq += 1
                await db.add(
                    PendingEffect(
                        id=uuid.uuid4(),
                        room_id=rid,
                        seq=seq,
                        kind="offer_close",
                        payload={"actor": "persona", "stage": "NO_WRITTEN_OFFER"},
                        status="held",
                        source_run_id=source,
                        created_at=now,
                    )
                )
            seq += 1
            await db.add(
                PendingEffect(
                    id=uuid.uuid4(),
                    room_id=rid,
                    seq=seq,
                    kind="pane_send",
                    payload={
                        "from": str(seats["visitor"]),
                        "to": str(seats["host"]),
                        "substance": f"A visitor offers ${7000 + index} for a sponsored post.",
                        "payload": {"open_questions": []},
                        "position": index,
                        "chain_depth": 1,
                        "stage": "NO_WRITTEN_OFFER",
                    },
                    status="held",
                    source_run_id=source,
                    created_at=now,
                )
            )
        await db.commit()
    finally:
        await db.close()
