"""The guest cap's count (issue 11) stops at the cap (issue 17): the cap only compares the
count with it, and an unbounded count read every post that an address's guest keys made in a
day, for every guest post."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.seats import AuthorKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.guest_posts import guest_posts
from dealroom.persistence.models import Message, Participant
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process


async def test_the_count_stops_at_the_cap_and_is_exact_below_it(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "guestcount")
    db = Db(create_sessionmaker(engine))
    try:
        visitor = await db.scalar(
            select(Participant).where(
                Participant.room_id == opened.room.id, Participant.key == Seat.VISITOR.value
            )
        )
        assert visitor is not None
        assert visitor.guest_key_hash is not None
        await db.add(
            *(
                Message(
                    id=uuid.uuid4(),
                    room_id=visitor.room_id,
                    participant_id=visitor.id,
                    seq=100 + n,
                    author_kind=AuthorKind.PARTICIPANT.value,
                    body=f"line {n}",
                    session_no=1,
                    client_message_id=f"count-{n}",
                    created_at=clock.now(),
                )
                for n in range(5)
            )
        )
        await db.commit()
        counted = {
            cap: await guest_posts(db, visitor.guest_key_hash, clock.now(), cap)
            for cap in (3, 5, 30)
        }
    finally:
        await db.close()
    assert counted == {3: 3, 5: 5, 30: 5}
