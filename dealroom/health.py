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
