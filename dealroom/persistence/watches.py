"""Queries for room watches: re-arming on a reply and claiming due steps.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Executable, bindparam, or_, select
from sqlalchemy.dialects.postgresql import Insert as PgInsert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dealroom.persistence.db import Db
from dealroom.persistence.models import RoomWatch

GUARD = "guard"
CURATOR = "curator"
DONE = "done"


def _arm(insert: PgInsert | SqliteInsert) -> Executable:
    now = bindparam("now", type_=RoomWatch.armed_at.type)
    return (
        insert.values(
            room_id=bindparam("room_id", type_=RoomWatch.room_id.type),
            generation=1,
            step=GUARD,
            armed_at=now,
        )
        .on_conflict_do_update(
            index_elements=[RoomWatch.room_id],
            set_={"generation": RoomWatch.generation + 1, "step": GUARD, "armed_at": now},
        )
        .returning(RoomWatch.generation)
    )


# Built once per dialect: every post and reply re-arms, and building it per call costs more
# CPU than the statement's round trip.
_ARM: dict[str, Executable] = {
    "postgresql": _arm(pg_insert(RoomWatch)),
    "sqlite": _arm(sqlite_insert(RoomWatch)),
}


class WatchRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def arm(self, room_id: uuid.UUID, now: datetime) -> int:
        """Re-arm the room's watch: the next generation, quiet from ``now``, Guard next; the
        new generation. One statement (an upsert: the first reply of a room inserts it). The
        caller holds the room's row lock (a reply's transaction does)."""
        (row,) = await self.db.rows(_ARM[self.db.dialect], {"room_id": room_id, "now": now})
        return int(row[0])

    def arm_later(self, room_id: uuid.UUID, now: datetime) -> None:
        """:meth:`arm` without its answer, sent with the unit's other deferred writes
        (``Db.defer``)."""
        self.db.defer(_ARM[self.db.dialect], {"room_id": room_id, "now": now})

    async def locked(self, room_id: uuid.UUID) -> RoomWatch | None:
        return await self.db.scalar(
            select(RoomWatch).where(RoomWatch.room_id == room_id).with_for_update()
        )

    async def by_room(self, room_id: uuid.UUID) -> RoomWatch | None:
        return await self.db.scalar(select(RoomWatch).where(RoomWatch.room_id == room_id))

    async def claim_due(
        self, *, guard_before: datetime, curator_before: datetime, limit: int
    ) -> list[RoomWatch]:
        """Due watches, locked for this transaction. PostgreSQL skips the rows another worker
        is firing (``FOR UPDATE SKIP LOCKED``); SQLite has one writer anyway. A step is due
        when the room was last armed before its window's start."""
        return list(
            await self.db.scalars(
                select(RoomWatch)
                .where(
                    or_(
                        (RoomWatch.step == GUARD) & (RoomWatch.armed_at <= guard_before),
                        (RoomWatch.step == CURATOR) & (RoomWatch.armed_at <= curator_before),
                    )
                )
                .order_by(RoomWatch.armed_at)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
        )
