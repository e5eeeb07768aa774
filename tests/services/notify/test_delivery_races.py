"""Delivery under concurrency. Coalescing (ND2): events for one room that commit at once,
claimed by several delivery workers at once, make exactly one email carrying every line; an
event that commits while that email is out waits for the window instead of going as a second
one. Leases (ND1): a batch whose later sends outlast the lease taken at claim does not send
what another worker has claimed since. On PostgreSQL the writers and the workers run on
connections of their own, truly at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.jobs.notify_delivery import NotifyWorker
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.notifications import NotificationRepository
from dealroom.realtime import Broker
from dealroom.services.notify import outbox
from dealroom.services.notify.outbox import Note
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.mailbox import Mailbox, mailbox
from tests.support.notify import People, host_and_brand, host_note, stored

EVENTS = 8
WORKERS = 4


@pytest.fixture
def box() -> Iterator[Mailbox]:
    with mailbox() as running:
        yield running


@pytest.fixture
async def people(engine: AsyncEngine, clock: ManualClock) -> People:
    return await host_and_brand(engine, clock)


def workers(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    **changes: object,
) -> list[NotifyWorker]:
    # One email a pass each: every worker starts its pass on a different row of the room.
    tuned = settings.model_copy(
        update={"smtp_url": box.url, "smtp_timeout_seconds": 5.0, "notify_batch": 1} | changes
    )
    return [NotifyWorker(tuned, create_sessionmaker(engine), broker, clock) for _ in range(WORKERS)]


async def write_one(engine: AsyncEngine, clock: ManualClock, note: Note) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        await outbox.write(unit.db, clock.now(), [note])


async def test_events_committed_at_once_and_claimed_at_once_make_one_email(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    await asyncio.gather(*(write_one(engine, clock, host_note(people, n)) for n in range(EVENTS)))
    passes = await asyncio.gather(
        *(w.run_once() for w in workers(settings, engine, broker, clock, box)),
        return_exceptions=True,
    )
    assert [p for p in passes if isinstance(p, BaseException)] == []
    (email,) = box.received
    for n in range(EVENTS):
        assert f"Question number {n}" in email.text
    assert f"(and {EVENTS - 1} more)" in email.subject
    statuses = sorted(r.status for r in await stored(engine))
    assert statuses == ["joined"] * (EVENTS - 1) + ["sent"]


async def test_an_event_committed_while_the_rooms_email_is_out_waits_for_the_window(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    first, second, *_ = workers(settings, engine, broker, clock, box)
    await write_one(engine, clock, host_note(people, 0))
    (out,) = await first.claim()  # the room's email is out: claimed, not yet answered
    await write_one(engine, clock, host_note(people, 1))
    assert await second.run_once() == 0  # not a second email inside the window
    assert box.received == []
    assert await first.run_once() == 0  # nothing else due: the first worker's send is its own
    clock.advance(timedelta(seconds=settings.notify_lease_seconds + 1))
    # the first worker died mid-send: its email goes again (same id), the late event joins it
    assert await second.run_once() == 1
    (email,) = box.received
    assert email.message["Message-ID"] == out.email["Message-ID"]
    assert "Question number 0" in email.text
    assert "Question number 1" in email.text
    assert sorted(r.status for r in await stored(engine)) == ["joined", "sent"]


async def test_events_racing_the_workers_each_arrive_once_one_email_a_window(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    pool = workers(settings, engine, broker, clock, box)

    async def deliver(worker: NotifyWorker) -> None:
        for _ in range(EVENTS):
            await worker.run_once()
            await asyncio.sleep(0)

    outcomes = await asyncio.gather(
        *(write_one(engine, clock, host_note(people, n)) for n in range(EVENTS)),
        *(deliver(w) for w in pool),
        return_exceptions=True,
    )
    assert [o for o in outcomes if isinstance(o, BaseException)] == []
    await pool[0].run_once()  # in case every pass ran before the first commit
    assert len(box.received) == 1  # one email inside the window, however the race fell
    clock.advance(timedelta(minutes=settings.notify_coalesce_minutes, seconds=1))
    for worker in pool:
        await worker.run_once()
    assert len(box.received) <= 2
    lines = [n for email in box.received for n in range(EVENTS) if f"number {n}" in email.text]
    assert sorted(lines) == list(range(EVENTS))  # every line, once
    assert all(r.status in ("sent", "joined") for r in await stored(engine))


async def test_a_batch_whose_lease_ran_out_does_not_send_what_another_worker_claimed(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    slow, fast, *_ = workers(
        settings, engine, broker, clock, box, notify_batch=20, notify_coalesce_minutes=0
    )
    for n in range(3):
        await write_one(engine, clock, host_note(people, n))
    claims = await slow.claim()
    assert len(claims) == 3
    # the slow worker's first send takes longer than the lease it took for the whole batch
    clock.advance(timedelta(seconds=settings.notify_lease_seconds + 1))
    assert await fast.run_once() == 3
    assert await slow.deliver(claims) == 0
    assert len(box.received) == 3  # none twice
    assert [r.status for r in await stored(engine)] == ["sent"] * 3


async def test_a_room_another_worker_is_deciding_is_skipped_not_waited_for(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one claim at a time (BEGIN IMMEDIATE)")
    (worker, *_) = workers(settings, engine, broker, clock, box)
    await write_one(engine, clock, host_note(people, 0))
    async with UnitOfWork(create_sessionmaker(engine)) as deciding:
        repo = NotificationRepository(deciding.db)
        assert await repo.hold_room(people.host.id, people.room_id)
        assert await asyncio.wait_for(worker.run_once(), timeout=30) == 0
        assert box.received == []
    assert await worker.run_once() == 1
