"""Offer-Gen reads what both sides agreed whatever order the words were committed in: a yes
committed before the counter its answer read, and a settling ruling still on its way to the
visitor's pane (the agreed deal that stalled: terms agreed on both sides, no written offer)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Dispatch, Message, Participant, Room
from dealroom.persistence.repositories import RoomRepository
from dealroom.services.offers.actions import queue_offer_gen
from tests.conftest import Server
from tests.support.gate import room_offers
from tests.support.turns import deal

COUNTER = "Dev Raman can do the sponsored post at $8,000. Does that work for you?"
COUNTER_RULING = {
    "decision": "counter",
    "amount": "8000",
    "currency": "USD",
    "deliverable": "sponsored_post",
}


async def _panes(db: Db, room_id: uuid.UUID) -> dict[str, Participant]:
    rows = await db.scalars(select(Participant).where(Participant.room_id == room_id))
    return {p.key: p for p in rows}


async def _line(db: Db, room_id: uuid.UUID, pane: Participant, author: str, body: str) -> uuid.UUID:
    now = datetime.now().astimezone()
    seq = await RoomRepository(db).next_event_seq(room_id, now)
    message_id = uuid.uuid4()
    await db.add(
        Message(
            id=message_id,
            room_id=room_id,
            participant_id=pane.id,
            seq=seq,
            author_kind=author,
            body=body,
            session_no=1,
            client_message_id=f"arranged:{seq}",
            created_at=now,
        )
    )
    return message_id


async def _arrange(
    db: Db, room_id: str, now: datetime, *, answered: bool, settling_on_the_way: bool
) -> None:
    """The visitor pane as the issue found it: the bid, "Agreed." committed while the host's
    counter was crossing, the counter line, and the reply to "Agreed." (which read the
    counter and took it)."""
    rid = uuid.UUID(room_id)
    try:
        panes = await _panes(db, rid)
        visitor, host = panes["visitor"], panes["host"]
        await _line(db, rid, visitor, "participant", "A sponsored post for $7,000?")
        await _line(db, rid, visitor, "agent", "Thanks — I'm checking that with Dev Raman now.")
        yes = await _line(db, rid, visitor, "participant", "Agreed.")
        await _line(db, rid, visitor, "agent", COUNTER)
        reply = await _line(db, rid, visitor, "agent", "Great, I'll let Dev Raman know.")
        if answered:
            await db.add(
                AgentRun(
                    id=uuid.uuid4(),
                    room_id=rid,
                    participant_id=visitor.id,
                    agent="persona",
                    trigger_message_id=yes,
                    reply_message_id=reply,
                    status="done",
                    created_at=now,
                    not_before=now,
                    finished_at=now,
                )
            )
        if settling_on_the_way:
            await db.add(
                Dispatch(
                    id=uuid.uuid4(),
                    room_id=rid,
                    from_participant_id=host.id,
                    to_participant_id=visitor.id,
                    source_run_id=uuid.uuid4(),
                    position=0,
                    substance="Mara agrees to the sponsored post at $8,000.",
                    payload={"ruling": {**COUNTER_RULING, "decision": "settle"}},
                    status="pending",
                    created_at=now,
                )
            )
        room = await db.get(Room, rid)
        assert room is not None
        memory = dict(room.memory or {})
        memory["rulings"] = {"visitor": [{**COUNTER_RULING, "dispatchId": "arranged"}]}
        room.memory = memory
        room.memory_version += 1
        await db.add(queue_offer_gen(rid, host.id, now))
        await db.commit()
    finally:
        await db.close()


async def test_a_yes_committed_before_the_counter_its_answer_took_draws_the_offer(
    agent_server: Server, db: Db
) -> None:
    room_id = (await deal(agent_server)).room_id
    await agent_server.settle()
    await _arrange(db, room_id, agent_server.clock.now(), answered=True, settling_on_the_way=False)
    agent_server.runner.wake()
    await agent_server.settle()

    offers = await room_offers(db, room_id)
    assert [o.terms["fee"]["currency"] for o in offers] == ["USD"]
    assert [o.terms["fee"]["amount"].replace(",", "") for o in offers] == ["8000.00"]


async def test_a_settling_ruling_on_its_way_to_the_visitor_draws_the_offer(
    agent_server: Server, db: Db
) -> None:
    room_id = (await deal(agent_server)).room_id
    await agent_server.settle()
    await _arrange(db, room_id, agent_server.clock.now(), answered=False, settling_on_the_way=True)
    agent_server.runner.wake()
    await agent_server.settle()

    offers = await room_offers(db, room_id)
    assert [o.terms["fee"]["amount"].replace(",", "") for o in offers] == ["8000.00"]


async def test_a_yes_no_reply_took_and_no_settling_ruling_draw_nothing(
    agent_server: Server, db: Db
) -> None:
    """The control: without the answered order or the ruling, "Agreed." before the counter is
    not a yes to it."""
    room_id = (await deal(agent_server)).room_id
    await agent_server.settle()
    await _arrange(db, room_id, agent_server.clock.now(), answered=False, settling_on_the_way=False)
    agent_server.runner.wake()
    await agent_server.settle()

    assert await room_offers(db, room_id) == []
