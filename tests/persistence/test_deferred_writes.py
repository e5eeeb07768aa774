"""``Db.defer``: a unit's closing writes, whose results nobody reads, wait for the unit's next
statement or its commit; on PostgreSQL the ones deferred in a row go as one statement
(``raw_lane.batch``), so a turn's re-arm, memory and ledger row cost one round trip."""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from typing import cast

import pytest
from sqlalchemy import (
    String,
    Table,
    Uuid,
    bindparam,
    func,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.persistence import raw_lane
from dealroom.persistence import run_statements as q
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, ModelCall, Participant, Room, RoomWatch
from dealroom.persistence.runs import RunRepository
from dealroom.persistence.watches import WatchRepository
from dealroom.services.turns.queue import new_run
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process
from tests.support.statements import heard
from tests.support.turns import ledger_row


def statements(engine: AsyncEngine) -> AbstractContextManager[list[tuple[str, bool]]]:
    """Each statement heard, with whether it came by the raw lane; BEGIN left out."""
    return heard(engine, lambda statement, by_raw_lane: (statement, by_raw_lane))


async def _room(engine: AsyncEngine, clock: ManualClock, handle: str) -> uuid.UUID:
    _, opened = await guest_room_in_process(engine, clock, handle)
    return opened.room.id


async def _stored(engine: AsyncEngine, room_id: uuid.UUID) -> tuple[int, int, int]:
    """The room's memory version, its watch's generation (0 without one), its ledger rows."""
    db = Db(create_sessionmaker(engine))
    try:
        version = await db.scalar(select(Room.memory_version).where(Room.id == room_id))
        generation = await db.scalar(
            select(RoomWatch.generation).where(RoomWatch.room_id == room_id)
        )
        calls = await db.scalar(
            select(func.count()).select_from(ModelCall).where(ModelCall.room_id == room_id)
        )
        return int(version or 0), int(generation or 0), int(calls or 0)
    finally:
        await db.close()


async def _defer_closing_writes(
    db: Db, room_id: uuid.UUID, clock: ManualClock, *, ledger_room: uuid.UUID | None = None
) -> None:
    """What a persona's apply defers: the watch's re-arm, the memory, the ledger's row (for
    ``ledger_room`` when given)."""
    WatchRepository(db).arm_later(room_id, clock.now())
    RunRepository(db).write_memory_later(room_id, {"note": "deferred"}, clock.now())
    row = ledger_row(ledger_room or room_id, clock.now(), id=uuid.uuid4())
    await db.insert([row], later=True)


def _one_more_each(before: tuple[int, int, int]) -> tuple[int, int, int]:
    """A memory version, a watch generation and a ledger row more than ``before``."""
    version, generation, calls = before
    return version + 1, generation + 1, calls + 1


async def test_deferred_writes_go_as_one_statement_at_the_commit(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    room_id = await _room(pg_engine, clock, "deferone")
    before = await _stored(pg_engine, room_id)
    with statements(pg_engine) as seen:
        await pg_db.execute(text("SELECT 1"))  # the transaction has begun
        await _defer_closing_writes(pg_db, room_id, clock)
        assert len(seen) == 1  # nothing sent yet
        await pg_db.commit()
    assert len(seen) == 2, seen
    batch, by_raw_lane = seen[1]
    assert by_raw_lane
    assert batch.startswith("WITH w0 AS (INSERT INTO room_watches")
    assert await _stored(pg_engine, room_id) == _one_more_each(before)


async def test_the_next_statement_sends_them_first_and_sees_them(
    engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    """On both backends: a read after deferred writes reads what they wrote."""
    room_id = await _room(engine, clock, "deferread")
    before = await _stored(engine, room_id)
    await db.execute(text("SELECT 1"))
    await _defer_closing_writes(db, room_id, clock)
    version = await db.scalar(select(Room.memory_version).where(Room.id == room_id))
    assert version == before[0] + 1
    calls = await db.scalar(
        select(func.count()).select_from(ModelCall).where(ModelCall.room_id == room_id)
    )
    assert calls == before[2] + 1
    await db.commit()
    assert await _stored(engine, room_id) == _one_more_each(before)


async def test_a_rollback_drops_deferred_writes_unsent(
    engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    room_id = await _room(engine, clock, "deferdrop")
    before = await _stored(engine, room_id)
    with statements(engine) as seen:
        await db.execute(text("SELECT 1"))
        await _defer_closing_writes(db, room_id, clock)
        await db.rollback()
        await db.execute(text("SELECT 2"))  # the unit goes on: nothing left queued
        await db.commit()
    assert [s for s, _ in seen if "INSERT" in s or "UPDATE" in s] == []
    assert await _stored(engine, room_id) == before


async def test_a_deferred_write_that_fails_fails_the_commit_and_nothing_is_kept(
    engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    """The error surfaces where the writes are sent, the commit, and the unit's earlier,
    undeferred write is not committed either."""
    room_id = await _room(engine, clock, "deferfail")
    before = await _stored(engine, room_id)
    await db.rows(q.write_memory(), {"room_id": room_id, "document": {"a": 1}, "at": clock.now()})
    WatchRepository(db).arm_later(room_id, clock.now())
    # no such room: the foreign key refuses the ledger's row
    await db.insert([ledger_row(uuid.uuid4(), clock.now(), id=uuid.uuid4())], later=True)
    with pytest.raises(IntegrityError):
        await db.commit()
    await db.close()
    assert await _stored(engine, room_id) == before


async def test_a_few_rows_of_one_kind_go_as_one_insert_on_the_lane(
    pg_engine: AsyncEngine, clock: ManualClock, pg_db: Db
) -> None:
    """``Db.insert`` of up to ``MANY_ROWS`` rows that set every Python-side default: one
    statement the lane takes, deferred or not; the rows stored as given."""
    room_id = await _room(pg_engine, clock, "defermany")
    participant = await pg_db.scalar(
        select(Participant.id).where(Participant.room_id == room_id, Participant.key != "host")
    )
    assert participant is not None
    await pg_db.commit()
    runs = [
        new_run(room_id=room_id, participant_id=participant, agent=agent, now=clock.now())
        for agent in (AgentName.PERSONA, AgentName.DISTIL, AgentName.PERSONA)
    ]
    with statements(pg_engine) as seen:
        await pg_db.execute(text("SELECT 1"))
        await pg_db.insert(runs[:2])
        await pg_db.insert(runs[2:], later=True)
        WatchRepository(pg_db).arm_later(room_id, clock.now())
        await pg_db.commit()
    assert [by_raw_lane for _, by_raw_lane in seen] == [False, True, True]
    assert seen[1][0].startswith("INSERT INTO agent_runs")
    assert seen[1][0].count("), (") == 1
    assert seen[2][0].startswith("WITH w0 AS (INSERT INTO agent_runs")
    stored = (
        await pg_db.execute(
            select(AgentRun.id, AgentRun.agent, AgentRun.no_op).where(AgentRun.room_id == room_id)
        )
    ).all()
    assert sorted((r.id, r.agent, r.no_op) for r in stored) == sorted(
        (r.id, r.agent, False) for r in runs
    )


def test_a_write_with_its_own_with_or_a_literal_is_not_nested(pg_engine: AsyncEngine) -> None:
    """PostgreSQL allows a data-modifying ``WITH`` only at the top level, and a quoted
    literal could hold a ``$n`` the renumbering would misread: such a write is sent on its
    own. The batch's parameters are renumbered in order."""
    dialect = pg_engine.dialect
    memory = raw_lane.compiled(q.write_memory(), dialect)
    assert memory is not None
    both = raw_lane.batch([memory, memory])
    assert both is not None
    assert both.names == tuple(f"{i}:{n}" for i in (0, 1) for n in memory.names)
    assert f"${2 * len(memory.names)}" in both.sql
    assert f"${2 * len(memory.names) + 1}" not in both.sql
    rooms = cast(Table, Room.__table__)
    chosen = select(Room.id).where(Room.id == bindparam("room_id", type_=Uuid)).cte("chosen")
    with_its_own = (
        update(rooms)
        .where(rooms.c.id.in_(select(chosen.c.id)))
        .values(title=bindparam("title", type_=String))
    )
    nested = raw_lane.compiled(with_its_own, dialect)
    assert nested is not None
    assert nested.sql.startswith("WITH")
    assert raw_lane.batch([memory, nested]) is None
    quoted = raw_lane.compiled(
        update(rooms)
        .where(rooms.c.id == bindparam("room_id", type_=Uuid))
        .values(title=literal_column("'$1'")),
        dialect,
    )
    assert quoted is not None
    assert "'$1'" in quoted.sql
    assert raw_lane.batch([memory, quoted]) is None
    # a checked write must say what it touched: one without RETURNING is not batched
    plain = raw_lane.compiled(
        update(rooms)
        .where(rooms.c.id == bindparam("room_id", type_=Uuid))
        .values(title=bindparam("title", type_=String)),
        dialect,
    )
    assert plain is not None
    assert raw_lane.batch([memory, plain], checked=(1,)) is None
    checked = raw_lane.batch([memory, plain], checked=(0,))
    assert checked is not None
    assert checked.sql.endswith("SELECT (SELECT count(*) FROM w0) AS c0")


class _Stale(Exception):
    pass


async def test_a_checked_write_that_touches_no_row_refuses_and_nothing_is_kept(
    engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    """Distil's finish is deferred with its stale-run check: a run no longer this claim (here:
    another attempt) raises where the writes go, on PostgreSQL from the one statement that
    also carried the memory and the ledger's row, and the unit keeps none of them."""
    room_id = await _room(engine, clock, "deferstale")
    participant = await db.scalar(
        select(Participant.id).where(Participant.room_id == room_id, Participant.key != "host")
    )
    assert participant is not None
    run = new_run(
        room_id=room_id, participant_id=participant, agent=AgentName.DISTIL, now=clock.now()
    )
    run.status, run.attempts = "running", 2
    await db.insert([run])
    await db.commit()
    before = await _stored(engine, room_id)

    async def finish(attempt: int) -> None:
        await db.execute(text("SELECT 1"))
        RunRepository(db).done_later(
            run.id, attempt, clock.now(), no_op=False, error=None, stale=_Stale
        )
        await _defer_closing_writes(db, room_id, clock)
        await db.commit()

    with statements(engine) as seen, pytest.raises(_Stale):
        await finish(1)
    await db.close()
    assert await _stored(engine, room_id) == before
    sent = [s for s, _ in seen if "agent_runs" in s]
    if engine.dialect.name == "postgresql":
        assert len(sent) == 1  # one statement with the rest
        assert "count(*) FROM w0" in sent[0]
    await finish(2)  # the claim's own attempt: done, and the rest kept
    await db.close()
    assert await _stored(engine, room_id) == _one_more_each(before)
    status = await db.scalar(select(AgentRun.status).where(AgentRun.id == run.id))
    assert status == "done"
