"""Notification benchmark: what the outbox costs a turn and a stage change, and emails per
minute one delivery worker sends to a local SMTP server.

Method. A migrated database (SQLite in a temporary file) holds a host
and a signed-in brand in a deal room, made as rows.

``--pg``: PostgreSQL in a throwaway database instead.

(1) statements and CPU added by the outbox, counted on the engine (every statement the
    trigger runs), CPU from ``time.process_time`` over ``--calls`` calls each:
    - ``after_turn`` for a turn that concerns nobody (a host-pane reply with no delivery: the
      common case) against one that notifies (a brand's question delivered into the host's
      pane with nothing sent back: a decision waits);
    - ``stage_recorded`` for a stage nobody is told about (PENDING_PAY_CAPTURE) against one
      that notifies (WRITTEN_AWAITING_BRAND);
    - a ``postMessage`` (the service), which has no notification code in its path.
(2) throughput: ``--emails`` notifications to distinct sources (coalescing off) are written,
    then one NotifyWorker drains them to an aiosmtpd server on loopback; the baseline, in the
    same run, is the same number of bare ``aiosmtplib.send`` calls of one rendered message to
    the same server. Emails per minute of each, and the ratio.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosmtplib
from _client import DEFAULT_PG_URL, create_pg_database, drop_pg_database, machine_summary
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.jobs.notify_delivery import NotifyWorker
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Dispatch, Offer, OfferEvent, Participant
from dealroom.realtime.broker import InProcessBroker
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import SystemClock
from dealroom.services.notify import outbox, triggers
from dealroom.services.rooms import messages
from dealroom.services.unit_of_work import UnitOfWork

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.mailbox import mailbox
from tests.support.notify import People, host_and_brand, host_note


class Counter:
    def __init__(self, engine: AsyncEngine) -> None:
        self.count = 0
        event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1


async def measure(
    engine: AsyncEngine, counter: Counter, calls: int, body: Callable[[Db, int], Awaitable[Any]]
) -> tuple[float, float]:
    """Statements per call and CPU µs per call, each call in its own unit rolled back (so the
    world stays the same)."""
    statements = 0
    cpu = 0.0
    for n in range(calls):
        unit = UnitOfWork(create_sessionmaker(engine))
        try:
            before = counter.count
            started = time.process_time()
            await body(unit.db, n)
            cpu += time.process_time() - started
            statements += counter.count - before
        finally:
            await unit.rollback()
            await unit.close()
    return statements / calls, cpu / calls * 1e6


async def keys(engine: AsyncEngine, people: People) -> dict[str, uuid.UUID]:
    db = Db(create_sessionmaker(engine))
    try:
        rows = await db.scalars(
            Participant.__table__.select()
            .with_only_columns(Participant.id)
            .where(Participant.room_id == people.room_id)
            .order_by(Participant.key)
        )
        host, visitor = list(rows)
        return {"host": host, "visitor": visitor}
    finally:
        await db.close()


async def costs(engine: AsyncEngine, people: People, calls: int) -> list[str]:
    counter = Counter(engine)
    seats = await keys(engine, people)
    by_id = {pid: key for key, pid in seats.items()}
    now = datetime.now(UTC)

    def delivered(n: int) -> Dispatch:
        return Dispatch(
            id=uuid.uuid4(),
            room_id=people.room_id,
            from_participant_id=seats["visitor"],
            to_participant_id=seats["host"],
            source_run_id=uuid.uuid4(),
            position=0,
            substance=f"Acme Brand proposes a reel for ${3000 + n}.",
            payload={},
            status="delivered",
            chain_depth=1,
            created_at=now,
        )

    async def quiet_turn(db: Db, _n: int) -> Any:
        return await triggers.after_turn(
            db,
            room_id=people.room_id,
            pane_key="host",
            keys=by_id,
            delivered=None,
            held=[],
            replied_to=set(),
            room_held=[],
            now=now,
        )

    async def asking_turn(db: Db, n: int) -> Any:
        return await triggers.after_turn(
            db,
            room_id=people.room_id,
            pane_key="host",
            keys=by_id,
            delivered=delivered(n),
            held=[],
            replied_to=set(),
            room_held=[],
            now=now,
        )

    offer = Offer(
        id=uuid.uuid4(), room_id=people.room_id, seller_account_id=people.host.id, version=1
    )

    def change(stage: str) -> OfferEvent:
        return OfferEvent(
            id=uuid.uuid4(),
            room_id=people.room_id,
            offer_id=offer.id,
            seq=1,
            stage=stage,
            version=1,
            actor="brand",
            created_at=now,
        )

    async def silent_stage(db: Db, _n: int) -> Any:
        return await triggers.stage_recorded(db, offer, change("PENDING_PAY_CAPTURE"))

    async def told_stage(db: Db, _n: int) -> Any:
        return await triggers.stage_recorded(db, offer, change("WRITTEN_AWAITING_BRAND"))

    broker = InProcessBroker()
    clock = SystemClock()

    async def post(db: Db, n: int) -> Any:
        return await messages.post_message(
            db,
            broker,
            clock,
            Identity(signed_in=people.brand, account=people.brand, guest_key=None),
            room_id=people.room_id,
            body=f"Hello {n}",
            client_message_id=f"bench-{n}-{uuid.uuid4().hex[:6]}",
            seat=None,
            limits=messages.PostLimits(per_minute=10**6),
        )

    lines = ["(1) statements and CPU the outbox adds (per call)"]
    for name, body in (
        ("turn, nobody to tell", quiet_turn),
        ("turn, a decision waits", asking_turn),
        ("stage change, nobody told", silent_stage),
        ("stage change, both told", told_stage),
        ("postMessage (whole, for scale)", post),
    ):
        statements, cpu = await measure(engine, counter, calls, body)
        lines.append(f"  {name:34s} {statements:5.1f} statements  {cpu:8.0f} µs CPU")
    return lines


async def throughput(
    settings: Settings, engine: AsyncEngine, people: People, emails: int
) -> list[str]:
    clock = SystemClock()
    with mailbox() as box:
        tuned = settings.model_copy(
            update={"smtp_url": box.url, "notify_coalesce_minutes": 0, "notify_batch": 50}
        )
        async with UnitOfWork(create_sessionmaker(engine)) as unit:
            notes = [host_note(people, n, source=f"bench:{uuid.uuid4()}") for n in range(emails)]
            await outbox.write(unit.db, clock.now(), notes)
        worker = NotifyWorker(tuned, create_sessionmaker(engine), InProcessBroker(), clock)
        started = time.perf_counter()
        while await worker.run_once():
            pass
        worker_seconds = time.perf_counter() - started
        sent = len(box.received)
        sample = box.received[0].message
        started = time.perf_counter()
        for _ in range(emails):
            await aiosmtplib.send(
                sample,
                sender="bench@localhost",
                recipients=["devraman@example.com"],
                hostname="127.0.0.1",
                port=box.port,
            )
        bare_seconds = time.perf_counter() - started
    per_minute = sent / worker_seconds * 60
    bare = emails / bare_seconds * 60
    return [
        f"(2) {emails} emails, one worker, to aiosmtpd on loopback",
        f"  worker (claim, render, send, record)  {per_minute:8.0f} emails/min ({sent} sent)",
        f"  baseline: bare aiosmtplib.send        {bare:8.0f} emails/min",
        f"  ratio worker / bare                   {per_minute / bare:8.2f}",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pg", action="store_true", help="PostgreSQL (a throwaway database) instead of SQLite"
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--emails", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = (
            await create_pg_database(DEFAULT_PG_URL, "bench_notify")
            if args.pg
            else f"sqlite+aiosqlite:///{tmp}/bench.sqlite3"
        )
        try:
            await run(url, args.calls, args.emails)
        finally:
            if args.pg:
                await drop_pg_database(DEFAULT_PG_URL, url)


async def run(url: str, calls: int, emails: int) -> None:
    engine = create_engine(url)
    await upgrade(engine)
    settings = Settings(database_url=url, password_hash_below_floor=True)
    people = await host_and_brand(engine, SystemClock())
    for line in machine_summary():
        print(line)
    print(f"database: {engine.dialect.name}")
    for line in await costs(engine, people, calls):
        print(line)
    for line in await throughput(settings, engine, people, emails):
        print(line)
    await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
