"""``Db.write_autocommit``: a post that is its unit's only write goes to PostgreSQL as one
statement, its deferred writes (the runs, the room's watch, the cross-room count) folded into the
pane log's append (``raw_lane.folded``), without BEGIN or COMMIT. The statement commits on its
own; when it stores nothing, nothing in it is kept."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Select, event, func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Session
from sqlalchemy.pool import QueuePool

from dealroom.domain.seats import AuthorKind
from dealroom.jobs import watches
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.messages import NewMessage
from dealroom.persistence.models import AgentRun, Message, Participant, Room, RoomWatch, Throttle
from dealroom.services.accounts import throttle
from dealroom.services.rooms import pane_log
from dealroom.services.turns.queue import queue_for_message
from tests.support.clock import ManualClock
from tests.support.rooms import guest_pane
from tests.support.statements import heard

LIMIT = throttle.Limit("posts", 2, timedelta(minutes=1))


async def _stored(engine: AsyncEngine, pane: Participant) -> tuple[int, int, int, int, int]:
    """Read on a connection of its own: the room's event number, the pane's messages, its
    runs, the watch's generation and the cross-room count."""
    db = Db(create_sessionmaker(engine))
    try:

        async def count(statement: Select[Any]) -> int:
            return int(await db.scalar(statement) or 0)

        return (
            await count(select(Room.event_seq).where(Room.id == pane.room_id)),
            await count(
                select(func.count()).select_from(Message).where(Message.participant_id == pane.id)
            ),
            await count(
                select(func.count()).select_from(AgentRun).where(AgentRun.participant_id == pane.id)
            ),
            await count(select(RoomWatch.generation).where(RoomWatch.room_id == pane.room_id)),
            await count(select(func.coalesce(func.sum(Throttle.count), 0))),
        )
    finally:
        await db.close()


async def _post_autocommit(
    db: Db, pane: Participant, clock: ManualClock, client_id: str
) -> pane_log.StoredAutocommit | None:
    """What ``postMessage`` does on its one-statement path (``services/rooms/messages``)."""
    assert await db.can_write_autocommit()
    now = clock.now()
    new = NewMessage(
        id=uuid.uuid4(),
        room_id=pane.room_id,
        participant_id=pane.id,
        author_kind=AuthorKind.PARTICIPANT.value,
        author_account_id=None,
        body="Two sponsored posts in March?",
        client_message_id=client_id,
        created_at=now,
    )
    await queue_for_message(db, pane.room_id, pane.id, new.id, now)
    watches.arm(db, pane.room_id, now)
    await throttle.hit_at_commit(db, LIMIT, "g:autocommit", now, "too many")
    return await pane_log.append_autocommit(
        db, new, per_minute=10, session_pause=timedelta(minutes=30)
    )


async def test_an_autocommitted_post_is_one_statement_committed_before_the_unit_commits(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    pane = await guest_pane(pg_engine, clock, "autopost")
    seq, messages, runs, generation, counted = await _stored(pg_engine, pane)
    db = Db(create_sessionmaker(pg_engine))
    try:
        with heard(pg_engine, lambda statement, by_raw_lane: (statement, by_raw_lane)) as seen:
            stored = await _post_autocommit(db, pane, clock, "c1")
        assert stored is not None
        assert stored.seq == seq + 1
        assert len(seen) == 1, seen
        statement, by_raw_lane = seen[0]
        assert by_raw_lane
        assert statement.startswith("WITH s AS (")
        # Another connection sees it all while this unit has neither committed nor begun.
        assert await _stored(pg_engine, pane) == (
            seq + 1,
            messages + 1,
            runs + 2,
            generation + 1,
            counted + 1,
        )
        await db.commit()
    finally:
        await db.close()


_ROOM_SEQ = select(Room.event_seq).where(Room.id.is_(None))  # built once, as the raw lane wants


async def test_a_unit_that_reads_and_autocommits_makes_no_session_and_one_checkout(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """The room's read and the post run on one connection of the unit's own, outside any
    ORM session (``Db._autocommit_driver``), and it goes back to the pool at the commit."""
    pane = await guest_pane(pg_engine, clock, "autoconn")
    sessions: list[object] = []
    checkouts: list[object] = []

    def session_began(_session: Any, transaction: Any) -> None:
        sessions.append(transaction)

    def checked_out(*args: Any) -> None:
        checkouts.append(args[0])

    pool = pg_engine.sync_engine.pool
    assert isinstance(pool, QueuePool)
    event.listen(Session, "after_transaction_create", session_began)
    event.listen(pool, "checkout", checked_out)
    db = Db(create_sessionmaker(pg_engine))
    try:
        await db.rows(_ROOM_SEQ, {}, begin=False)
        assert await _post_autocommit(db, pane, clock, "c1") is not None
        assert pool.checkedout() == 1
        await db.commit()
        assert pool.checkedout() == 0
    finally:
        await db.close()
        event.remove(Session, "after_transaction_create", session_began)
        event.remove(pool, "checkout", checked_out)
    assert (sessions, len(checkouts)) == ([], 1)


@pytest.mark.parametrize(
    ("posted", "refused"),
    [(("c1",), "c1"), (("c1", "c2"), "c3")],
    ids=["a retry", "past the cross-room count"],
)
async def test_an_autocommitted_post_that_stores_nothing_writes_nothing_not_even_its_seq_number(
    pg_engine: AsyncEngine, clock: ManualClock, posted: tuple[str, ...], refused: str
) -> None:
    """A retry of a stored post, or a post past ``LIMIT`` (two): the runs, the watch, the
    count and the room's sequence number all stay as they were."""
    pane = await guest_pane(pg_engine, clock, "autonothing")
    db = Db(create_sessionmaker(pg_engine))
    try:
        for client_id in posted:
            assert await _post_autocommit(db, pane, clock, client_id) is not None
            await db.commit()
        before = await _stored(pg_engine, pane)

        assert await _post_autocommit(db, pane, clock, refused) is None

        assert await _stored(pg_engine, pane) == before
        await db.commit()  # nothing deferred is left to send
        assert await _stored(pg_engine, pane) == before
    finally:
        await db.close()


async def test_a_unit_that_has_begun_or_deferred_cannot_write_autocommit(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    """Nor can any unit on SQLite, whose writes always go in a transaction."""
    pane = await guest_pane(engine, clock, "autobegun")
    db = Db(create_sessionmaker(engine))
    try:
        assert await db.can_write_autocommit() is (engine.dialect.name == "postgresql")
        watches.arm(db, pane.room_id, clock.now())
        assert not await db.can_write_autocommit()
        await db.rollback()
        await db.execute(text("SELECT 1"))
        assert not await db.can_write_autocommit()
    finally:
        await db.close()
