"""The pane stream against a broker that loses wake-ups: the database is the record."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence

from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.passwords import OWASP_MINIMUM
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.repositories import RoomRepository
from dealroom.realtime.broker import RESYNC, Broker, InProcessBroker, Subscription
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.identity import Identity, new_guest_key
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.live.events import (
    EphemeralEvent,
    MessageAddedEvent,
    StoredEvent,
    pane_channel,
)
from dealroom.services.live.heartbeats import Heartbeats
from dealroom.services.live.stream import LiveStream
from dealroom.services.rooms import messages
from dealroom.services.rooms import service as rooms
from tests.support.clock import ManualClock


class LossyBroker:
    """The edge faked: a broker that drops the publishes a test names (Redis pub/sub is
    at-most-once)."""

    def __init__(self, drop: set[int]) -> None:
        self.inner = InProcessBroker()
        self.drop = drop
        self.count = 0
        self.joined = asyncio.Event()
        """Set once a subscription has joined."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def publish(self, channel: str, payload: str) -> None:
        self.count += 1
        if self.count not in self.drop:
            await self.inner.publish(channel, payload)

    async def publish_many(self, published: Sequence[tuple[str, str]]) -> None:
        for channel, payload in published:
            await self.publish(channel, payload)

    def listening(self) -> list[str]:
        return self.inner.listening()

    def resync(self, channel: str) -> None:
        self.inner.resync(channel)

    async def ping(self) -> None:
        await self.inner.ping()

    def subscribe(
        self, channels: Iterable[str]
    ) -> contextlib.AbstractAsyncContextManager[Subscription]:
        return self.inner.subscribe(channels)

    async def join(self, sub: Subscription) -> None:
        await self.inner.join(sub)
        self.joined.set()

    async def leave(self, sub: Subscription) -> None:
        await self.inner.leave(sub)


async def _room(engine: AsyncEngine, clock: ManualClock) -> tuple[Identity, rooms.OpenedRoom]:
    db = Db(create_sessionmaker(engine))
    try:
        await accounts.sign_up(
            db,
            clock,
            passwords_for(OWASP_MINIMUM),
            email="h@example.com",
            password="long enough",
            handle="lossy",
            display_name="Lossy",
            ttl_days=1,
        )
        guest = Identity(signed_in=None, account=None, guest_key=new_guest_key())
        opened = await rooms.open_visitor_room(
            db, clock, guest, handle="lossy", new_conversation=False, greet=False
        )
        await db.commit()
    finally:
        await db.close()
    return guest, opened


async def _post(
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    who: Identity,
    room_id: uuid.UUID,
    body: str,
) -> int:
    db = Db(create_sessionmaker(engine))
    try:
        view = await messages.post_message(
            db,
            broker,
            clock,
            who,
            room_id=room_id,
            body=body,
            client_message_id=body.replace(" ", "-"),
            seat=None,
            limits=messages.PostLimits(per_minute=1000),
        )
        await db.commit()
    finally:
        await db.close()
    return view.seq


async def _collect(stream: AsyncIterator[MessageAddedEvent], count: int) -> list[MessageAddedEvent]:
    return [await asyncio.wait_for(anext(stream), 5) for _ in range(count)]


