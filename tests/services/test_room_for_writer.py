"""``postMessage``'s room: the room and its participants in one statement, the same seats as a
reader's, and never the room's memory document, which a writer of a pane does not read (decoding it
on every post is wasted work)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.services.accounts.identity import Identity, new_guest_key
from dealroom.services.rooms.service import room_for_reader, room_for_writer
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process


async def test_a_writer_gets_the_readers_seats_in_one_statement_without_memory(
    engine: AsyncEngine, db: Db, clock: ManualClock, count_statements: Callable[[], Any]
) -> None:
    guest, opened = await guest_room_in_process(engine, clock, "writerroom")
    reader = Db(create_sessionmaker(engine))  # one unit at a time: SQLite's pool is one
    try:
        read = await room_for_reader(reader, guest, opened.room.id)
    finally:
        await reader.close()
    with count_statements() as seen:
        written = await room_for_writer(db, guest, opened.room.id)
    assert len(seen) == 1
    assert written.seats == read.seats
    assert [(p.id, p.key) for p in written.participants] == [
        (p.id, p.key) for p in read.participants
    ]
    assert (written.room.id, written.room.mode) == (read.room.id, read.room.mode)
    assert [(p.account_id, p.guest_key_hash, p.room_id) for p in written.participants] == [
        (p.account_id, p.guest_key_hash, p.room_id) for p in read.participants
    ]
    assert not hasattr(written.room, "memory")  # plain rows: nothing to load behind its back
    # the same unit reading the room afterwards gets it whole
    again = await room_for_reader(db, guest, opened.room.id)
    assert again.room.memory == read.room.memory


async def test_a_stranger_or_a_missing_room_is_not_found(
    engine: AsyncEngine, db: Db, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "writerhidden")
    stranger = Identity(signed_in=None, account=None, guest_key=new_guest_key())
    for room_id in (opened.room.id, opened.room.host_account_id):  # the second is no room
        with pytest.raises(DomainError) as refused:
            await room_for_writer(db, stranger, room_id)
        assert refused.value.code == ErrorCode.NOT_FOUND
