"""``Db.insert``: the model ledger's rows in one Core ``INSERT``, without the session's flush, in
the caller's transaction."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import ModelCall
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process
from tests.support.turns import ledger_row


async def _stored(engine: AsyncEngine, room_id: uuid.UUID) -> list[tuple[uuid.UUID, str]]:
    db = Db(create_sessionmaker(engine))
    try:
        rows = await db.execute(
            select(ModelCall.id, ModelCall.agent)
            .where(ModelCall.room_id == room_id)
            .order_by(ModelCall.agent)
        )
        return [(row.id, row.agent) for row in rows]
    finally:
        await db.close()


async def test_rows_are_inserted_with_their_defaults_and_never_enter_the_session(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "ledgerinsert")
    room_id = opened.room.id
    calls = [
        ledger_row(room_id, clock.now(), agent="distil"),
        ledger_row(room_id, clock.now(), agent="persona"),
    ]
    db = Db(create_sessionmaker(engine))
    try:
        await db.insert(calls)
        assert not any(call in db.session for call in calls)  # no flush, no identity map
        await db.commit()
    finally:
        await db.close()

    stored = await _stored(engine, room_id)
    assert [agent for _, agent in stored] == ["distil", "persona"]
    assert all(isinstance(id_, uuid.UUID) for id_, _ in stored)  # the column's default


async def test_rows_roll_back_with_the_transaction(engine: AsyncEngine, clock: ManualClock) -> None:
    _, opened = await guest_room_in_process(engine, clock, "ledgerrollback")
    room_id = opened.room.id
    db = Db(create_sessionmaker(engine))
    try:
        await db.insert([ledger_row(room_id, clock.now())])
        count = await db.scalar(
            select(func.count(ModelCall.id)).where(ModelCall.room_id == room_id)
        )
        assert count == 1  # inside the transaction
        await db.rollback()
    finally:
        await db.close()

    assert await _stored(engine, room_id) == []


async def test_rows_that_set_different_attributes_are_refused(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "ledgermixed")
    bare = ModelCall(room_id=opened.room.id, agent="persona", engine="offline", model="m")
    db = Db(create_sessionmaker(engine))
    try:
        with pytest.raises(ValueError, match="set the same attributes"):
            await db.insert([ledger_row(opened.room.id, clock.now()), bare])
    finally:
        await db.close()
