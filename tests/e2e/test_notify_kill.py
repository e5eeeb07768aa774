"""A notification worker process SIGKILLed in the middle of a send loses nothing and sends at
most one duplicate (ND1): its claims' leases expire, another worker sends them, and the one in
flight when it died goes again with the same Message-ID, which a mail client drops."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.engine import create_sessionmaker
from dealroom.services.notify import outbox
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.mailbox import mailbox
from tests.support.notify import host_and_brand, host_note, stored

EMAILS = 12
BOUND = 240.0
"""Seconds a phase may take: each cold-starts a worker process, 20-30 s on a busy 2-core
machine; the test waits on what it needs, this only ends a wait that will never end."""


@contextmanager
def worker_process(database_url: str, smtp_url: str) -> Iterator[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "DEALROOM_DATABASE_URL": database_url,
        "DEALROOM_WORKERS": "0",
        "DEALROOM_WEBHOOK_WORKERS": "0",
        "DEALROOM_NOTIFY_WORKERS": "1",
        "DEALROOM_SMTP_URL": smtp_url,
        "DEALROOM_NOTIFY_COALESCE_MINUTES": "0",
        "DEALROOM_NOTIFY_LEASE_SECONDS": "3",
        "DEALROOM_NOTIFY_POLL_SECONDS": "0.1",
        "DEALROOM_LOG_FORMAT": "json",
    }
    env.pop("DEALROOM_REDIS_URL", None)  # it polls; no broker needed to find the outbox
    process = subprocess.Popen(
        [sys.executable, "-m", "dealroom.cli", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


async def test_sigkill_mid_send_loses_nothing_and_duplicates_at_most_one(
    engine: AsyncEngine, clock: ManualClock, database_url: str
) -> None:
    people = await host_and_brand(engine, clock)
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        notes = [host_note(people, n) for n in range(EMAILS)]
        await outbox.write(unit.db, clock.now(), notes)
    with mailbox() as box:
        # Each email is kept, then answered late: the kill lands after the server has one the
        # worker never heard accepted (the worst moment), so that one is sent again.
        box.handler.stall = 0.4
        box.handler.keep_before_stall = True
        with worker_process(database_url, box.url) as first:
            await box.wait_for(3, timeout=BOUND)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        assert first.returncode == -signal.SIGKILL
        await asyncio.sleep(1.0)  # a DATA the dead client sent may still be accepted
        box.handler.stall = 0.0
        with worker_process(database_url, box.url):
            deadline = time.monotonic() + BOUND
            while not all(r.status == "sent" for r in await stored(engine)):
                assert time.monotonic() < deadline, "the second worker sent not all in time"
                await asyncio.sleep(0.1)
        ids = Counter(str(r.message["Message-ID"]) for r in box.received)
    rows = await stored(engine)
    assert [r.status for r in rows] == ["sent"] * EMAILS  # nothing lost
    assert set(ids) == {f"<{r.id}@127.0.0.1>" for r in rows}  # each id arrived
    duplicates = sum(count - 1 for count in ids.values())
    print(
        f"SIGKILL mid-send: {EMAILS} notifications, {len(box.received)} emails received, "
        f"{duplicates} duplicate(s) by Message-ID"
    )
    assert duplicates <= 1
    assert len(box.received) == EMAILS + duplicates
