"""Reading room watches and the runs they queued."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from sqlalchemy import or_, select

from dealroom.agents.models.base import AgentName
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, RoomWatch
from tests.conftest import Server

QUIET = timedelta(seconds=61)
"""Past the Guard's default window (60 s)."""


async def watch_of(db: Db, room_id: str) -> RoomWatch:
    try:
        watch = await db.scalar(select(RoomWatch).where(RoomWatch.room_id == uuid.UUID(room_id)))
        assert watch is not None
        return watch
    finally:
        await db.close()


async def runs_of(db: Db, room_id: str, agent: AgentName) -> list[AgentRun]:
    try:
        return list(
            await db.scalars(
                select(AgentRun)
                .where(AgentRun.room_id == uuid.UUID(room_id), AgentRun.agent == agent.value)
                .order_by(AgentRun.created_at)
            )
        )
    finally:
        await db.close()


async def quiet(server: Server, delta: timedelta = QUIET) -> None:
    """The rooms stay quiet for ``delta``: the clock moves, the watches fire, the runs they
    queued finish. A worker's own sweep may be firing a watch at the same moment (its claim
    skips the rows this one locked, and the other way round), so this waits for the fact —
    no watch left due — before waiting for the runs."""
    server.clock.advance(delta)
    await server.runner.sweep()
    settings = server.runner.deps.settings
    for _ in range(1000):
        db = Db(server.runner.deps.sessionmaker)
        try:
            now = server.clock.now()
            # A plain read (no SKIP LOCKED): a watch a worker is firing stays due until the
            # worker commits the run it queued.
            due = await db.scalars(
                select(RoomWatch.room_id).where(
                    or_(
                        (RoomWatch.step == "guard")
                        & (
                            RoomWatch.armed_at
                            <= now - timedelta(seconds=settings.guard_quiet_seconds)
                        ),
                        (RoomWatch.step == "curator")
                        & (
                            RoomWatch.armed_at
                            <= now - timedelta(seconds=settings.curator_quiet_seconds)
                        ),
                    )
                )
            )
            await db.rollback()
        finally:
            await db.close()
        if not due:
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("a due watch never fired")
    await server.settle()
