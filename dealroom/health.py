"""Readiness checks behind ``/health`` and ``/health/ready``: each answers ``ok`` or why not."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.migrate import NotAtHead, current_revision, head_revision
from dealroom.realtime import Broker

CHECK_SECONDS = 3.0
"""A check slower than this counts as down."""


async def readiness(engine: AsyncEngine, broker: Broker) -> dict[str, str]:
    database, broker_state = await asyncio.gather(_database(engine), _broker(broker))
    migrations = database[1]
    return {"database": database[0], "migrations": migrations, "broker": broker_state}


class Readiness:
    """``readiness`` for ``/health``, one check at a time: requests that arrive while a check
    is running get its answer. A burst of probes (a load balancer's, or 32 at once in
    ``test_processes``) would otherwise open a database connection each on a cold pool, and
    on a loaded machine some took longer than ``CHECK_SECONDS`` and answered 503."""

    def __init__(self, engine: AsyncEngine, broker: Broker) -> None:
        self._engine = engine
        self._broker = broker
        self._running: asyncio.Future[dict[str, str]] | None = None

    async def check(self) -> dict[str, str]:
        running = self._running
        if running is None:
            running = self._running = asyncio.ensure_future(readiness(self._engine, self._broker))
            running.add_done_callback(self._ended)
        return await asyncio.shield(running)

    def _ended(self, done: asyncio.Future[dict[str, str]]) -> None:
        if self._running is done:
            self._running = None
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have gone


async def _database(engine: AsyncEngine) -> tuple[str, str]:
    """(database reachable?, migrations current?): one query answers both."""
    try:
        current = await asyncio.wait_for(current_revision(engine), CHECK_SECONDS)
    except Exception as exc:  # any failure to reach it is "not ready", with its reason
        return f"unreachable: {type(exc).__name__}", "unknown"
    head = head_revision()
    if current != head:
        return "ok", str(NotAtHead(current, head))
    return "ok", "ok"


async def _broker(broker: Broker) -> str:
    try:
        await asyncio.wait_for(broker.ping(), CHECK_SECONDS)
    except Exception as exc:
        return f"unreachable: {type(exc).__name__}"
    return "ok"
