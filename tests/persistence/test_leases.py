"""The memory writer's lease in one statement each: the grant reads the room with it, and the
fenced release locks the room and reads its memory."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.leases import LeaseRepository
from dealroom.persistence.runs import RunRepository
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process

TERM = timedelta(seconds=60)


async def _grant(engine: AsyncEngine, clock: ManualClock, room_id: uuid.UUID, holder: str) -> int:
    db = Db(create_sessionmaker(engine))
    try:
        now = clock.now()
        token = await LeaseRepository(db).grant(room_id, holder, now, now + TERM)
        await db.commit()
    finally:
        await db.close()
    assert token is not None
    return token


async def test_a_stale_token_neither_releases_the_lease_nor_reads_the_room(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "leases")
    room_id = opened.room.id
    first = await _grant(engine, clock, room_id, "writer-a")
    clock.advance(TERM * 2)  # writer-a stalls past its lease; writer-b takes it
    second = await _grant(engine, clock, room_id, "writer-b")
    assert second == first + 1
    db = Db(create_sessionmaker(engine))
    try:
        leases = LeaseRepository(db)
        now = clock.now()
        assert await leases.release_locking(room_id, first, now) is None  # fenced off
        assert await leases.grant(room_id, "writer-c", now, now + TERM) is None  # still held
        locked = await leases.release_locking(room_id, second, now)
        assert locked is not None
        assert locked.kind == opened.room.kind
        assert await leases.release_locking(room_id, second, now) is None  # released once
    finally:
        await db.close()


async def test_a_grant_that_waited_for_the_previous_writer_reads_its_write(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """The next writer's grant waits on the lease row while the previous writer's write is in
    flight, and must then read the memory that write committed: a plain read in the grant's
    statement would see its snapshot, taken before the wait (the memory before the write)."""
    engine = pg_engine
    _, opened = await guest_room_in_process(engine, clock, "leasewait")
    room_id = opened.room.id
    token = await _grant(engine, clock, room_id, "writer-a")
    writer = Db(create_sessionmaker(engine))
    try:
        now = clock.now()
        locked = await LeaseRepository(writer).release_locking(room_id, token, now)
        assert locked is not None
        written = {**locked.memory, "deal": {"note": "written by writer-a"}}
        version = await RunRepository(writer).write_memory(room_id, written, now)

        async def next_grant() -> tuple[int, dict[str, object], int]:
            db = Db(create_sessionmaker(engine))
            try:
                granted = await LeaseRepository(db).grant_reading(
                    room_id, "writer-b", now, now + TERM
                )
                await db.commit()
            finally:
                await db.close()
            assert granted is not None
            return granted.token, granted.room.memory, granted.room.memory_version

        waiting = asyncio.create_task(next_grant())
        await asyncio.sleep(0.5)  # the grant is waiting on the lease row
        assert not waiting.done()
        await writer.commit()
    finally:
        await writer.close()
    second, memory, read_version = await asyncio.wait_for(waiting, 10)
    assert second == token + 1
    assert memory == written
    assert read_version == version