async def test_a_lost_wake_up_is_recovered_from_the_database_on_the_next_one(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    broker = LossyBroker(drop={2, 3})
    guest, opened = await _room(engine, clock)
    stream = await _follow_visitor_pane(engine, broker, opened.room.id, after=None)
    first = asyncio.ensure_future(anext(stream))
    # A stream with no cursor reads the pane's end before it joins: a post after the join
    # is after its start. (A fixed sleep here was a race on a busy machine, as the e2e
    # tests' was, docs/BENCHMARKS.md.)
    await asyncio.wait_for(broker.joined.wait(), 5)
    seqs = [await _post(engine, broker, clock, guest, opened.room.id, f"m {i}") for i in range(4)]
    events = [await asyncio.wait_for(first, 5), *await _collect(stream, 3)]
    assert [e.cursor for e in events] == seqs
    await stream.aclose()


async def test_a_resync_signal_rereads_without_duplicates(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    broker = LossyBroker(drop=set())
    guest, opened = await _room(engine, clock)
    stream = await _follow_visitor_pane(engine, broker, opened.room.id, after=0)
    first_seq = await _post(engine, broker, clock, guest, opened.room.id, "one")
    assert (await asyncio.wait_for(anext(stream), 5)).cursor == first_seq
    broker.drop = {broker.count + 1}
    lost_seq = await _post(engine, broker, clock, guest, opened.room.id, "two")
    next_event = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    await broker.inner.publish(pane_channel(opened.room.id, Seat.VISITOR), RESYNC)
    assert (await asyncio.wait_for(next_event, 5)).cursor == lost_seq
    third = await _post(engine, broker, clock, guest, opened.room.id, "three")
    assert (await asyncio.wait_for(anext(stream), 5)).cursor == third
    await stream.aclose()


async def test_a_reread_the_database_cannot_serve_is_tried_again_not_fatal(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    """With thousands of subscriptions held, heartbeat re-reads met a full pool: each timed
    out and ended its stream INTERNAL. The events are still in the database and the cursor
    has not moved, so the stream waits for its next wake-up instead."""
    broker = LossyBroker(drop=set())
    guest, opened = await _room(engine, clock)
    tight = create_engine(engine.url.render_as_string(hide_password=False), pool_timeout=0.3)
    try:
        stream = await _follow_visitor_pane(
            tight, broker, opened.room.id, after=0, rereads=asyncio.Semaphore(1)
        )
        first_seq = await _post(engine, broker, clock, guest, opened.room.id, "one")
        assert (await asyncio.wait_for(anext(stream), 5)).cursor == first_seq
        broker.drop = {broker.count + 1}
        lost_seq = await _post(engine, broker, clock, guest, opened.room.id, "two")
        next_event = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.05)
        channel = pane_channel(opened.room.id, Seat.VISITOR)
        async with contextlib.AsyncExitStack() as held:
            with contextlib.suppress(PoolTimeout):
                while True:  # every connection of the stream's pool taken
                    await held.enter_async_context(tight.connect())
            await broker.inner.publish(channel, RESYNC)
            await asyncio.sleep(1.0)  # its re-read waited 0.3 s for the pool and gave up
            assert not next_event.done(), next_event
        await broker.inner.publish(channel, RESYNC)
        assert (await asyncio.wait_for(next_event, 5)).cursor == lost_seq
        await stream.aclose()
    finally:
        await tight.dispose()


async def test_the_process_heartbeat_wakes_only_a_stream_behind_the_database(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    """A wake-up lost for good (a publish that failed, a process killed after its commit)
    is caught by the process's heartbeat: one read of where every followed pane ends, and a
    RESYNC only for the streams that have not delivered it. Up to date, nobody re-reads."""
    broker = LossyBroker(drop=set())
    beats = Heartbeats(create_sessionmaker(engine), every=3600)  # beaten by hand here
    guest, opened = await _room(engine, clock)
    stream = await _follow_visitor_pane(engine, broker, opened.room.id, after=0, heartbeats=beats)
    first_seq = await _post(engine, broker, clock, guest, opened.room.id, "one")
    assert (await asyncio.wait_for(anext(stream), 5)).cursor == first_seq
    assert await beats.beat() == 0  # up to date: not woken, no re-read
    broker.drop = {broker.count + 1}
    lost_seq = await _post(engine, broker, clock, guest, opened.room.id, "two")
    next_event = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.3)
    assert not next_event.done()  # the wake-up was lost and nothing idles the stream awake
    assert await beats.beat() == 1
    assert (await asyncio.wait_for(next_event, 5)).cursor == lost_seq
    assert await beats.beat() == 0
    await stream.aclose()
    await _post(engine, broker, clock, guest, opened.room.id, "three")  # behind it, if followed
    assert await beats.beat() == 0  # a closed stream is followed no more


async def _follow_visitor_pane(
    engine: AsyncEngine,
    broker: Broker,
    room_id: uuid.UUID,
    *,
    after: int | None,
    rereads: asyncio.Semaphore | None = None,
    heartbeats: Heartbeats | None = None,
) -> AsyncGenerator[MessageAddedEvent, None]:
    db = Db(create_sessionmaker(engine))
    try:
        participants = await RoomRepository(db).participants(room_id)
    finally:
        await db.close()
    visitor = next(p for p in participants if p.key == Seat.VISITOR)
    return _stored_only(
        messages.follow_pane(
            create_sessionmaker(engine),
            broker,
            room_id=room_id,
            participant_id=visitor.id,
            seat=Seat.VISITOR,
            after=after,
            rereads=rereads,
            heartbeats=heartbeats,
        )
    )


async def _stored_only(
    stream: LiveStream[StoredEvent, EphemeralEvent],
) -> AsyncGenerator[MessageAddedEvent, None]:
    """Stored events (no agents run here, so nothing ephemeral is published anyway)."""
    try:
        async for event in stream:
            if isinstance(event, MessageAddedEvent):
                yield event
    finally:
        await stream.aclose()
