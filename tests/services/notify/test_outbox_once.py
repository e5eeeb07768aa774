"""A notification's source is written once even when two units write it at once (the Guard's
daily note and a persona's, two workers replaying one event): the unique source decides in the
insert, so neither unit rolls back. On PostgreSQL both units run truly at once, each having
checked before the other committed."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.notifications import NotificationRepository
from dealroom.services.notify import outbox
from dealroom.services.notify.outbox import Note
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.notify import People, host_and_brand, host_note, stored

UNITS = 4


async def _write_after_all_checked(
    engine: AsyncEngine, clock: ManualClock, note: Note, checked: asyncio.Barrier | None
) -> int:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        if checked is not None:
            # Every unit reads the source as unwritten before any of them inserts it.
            assert not await NotificationRepository(unit.db).written([note.source])
            await checked.wait()
        written = await outbox.write(unit.db, clock.now(), [note])
        return len(written.rows)


async def test_one_source_written_by_units_at_once_is_one_row_and_no_unit_fails(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    people: People = await host_and_brand(engine, clock)
    note = host_note(people, 0)
    # SQLite runs one writing unit at a time (BEGIN IMMEDIATE): there they only queue.
    checked = asyncio.Barrier(UNITS) if engine.dialect.name == "postgresql" else None
    results = await asyncio.gather(
        *(_write_after_all_checked(engine, clock, note, checked) for _ in range(UNITS)),
        return_exceptions=True,
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert sorted(r for r in results if isinstance(r, int)) == [0, 0, 0, 1]
    assert [n.source for n in await stored(engine)] == [note.source]
