"""Reading room watches and the runs they queued (issue 12)."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from dealroom.agents.models.base import AgentName
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, RoomWatch


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
