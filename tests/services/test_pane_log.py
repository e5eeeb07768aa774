"""The pane log: one append that links each event to the pane's previous one, whoever wrote that,
and keeps idempotency, the rate limit and the guest cap in their order."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from dealroom.agents.models.base import AgentName
from dealroom.domain import pane_words
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.seats import AuthorKind, Seat
from dealroom.domain.sessions import SessionRule
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Message, Participant
from dealroom.persistence.repositories import RoomRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.live.events import MessageAddedEvent, decode, pane_channel
from dealroom.services.rooms import messages, pane_lines, pane_log
from dealroom.services.rooms.messages import PostLimits
from dealroom.services.rooms.pane_log import NotStored, Stored
from dealroom.services.turns.queue import new_run
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process


async def _post(
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    who: Identity,
    room_id: uuid.UUID,
    cid: str,
    *,
    per_minute: int = 1000,
    guest_cap: int | None = None,
) -> uuid.UUID:
    db = Db(create_sessionmaker(engine))
    try:
        view = await messages.post_message(
            db,
            broker,
            clock,
            who,
            room_id=room_id,
            body=f"body {cid}",
            client_message_id=cid,
            seat=None,
            limits=PostLimits(per_minute=per_minute),
            guest_cap=guest_cap,
        )
        await db.commit()
    finally:
        await db.close()
    return view.id


async def _visitor_pane(engine: AsyncEngine, room_id: uuid.UUID) -> uuid.UUID:
    db = Db(create_sessionmaker(engine))
    try:
        return (await RoomRepository(db).participants(room_id))[-1].id  # host < visitor
    finally:
        await db.close()


async def _append(
    engine: AsyncEngine, clock: ManualClock, pane_id: uuid.UUID, *, allowed: bool
) -> Stored | NotStored:
    """One participant post through the pane log, committed."""
    db = Db(create_sessionmaker(engine))
    try:
        done = await _append_uncommitted(db, clock, pane_id, allowed=allowed)
        await db.commit()
    finally:
        await db.close()
    return done


async def _append_uncommitted(
    db: Db, clock: ManualClock, pane_id: uuid.UUID, *, allowed: bool = True
) -> Stored | NotStored:
    """One participant post through the pane log in ``db``'s open transaction."""
    pane = await db.get(Participant, pane_id)
    assert pane is not None
    return await pane_log.append(
        db,
        pane,
        author_kind=AuthorKind.PARTICIPANT.value,
        body="hello",
        client_message_id="c-1",
        now=clock.now(),
        allowed=allowed,
    )


async def _agent_line(engine: AsyncEngine, clock: ManualClock, pane_id: uuid.UUID) -> int:
    """A line stored by a writer outside the pane log (an ORM row, as the room's welcome
    still is): the tail is the database's, whoever inserts."""
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.get(Participant, pane_id)
        assert pane is not None
        seq = await RoomRepository(db).next_event_seq(pane.room_id, clock.now())
        await db.add(
            Message(
                room_id=pane.room_id,
                participant_id=pane.id,
                seq=seq,
                author_kind=AuthorKind.AGENT.value,
                body="an agent's line",
                session_no=1,
                client_message_id=f"run:{uuid.uuid4()}",
                created_at=clock.now(),
            )
        )
        await db.commit()
    finally:
        await db.close()
    return seq


async def test_a_post_links_to_a_line_another_writer_stored(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "panelog")
    pane_id = await _visitor_pane(engine, opened.room.id)
    line = await _agent_line(engine, clock, pane_id)

    done = await _append(engine, clock, pane_id, allowed=True)

    assert isinstance(done, Stored)
    assert done.prev == line  # the tail the turn's insert left, not a scan of the pane
    assert done.row.seq == line + 1
    db = Db(create_sessionmaker(engine))
    try:
        assert await pane_log.pane_end(db, opened.room.id, pane_id) == done.row.seq
    finally:
        await db.close()


async def _line(
    engine: AsyncEngine, broker: Broker, clock: ManualClock, pane_id: uuid.UUID
) -> None:
    """A line the turn's way (``pane_lines.write_line``: an operator's or a system line),
    committed and published."""
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.get(Participant, pane_id)
        assert pane is not None
        _, publish = await pane_lines.write_line(
            db, clock, pane, "a line", author=AuthorKind.SYSTEM, key=f"line:{uuid.uuid4()}"
        )
        await db.commit()
    finally:
        await db.close()
    assert publish is not None
    await broker.publish(*publish)


