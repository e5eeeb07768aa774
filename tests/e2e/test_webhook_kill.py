"""A webhook worker process SIGKILLed in the middle of an attempt loses nothing: its claim's
lease expires and another worker process makes the attempt again, with the same webhook-id
(W1: at-least-once, deduplicated by the partner on the id)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.models import WebhookAttempt, WebhookDelivery
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.offers import negotiate_to_offer, open_deal
from tests.support.partners import create_webhook
from tests.support.receiver import HANG, receiver


@pytest.fixture
async def hook_server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    quiet = settings.model_copy(update={"webhook_allow_loopback": True, "webhook_workers": 0})
    async with serving(quiet, engine, broker, clock) as running:
        yield running


@contextmanager
def worker_process(database_url: str) -> Iterator[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "DEALROOM_DATABASE_URL": database_url,
        "DEALROOM_WORKERS": "0",
        "DEALROOM_WEBHOOK_WORKERS": "1",
        "DEALROOM_WEBHOOK_ALLOW_LOOPBACK": "true",
        "DEALROOM_WEBHOOK_LEASE_SECONDS": "3",
        "DEALROOM_WEBHOOK_POLL_SECONDS": "0.1",
        "DEALROOM_WEBHOOK_TIMEOUT_SECONDS": "60",
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


async def _delivery(db: Db) -> tuple[str, int, bool]:
    try:
        row = await db.scalar(select(WebhookDelivery))
        assert row is not None
        return row.status, row.attempts, row.lease_until is not None
    finally:
        await db.close()


async def test_sigkill_mid_attempt_loses_nothing(
    hook_server: Server, database_url: str, db: Db
) -> None:
    async with receiver([HANG]) as partner:
        d = await open_deal(hook_server)
        hook = await create_webhook(d.host, partner.url, ["offer.created"])
        await negotiate_to_offer(hook_server, d)

        with worker_process(database_url) as first:
            await partner.wait_for(1, timeout=60)  # the attempt is in flight, unanswered
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        assert first.returncode == -signal.SIGKILL
        assert await _delivery(db) == ("pending", 1, True)  # claimed, never recorded

        with worker_process(database_url):
            await partner.wait_accepted(1, timeout=60)
            for _ in range(200):
                if (await _delivery(db))[0] == "delivered":
                    break
                await asyncio.sleep(0.05)
        assert await _delivery(db) == ("delivered", 2, False)
        assert len(partner.requests) == 2
        assert len(partner.accepted) == 1
        assert len({r.headers["webhook-id"] for r in partner.requests}) == 1
        for request in partner.requests:
            partner.verify(hook["secret"], request)
        logged = list(await db.scalars(select(WebhookAttempt.attempt)))
        await db.close()
        assert logged == [2]  # the killed attempt left no record but its claim
