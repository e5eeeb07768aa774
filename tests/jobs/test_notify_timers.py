"""Waits on a principal are checked against the rows before a step fires (NW1): a decision the
host has answered in its pane, or an approval whose offer moved, fires nothing; one still
waiting is reminded once and escalated once."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Notification, Participant, Room
from dealroom.realtime import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.notify import outbox, owed, waits
from dealroom.services.rooms import messages
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.notify import People, host_and_brand, host_note, stored


async def _arm(engine: AsyncEngine, clock: ManualClock, people: People) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        host = await unit.db.scalar(
            Participant.__table__.select()  # a row factory's read, not the code under test
            .with_only_columns(Participant.id)
            .where(Participant.room_id == people.room_id, Participant.key == Seat.HOST.value)
        )
        wait = {"dispatch": str(uuid.uuid4()), "host": str(host), "waitingKey": "visitor"}
        await outbox.write(unit.db, clock.now(), [host_note(people, wait=wait)])


async def _step(engine: AsyncEngine, settings: Settings, clock: ManualClock) -> list[bool]:
    fired = []
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        rows = [r for r in await stored(engine) if r.wait_state in ("waiting", "reminded")]
        for row in rows:
            live = await unit.db.get(Notification, row.id)
            assert live is not None
            stepped = await waits.step(unit.db, settings, live, clock.now())
            fired.append(stepped.fired)
    return fired


async def _host_says(
    engine: AsyncEngine, broker: Broker, clock: ManualClock, people: People
) -> None:
    db = Db(create_sessionmaker(engine))
    try:
        await messages.post_message(
            db,
            broker,
            clock,
            Identity(signed_in=people.host, account=people.host, guest_key=None),
            room_id=people.room_id,
            body="Let me think about it.",
            client_message_id="think",
            seat=None,
            limits=messages.PostLimits(per_minute=1000),
        )
        await db.commit()
    finally:
        await db.close()


async def test_a_wait_the_host_answered_in_its_pane_fires_nothing(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock)
    await _arm(engine, clock, people)
    await _host_says(engine, broker, clock, people)
    clock.advance(timedelta(hours=13))
    assert await _step(engine, settings, clock) == [False]
    rows = await stored(engine)
    assert [r.wait_state for r in rows] == ["settled"]
    assert [r.kind for r in rows] == ["decision"]  # no reminder written


async def test_a_wait_still_open_is_reminded_then_escalated_once_each(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock)
    await _arm(engine, clock, people)
    assert await _step(engine, settings, clock) == [True]
    assert await _step(engine, settings, clock) == [True]
    assert await _step(engine, settings, clock) == []  # escalated: nothing left to fire
    kinds = sorted(r.kind for r in await stored(engine))
    assert kinds == ["decision", "escalation", "reminder"]


PENDING = {
    "pendingPrincipalDecisions": {
        "reel": {"side": "host", "question": "Acme offers $3,000 for a reel. Take it?"}
    }
}


async def _guard_arms(engine: AsyncEngine, clock: ManualClock, people: People) -> int:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        room = await unit.db.get(Room, people.room_id)
        assert room is not None
        armed = await owed.ensure_armed(unit.db, people.room_id, room.memory, clock.now())
        return len(armed.edits)


async def test_the_guards_repair_for_a_waiting_principal_is_an_armed_reminder(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock, memory=PENDING)
    assert await _guard_arms(engine, clock, people) == 1
    assert await _guard_arms(engine, clock, people) == 0  # armed already: nothing more
    (row,) = await stored(engine)
    assert (row.kind, row.wait_state) == ("decision", "waiting")
    assert row.account_id == people.host.id


async def test_an_instructed_decision_is_not_owed(engine: AsyncEngine, clock: ManualClock) -> None:
    answered = {
        "pendingPrincipalDecisions": {
            "reel": PENDING["pendingPrincipalDecisions"]["reel"] | {"principalInstruction": "yes"}
        }
    }
    people = await host_and_brand(engine, clock, memory=answered)
    assert await _guard_arms(engine, clock, people) == 0
    assert await stored(engine) == []