async def test_lines_appended_twice_in_one_transaction_chain_and_leave_the_tail_on_the_last(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    """The persona's apply appends its reply and then a held send's question in one unit: the
    pane row it holds is older than both, so the tail is read under the lock each time."""
    _, opened = await guest_room_in_process(engine, clock, "panelog")
    pane_id = await _visitor_pane(engine, opened.room.id)
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.get(Participant, pane_id)
        assert pane is not None
        events = []
        for key in ("run:1", "held:1"):
            _, publish = await pane_lines.write_line(
                db, clock, pane, key, author=AuthorKind.AGENT, key=key
            )
            assert publish is not None
            event = decode(publish[1])
            assert isinstance(event, MessageAddedEvent)
            events.append(event)
        await db.commit()
        first, second = events
        assert second.prev == first.cursor
        assert await pane_log.pane_end(db, opened.room.id, pane_id) == second.cursor
    finally:
        await db.close()
    done = await _append(engine, clock, pane_id, allowed=True)
    assert isinstance(done, Stored)
    assert done.prev == second.cursor


async def test_the_turns_lines_take_their_session_by_rule(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    """S1-S4 through the append, the same on both backends (PostgreSQL decides in SQL)."""
    _, opened = await guest_room_in_process(engine, clock, "panelog")
    pane_id = await _visitor_pane(engine, opened.room.id)
    sessions = []
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.get(Participant, pane_id)
        assert pane is not None
        for gap, rule, author in [
            (timedelta(0), SessionRule.SITTING, AuthorKind.PARTICIPANT),  # S1
            (timedelta(hours=2), SessionRule.CONTINUES, AuthorKind.AGENT),  # S4: a slow reply
            (timedelta(minutes=31), SessionRule.OPENS, AuthorKind.AGENT),  # S3: a quiet pane
            (timedelta(minutes=1), SessionRule.OPENS, AuthorKind.AGENT),  # S3: a live sitting
            (timedelta(minutes=29), SessionRule.SITTING, AuthorKind.PARTICIPANT),  # S2: no pause
            (timedelta(minutes=31), SessionRule.SITTING, AuthorKind.PARTICIPANT),  # S2: a pause
            (timedelta(hours=5), SessionRule.CONTINUES, AuthorKind.SYSTEM),  # S4
        ]:
            clock.advance(gap)
            done = await pane_log.append(
                db,
                pane,
                author_kind=author.value,
                body="x",
                client_message_id=str(uuid.uuid4()),
                now=clock.now(),
                session=rule,
            )
            assert isinstance(done, Stored)
            sessions.append(done.row.session_no)
        await db.commit()
        stored = list(
            await db.scalars(
                select(Message.session_no)
                .where(Message.participant_id == pane_id)
                .order_by(Message.seq)
            )
        )
    finally:
        await db.close()
    assert sessions == [1, 1, 2, 2, 2, 3, 3]
    assert stored == sessions


async def test_concurrent_posts_and_turn_lines_in_one_pane_chain_each_event_to_the_one_before(
    engine: AsyncEngine, clock: ManualClock, broker: Broker
) -> None:
    guest, opened = await guest_room_in_process(engine, clock, "panelog")
    pane_id = await _visitor_pane(engine, opened.room.id)
    async with broker.subscribe([pane_channel(opened.room.id, Seat.VISITOR)]) as subscription:
        await asyncio.sleep(0.05)
        await asyncio.gather(
            *(_post(engine, broker, clock, guest, opened.room.id, f"c-{i}") for i in range(4)),
            *(_line(engine, broker, clock, pane_id) for _ in range(4)),
        )
        received: list[MessageAddedEvent] = []
        stream = aiter(subscription)
        while len(received) < 8:
            event = decode(await asyncio.wait_for(anext(stream), 5))
            assert isinstance(event, MessageAddedEvent)
            received.append(event)

    chain = sorted(received, key=lambda e: e.cursor)
    assert [e.prev for e in chain[1:]] == [e.cursor for e in chain[:-1]]


async def test_concurrent_posts_in_one_pane_chain_each_event_to_the_one_before(
    engine: AsyncEngine, clock: ManualClock, broker: Broker
) -> None:
    guest, opened = await guest_room_in_process(engine, clock, "panelog")
    async with broker.subscribe([pane_channel(opened.room.id, Seat.VISITOR)]) as subscription:
        await asyncio.sleep(0.05)
        await asyncio.gather(
            *(_post(engine, broker, clock, guest, opened.room.id, f"c-{i}") for i in range(8))
        )
        received: list[MessageAddedEvent] = []
        stream = aiter(subscription)
        while len(received) < 8:
            event = decode(await asyncio.wait_for(anext(stream), 5))
            assert isinstance(event, MessageAddedEvent)
            received.append(event)

    chain = sorted(received, key=lambda e: e.cursor)
    # Each event's prev is the cursor of the pane's event before it: read under the room's
    # lock, never from a snapshot taken before another post committed.
    assert [e.prev for e in chain[1:]] == [e.cursor for e in chain[:-1]]


async def test_a_retry_at_the_rate_limit_returns_the_original_and_a_new_post_waits(
    engine: AsyncEngine, clock: ManualClock, broker: Broker
) -> None:
    guest, opened = await guest_room_in_process(engine, clock, "panelog")
    room_id = opened.room.id
    await _post(engine, broker, clock, guest, room_id, "a", per_minute=2)
    clock.advance(timedelta(seconds=20))
    second = await _post(engine, broker, clock, guest, room_id, "b", per_minute=2)

    assert await _post(engine, broker, clock, guest, room_id, "b", per_minute=2) == second
    with pytest.raises(DomainError) as refused:
        await _post(engine, broker, clock, guest, room_id, "c", per_minute=2)
    assert refused.value.code == ErrorCode.RATE_LIMITED
    # the window opened at "a", 20 s (and a few of the clock's millisecond steps) ago
    assert refused.value.extensions["retryAfterSeconds"] == 39

    clock.advance(timedelta(seconds=40))
    await _post(engine, broker, clock, guest, room_id, "c", per_minute=2)


async def test_a_retry_of_the_post_that_reached_the_guest_cap_returns_the_original(
    engine: AsyncEngine, clock: ManualClock, broker: Broker
) -> None:
    guest, opened = await guest_room_in_process(engine, clock, "panelog")
    room_id = opened.room.id
    await _post(engine, broker, clock, guest, room_id, "a", guest_cap=2)
    capped = await _post(engine, broker, clock, guest, room_id, "b", guest_cap=2)

    assert await _post(engine, broker, clock, guest, room_id, "b", guest_cap=2) == capped
    with pytest.raises(DomainError) as refused:
        await _post(engine, broker, clock, guest, room_id, "c", guest_cap=2)
    assert refused.value.code == ErrorCode.FORBIDDEN


async def test_a_refused_append_stores_nothing_and_reports_no_wait(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    _, opened = await guest_room_in_process(engine, clock, "panelog")
    done = await _append(engine, clock, await _visitor_pane(engine, opened.room.id), allowed=False)
    assert done == NotStored(existing=None, retry_after=None)


async def test_a_run_can_be_queued_for_a_pane_while_a_post_into_it_holds_its_tail(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """The append locks the pane's row (its tail) until it commits; a job that queues a run for
    that pane meanwhile takes the foreign key's KEY SHARE lock on the same row. That must not
    wait: the post may itself be waiting on the job (its watch row), and a wait here was a
    deadlock on PostgreSQL."""
    engine = pg_engine
    _, opened = await guest_room_in_process(engine, clock, "panelog")
    pane_id = await _visitor_pane(engine, opened.room.id)
    db = Db(create_sessionmaker(engine))
    try:
        done = await _append_uncommitted(db, clock, pane_id)
        assert isinstance(done, Stored)  # the post is in flight: its locks are held
        async with engine.connect() as other:
            await other.execute(text("SET lock_timeout = '3s'"))
            run = new_run(
                room_id=opened.room.id,
                participant_id=pane_id,
                agent=AgentName.DISTIL,
                now=clock.now(),
            )
            async with AsyncSession(bind=other) as job:
                job.add(run)
                await job.flush()  # the FK check on the pane's row: must not wait
                await job.rollback()
        await db.commit()
    finally:
        await db.close()


@pytest.mark.parametrize("author", [AuthorKind.AGENT, AuthorKind.SYSTEM, AuthorKind.OPERATOR])
async def test_pw1_a_line_to_a_person_naming_a_stage_label_is_refused(
    engine: AsyncEngine, clock: ManualClock, author: AuthorKind
) -> None:
    """Every writer but the participant itself goes through the one check: a stage label or
    an internal field name never reaches a pane, and nothing is stored."""
    _, opened = await guest_room_in_process(engine, clock, "panewords")
    pane_id = await _visitor_pane(engine, opened.room.id)
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.get(Participant, pane_id)
        assert pane is not None
        for body in (
            "Stage: WRITTEN_AWAITING_BRAND — written offer drawn.",
            "It is BOOKED_AWAITING_PAYMENT now.",
            "Your pendingPrincipalDecisions say yes.",
        ):
            with pytest.raises(pane_words.LabelInLine):
                await pane_lines.write_line(db, clock, pane, body, author=author, key=body)
        _, publish = await pane_lines.write_line(
            db, clock, pane, "The written offer is ready.", author=author, key="plain"
        )
        assert publish is not None
        await db.commit()
        stored = await db.scalars(select(Message.body).where(Message.participant_id == pane_id))
        assert list(stored) == ["The written offer is ready."]
    finally:
        await db.close()


async def test_pw1_a_participant_may_write_a_label_themselves(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    """The check is on what the system writes to people, not on what people write."""
    _, opened = await guest_room_in_process(engine, clock, "panewords2")
    pane_id = await _visitor_pane(engine, opened.room.id)
    db = Db(create_sessionmaker(engine))
    try:
        pane = await db.get(Participant, pane_id)
        assert pane is not None
        done = await pane_log.append(
            db,
            pane,
            author_kind=AuthorKind.PARTICIPANT.value,
            body="what does WRITTEN_AWAITING_BRAND mean?",
            client_message_id="c-label",
            now=clock.now(),
        )
        assert isinstance(done, Stored)
        await db.commit()
    finally:
        await db.close()
