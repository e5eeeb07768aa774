"""A host's yes to a send the firewall held, in an unclaimed guest's room: the release is an
outbound effect like any other, so the gate holds it (the guest's agent asks for a sign-in, naming
what waits), the host is told it goes out at sign-in, and the claim delivers it once."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch, Message, Participant
from dealroom.persistence.repositories import RoomRepository
from tests.conftest import Server
from tests.support.gate import held, room_dispatches, sign_up_here
from tests.support.graphql import open_room, post
from tests.support.turns import host_with_rules, messages_in

SUBSTANCE = "Dev Raman can do the sponsored post at $7,900."


async def _arrange_firewall_held_send(db: Db, room_id: str, now: Any) -> uuid.UUID:
    """What the firewall leaves when a host-side send would reveal a private value: the send
    held as a dispatch, and the agent's question about it in the host's pane."""
    rid = uuid.UUID(room_id)
    try:
        seats = {
            p.key: p
            for p in await db.scalars(select(Participant).where(Participant.room_id == rid))
        }
        seq = await RoomRepository(db).next_event_seq(rid, now)
        asked = Message(
            id=uuid.uuid4(),
            room_id=rid,
            participant_id=seats["host"].id,
            seq=seq,
            author_kind=AuthorKind.AGENT.value,
            body=f"Before I pass this on: \u201c{SUBSTANCE}\u201d Shall I send it as written?",
            session_no=1,
            client_message_id=f"arranged:{seq}",
            created_at=now,
        )
        dispatch = Dispatch(
            id=uuid.uuid4(),
            room_id=rid,
            from_participant_id=seats["host"].id,
            to_participant_id=seats["visitor"].id,
            source_run_id=uuid.uuid4(),
            position=0,
            substance=SUBSTANCE,
            payload={"firewall": {"reveals": ["the floor"], "askedMessageId": str(asked.id)}},
            status="held",
            chain_depth=1,
            created_at=now,
        )
        await db.add(asked, dispatch)
        await db.commit()
        return dispatch.id
    finally:
        await db.close()


async def test_a_release_in_a_guest_room_is_held_gated_and_delivered_once_at_sign_up(
    agent_server: Server, db: Db
) -> None:
    host, _home = await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await agent_server.settle()
    dispatch_id = await _arrange_firewall_held_send(db, room_id, agent_server.clock.now())

    await post(host, room_id, "yes")
    await agent_server.settle()

    assert [(r.kind, r.status) for r in await held(db, room_id)] == [("release", "held")]
    sent = {d.id: d for d in await room_dispatches(db, room_id)}
    assert sent[dispatch_id].status == "held"  # nothing crossed yet
    told = (await messages_in(db, room_id, "host"))[-1]
    assert told.author_kind == AuthorKind.AGENT.value
    assert told.body.startswith("Approved: it goes to ")
    assert told.body.endswith(" once they sign in.")
    # The gate's line, with the release as the room's first held effect.
    gate_line = (await messages_in(db, room_id, "visitor"))[-1]
    assert gate_line.author_kind == AuthorKind.AGENT.value
    assert "sign in" in gate_line.body.lower()
    assert "news from Dev Raman" in gate_line.body

    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle()

    assert [r.status for r in await held(db, room_id)] == ["replayed"]
    sent = {d.id: d for d in await room_dispatches(db, room_id)}
    assert sent[dispatch_id].status == "delivered"
    relayed = [
        m for m in await messages_in(db, room_id, "visitor") if m.relayed_dispatch_id == dispatch_id
    ]
    assert len(relayed) == 1
