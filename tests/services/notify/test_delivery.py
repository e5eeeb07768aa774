"""The notification outbox and its delivery over real SMTP (aiosmtpd on a loopback port): rows
written with the fact's transaction, leases, retries with backoff, 5xx failures, an outage, no
SMTP at all, coalescing and the Message-ID."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
import structlog
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.jobs.notify_delivery import NotifyWorker, backoff
from dealroom.persistence.engine import create_sessionmaker
from dealroom.realtime import Broker
from dealroom.services.notify import outbox, preferences, render
from dealroom.services.notify.kinds import Kind
from dealroom.services.notify.outbox import Note
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.mailbox import Mailbox, mailbox
from tests.support.notify import People, brand_note, host_and_brand, host_note, stored


@pytest.fixture
def box() -> Iterator[Mailbox]:
    with mailbox() as running:
        yield running


def make_worker(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, **changes: object
) -> NotifyWorker:
    tuned = settings.model_copy(
        update={"public_url": "https://deals.example.com", "smtp_timeout_seconds": 2.0} | changes
    )
    return NotifyWorker(tuned, create_sessionmaker(engine), broker, clock)


async def write(engine: AsyncEngine, clock: ManualClock, *notes: Note) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        await outbox.write(unit.db, clock.now(), list(notes))


@pytest.fixture
async def people(engine: AsyncEngine, clock: ManualClock) -> People:
    return await host_and_brand(engine, clock)


async def test_an_email_goes_once_with_a_message_id_derived_from_the_notification(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    await write(engine, clock, host_note(people))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    assert await worker.run_once() == 1
    assert await worker.run_once() == 0  # nothing sent twice
    (email,) = box.received
    (row,) = await stored(engine)
    assert row.status == "sent"
    assert email.recipients == ["devraman@example.com"]
    assert email.message["Message-ID"] == f"<{row.id}@deals.example.com>"
    assert f"https://deals.example.com/r/{people.room_id}" in email.text
    assert email.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert email.message["List-Unsubscribe"].startswith(
        "<https://deals.example.com/notifications/unsubscribe?t="
    )
    assert "Why you got this: Your agent asked you something" in email.text
    assert email.html
    assert "Open the room" in email.html


async def test_a_rolled_back_fact_writes_no_notification(
    engine: AsyncEngine, clock: ManualClock, people: People
) -> None:
    async def failing_fact() -> None:
        async with UnitOfWork(create_sessionmaker(engine)) as unit:
            await outbox.write(unit.db, clock.now(), [host_note(people)])
            raise RuntimeError("the fact's transaction fails")

    with pytest.raises(RuntimeError):
        await failing_fact()
    assert await stored(engine) == []


async def test_a_source_is_written_once(
    engine: AsyncEngine, clock: ManualClock, people: People
) -> None:
    await write(engine, clock, host_note(people))
    await write(engine, clock, host_note(people))
    assert len(await stored(engine)) == 1


async def test_without_smtp_each_notification_is_kept_with_one_log_line(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, people: People
) -> None:
    await write(engine, clock, host_note(people, 1), brand_note(people, 2))
    worker = make_worker(settings, engine, broker, clock, smtp_url=None)
    with structlog.testing.capture_logs() as logs:
        await worker.run_once()
    kept = [entry for entry in logs if entry["event"] == "notification_kept"]
    assert len(kept) == 2
    assert {entry["to"] for entry in kept} == {"devraman@example.com", "acmebrand@example.com"}
    rows = await stored(engine)
    assert [r.status for r in rows] == ["kept", "kept"]
    assert all(r.sent_at is None for r in rows)  # nothing pretends to be sent


async def test_a_kept_invitation_logs_its_link_without_the_token(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, people: People
) -> None:
    """The link admits whoever holds it: a log line names the invitation, never its token."""
    invited = host_note(
        people,
        3,
        account_id=None,
        address="newcomer@example.com",
        kind=Kind.INVITATION,
        link="/invite/SECRET-TOKEN",
    )
    await write(engine, clock, invited)
    worker = make_worker(settings, engine, broker, clock, smtp_url=None)
    with structlog.testing.capture_logs() as logs:
        await worker.run_once()
    (kept,) = [entry for entry in logs if entry["event"] == "notification_kept"]
    assert kept["to"] == "newcomer@example.com"
    assert kept["link"].endswith("/invite/…")
    assert "SECRET-TOKEN" not in json.dumps(logs, default=str)


async def test_a_5xx_fails_with_the_reason_and_is_never_retried(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    box.handler.rcpt_answer = "550 5.1.1 No such user here"
    await write(engine, clock, host_note(people))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    assert await worker.run_once() == 1
    clock.advance(timedelta(days=2))
    assert await worker.run_once() == 0
    (row,) = await stored(engine)
    assert row.status == "failed"
    assert row.attempts == 1
    assert row.last_error is not None
    assert "550" in row.last_error
    assert "No such user" in row.last_error


async def test_a_4xx_retries_with_bounded_backoff_then_sends(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    box.handler.answer = "451 4.3.0 Try again later"
    await write(engine, clock, host_note(people))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    assert await worker.run_once() == 1
    (row,) = await stored(engine)
    assert (row.status, row.attempts) == ("pending", 1)
    assert row.last_error is not None
    assert "451" in row.last_error
    assert await worker.run_once() == 0  # not due before its backoff
    clock.advance(backoff(worker.settings, 1))
    assert await worker.run_once() == 1
    box.handler.answer = None
    clock.advance(backoff(worker.settings, 2))
    assert await worker.run_once() == 1
    (row,) = await stored(engine)
    assert (row.status, row.attempts) == ("sent", 3)
    assert len(box.received) == 1
    assert [backoff(worker.settings, n).total_seconds() for n in (1, 2, 3)] == [30, 60, 120]
    assert backoff(worker.settings, 40) == timedelta(
        seconds=worker.settings.notify_retry_cap_seconds
    )


async def test_temporary_failures_stop_at_the_attempt_bound(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    box.handler.answer = "421 4.7.0 Busy"
    await write(engine, clock, host_note(people))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url, notify_max_attempts=3)
    for _ in range(5):
        await worker.run_once()
        clock.advance(timedelta(hours=2))
    (row,) = await stored(engine)
    assert (row.status, row.attempts) == ("failed", 3)


async def test_a_server_that_refuses_then_times_out_then_recovers_gets_the_email_once(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    await write(engine, clock, host_note(people))
    worker = make_worker(
        settings, engine, broker, clock, smtp_url=box.url, smtp_timeout_seconds=0.5
    )
    box.stop()  # connections refused
    assert await worker.run_once() == 1
    (row,) = await stored(engine)
    assert row.status == "pending"
    assert row.last_error is not None
    refused = row.last_error
    box.start()
    box.handler.stall = 1.5  # past the client's timeout
    clock.advance(timedelta(hours=1))
    assert await worker.run_once() == 1
    (row,) = await stored(engine)
    assert row.status == "pending"
    assert row.last_error not in (None, refused)
    box.handler.stall = 0.0
    box.handler.received.clear()  # the stalled DATA may still land after the client gave up
    clock.advance(timedelta(hours=1))
    assert await worker.run_once() == 1
    (row,) = await stored(engine)
    assert (row.status, row.attempts) == ("sent", 3)
    ids = {r.message["Message-ID"] for r in box.received}
    assert ids == {f"<{row.id}@deals.example.com>"}


async def test_a_send_whose_worker_died_is_sent_again_after_the_lease_with_the_same_id(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    await write(engine, clock, host_note(people))
    dead = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    claims = await dead.claim()  # claimed, then the process is gone before it records
    assert len(claims) == 1
    alive = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    assert await alive.run_once() == 0  # the lease holds
    clock.advance(timedelta(seconds=settings.notify_lease_seconds + 1))
    assert await alive.run_once() == 1
    (row,) = await stored(engine)
    assert row.status == "sent"
    assert claims[0].email["Message-ID"] == box.received[0].message["Message-ID"]


async def test_five_events_in_a_window_make_one_email(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    await write(engine, clock, *(host_note(people, n) for n in range(5)))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    await worker.run_once()
    (email,) = box.received
    for n in range(5):
        assert f"Question number {n}" in email.text
    assert "(and 4 more)" in email.subject
    # a sixth inside the window waits for the window's end, then goes alone
    clock.advance(timedelta(minutes=5))
    await write(engine, clock, host_note(people, 5))
    assert await worker.run_once() == 0
    clock.advance(timedelta(minutes=settings.notify_coalesce_minutes))
    assert await worker.run_once() == 1
    assert len(box.received) == 2
    assert "Question number 5" in box.received[1].text
    statuses = sorted(r.status for r in await stored(engine))
    assert statuses == ["joined"] * 4 + ["sent"] * 2


def test_the_message_id_is_the_notifications() -> None:
    import uuid

    nid = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert render.message_id(nid, "https://x.example/") == f"<{nid}@x.example>"


async def test_digested_kinds_go_as_one_email_a_day(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    stage = {"kind": Kind.STAGE}
    await write(engine, clock, host_note(people, 1, **stage), host_note(people, 2, **stage))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    assert await worker.run_once() == 0  # a digest waits
    clock.advance(timedelta(hours=12))
    await write(engine, clock, host_note(people, 3, **stage))
    assert await worker.run_once() == 0
    clock.advance(timedelta(hours=12, minutes=1))
    assert await worker.run_once() == 1
    (email,) = box.received
    for n in (1, 2, 3):
        assert f"Question number {n}" in email.text
    assert email.subject.startswith("Your daily digest")
    assert await worker.run_once() == 0
    rows = await stored(engine)
    assert sorted(r.status for r in rows) == ["joined", "joined", "joined", "sent"]


async def test_a_kind_turned_off_is_listed_but_never_emailed(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        await preferences.set_modes(unit.db, people.host.id, [("decision", "off")], clock.now())
    await write(engine, clock, host_note(people))
    worker = make_worker(settings, engine, broker, clock, smtp_url=box.url)
    assert await worker.run_once() == 0
    (row,) = await stored(engine)
    assert row.status == "kept"
    assert box.received == []
