"""The room memory writer's lease (``leases``): its grant, its fenced release with the write,
and its plain release. A grant bumps ``token``; a writer whose token is no longer current (its
lease expired and was granted again) cannot write (fencing). Repositories flush, never commit.

The grant and the fenced release are one statement each, written out per dialect:
SQLite has no data-modifying CTEs, and SQLAlchemy renders a RETURNING subquery's columns
unqualified on SQLite (``persistence/claim_statements.correlated``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String, TextClause, Uuid, bindparam, select, text, update

from dealroom.persistence.db import Db
from dealroom.persistence.models import Lease, UTCDateTime

_UPSERT = """
    INSERT INTO leases (room_id, token, holder, expires_at)
    VALUES (:room_id, 1, :holder, :until)
    ON CONFLICT (room_id) DO UPDATE
    SET token = leases.token + 1, holder = excluded.holder, expires_at = excluded.expires_at
    WHERE leases.holder IS NULL OR leases.expires_at IS NULL OR leases.expires_at <= :now
    RETURNING leases.token"""
"""The grant: the first one creates the row (no unique-key race to catch: two first writers
meet in ``ON CONFLICT``), a later one takes a free or expired lease and bumps its token. No
row back when another writer holds it (the row stays locked until the caller rolls back)."""

_OFFER = (
    "SELECT offers.{} FROM offers WHERE offers.room_id = :room_id"
    " ORDER BY offers.created_at DESC, offers.id DESC LIMIT 1"
)
_HEAD = (
    "rooms.kind, rooms.model_picks, rooms.memory, rooms.memory_version,"
    f" ({_OFFER.format('status')}) AS offer_status,"
    f" ({_OFFER.format('brand_approved_at')}) AS offer_brand_approved_at"
)

# PostgreSQL: the room is read in a LATERAL under FOR SHARE, which runs after the grant. A plain
# read in the same statement would see the snapshot taken before the grant's wait on the lease
# row, i.e. the memory as it was before the writer the grant waited for committed its write and
# released the lease: the lease's point is that the next writer reads that write. A row lock
# reads the newest version. SHARE, not KEY SHARE: a KEY SHARE lock does not wait for or follow
# an update that kept the key, so it would hand back the old version. `g.token > 0` ties the
# LATERAL to the grant, so nothing is locked when the lease is busy.
_PG_GRANT_READING = text(
    f"""
WITH g AS ({_UPSERT}
)
SELECT g.token, r.*
FROM g LEFT JOIN LATERAL (
    SELECT {_HEAD} FROM rooms WHERE rooms.id = :room_id AND g.token > 0 FOR SHARE OF rooms
) AS r ON true
"""
)
# SQLite: one writer, taken at BEGIN IMMEDIATE, so the room read in RETURNING is current.
_SQLITE_GRANT_READING = text(
    _UPSERT
    + ", "
    + ", ".join(
        f"(SELECT rooms.{c} FROM rooms WHERE rooms.id = :room_id) AS {c}"
        for c in ("kind", "model_picks", "memory", "memory_version")
    )
    + f", ({_OFFER.format('status')}) AS offer_status"
    + f", ({_OFFER.format('brand_approved_at')}) AS offer_brand_approved_at"
)

_RELEASE = """
    UPDATE leases SET holder = NULL, expires_at = NULL
    WHERE leases.room_id = :room_id AND leases.token = :token AND leases.expires_at > :now"""
"""The fencing check and the release: only the current, unexpired grant matches."""

_ROOM = "rooms.kind, rooms.mode, rooms.memory, rooms.memory_version"

# PostgreSQL: the room's row lock (the memory is read-modify-written: a persona applying its
# plan meanwhile would otherwise be overwritten) in a LATERAL after the release, so its read is
# the newest version (see the grant). NO KEY UPDATE, not UPDATE: it still excludes every other
# memory writer (the persona's append takes NO KEY UPDATE, the Guard FOR UPDATE) but not the
# KEY SHARE lock of each foreign key to the room (DECISIONS, "Lock order: room, then pane").
_PG_RELEASE_LOCKING = text(
    f"""
WITH f AS ({_RELEASE}
    RETURNING leases.room_id
)
SELECT r.*
FROM f LEFT JOIN LATERAL (
    SELECT {_ROOM} FROM rooms WHERE rooms.id = f.room_id FOR NO KEY UPDATE OF rooms
) AS r ON true
"""
)
_SQLITE_RELEASE_LOCKING = text(
    _RELEASE
    + "\n    RETURNING "
    + ", ".join(
        f"(SELECT rooms.{c} FROM rooms WHERE rooms.id = :room_id) AS {c}"
        for c in ("kind", "mode", "memory", "memory_version")
    )
)

_TIMES = (bindparam("now", type_=UTCDateTime), bindparam("room_id", type_=Uuid))


def _typed(statement: TextClause, *, grant: bool) -> Any:
    if grant:
        return statement.bindparams(*_TIMES, bindparam("until", type_=UTCDateTime)).columns(
            token=Integer,
            kind=String,
            model_picks=JSON,
            memory=JSON,
            memory_version=Integer,
            offer_status=String,
            offer_brand_approved_at=UTCDateTime,
        )
    return statement.bindparams(*_TIMES).columns(
        kind=String, mode=String, memory=JSON, memory_version=Integer
    )


_GRANT_READING = {
    "postgresql": _typed(_PG_GRANT_READING, grant=True),
    "sqlite": _typed(_SQLITE_GRANT_READING, grant=True),
}
_RELEASE_LOCKING = {
    "postgresql": _typed(_PG_RELEASE_LOCKING, grant=False),
    "sqlite": _typed(_SQLITE_RELEASE_LOCKING, grant=False),
}
_GRANT = text(_UPSERT).bindparams(*_TIMES, bindparam("until", type_=UTCDateTime))


@dataclass(frozen=True, slots=True)
class RoomHead:
    """The room as a memory writer reads it with its lease: None fields when it is gone."""

    kind: str | None
    model_picks: dict[str, Any]
    memory: dict[str, Any]
    memory_version: int
    offer_status: str | None
    offer_brand_approved_at: datetime | None


@dataclass(frozen=True, slots=True)
class Granted:
    token: int
    room: RoomHead


@dataclass(frozen=True, slots=True)
class Locked:
    """The room under its row lock, read by the fenced release; ``kind`` None when gone."""

    kind: str | None
    mode: str | None
    memory: dict[str, Any]
    memory_version: int


class LeaseRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def locked(self, room_id: uuid.UUID) -> Lease | None:
        return await self.db.scalar(select(Lease).where(Lease.room_id == room_id).with_for_update())

    async def grant(
        self, room_id: uuid.UUID, holder: str, now: datetime, until: datetime
    ) -> int | None:
        """Take the lease (one upsert); None while another writer holds it."""
        params = {"room_id": room_id, "holder": holder, "now": now, "until": until}
        token = (await self.db.execute(_GRANT, params)).scalar()
        return None if token is None else int(token)

    async def grant_reading(
        self, room_id: uuid.UUID, holder: str, now: datetime, until: datetime
    ) -> Granted | None:
        """Take the lease and read the room's head under it (its memory as the previous
        holder left it), in one statement; None while another writer holds it."""
        params = {"room_id": room_id, "holder": holder, "now": now, "until": until}
        found = await self.db.rows(_GRANT_READING[self.db.dialect], params)
        if not found:
            return None
        row = found[0]
        head = RoomHead(
            kind=row.kind,
            model_picks=dict(row.model_picks or {}),
            memory=dict(row.memory or {}),
            memory_version=int(row.memory_version or 0),
            offer_status=row.offer_status,
            offer_brand_approved_at=row.offer_brand_approved_at,
        )
        return Granted(int(row.token), head)

    async def release_locking(self, room_id: uuid.UUID, token: int, now: datetime) -> Locked | None:
        """Start a memory write: release the lease if ``token`` is still its current,
        unexpired grant (fencing; the release commits with the write) and lock the room's row,
        reading its memory, in one statement. None when the grant is no longer this one."""
        params = {"room_id": room_id, "token": token, "now": now}
        found = await self.db.rows(_RELEASE_LOCKING[self.db.dialect], params)
        if not found:
            return None
        row = found[0]
        return Locked(row.kind, row.mode, dict(row.memory or {}), int(row.memory_version or 0))

    async def release(self, room_id: uuid.UUID, token: int) -> None:
        """Free the lease if ``token`` is still its grant (a stale release frees nobody's)."""
        await self.db.execute(
            update(Lease)
            .where(Lease.room_id == room_id, Lease.token == token)
            .values(holder=None, expires_at=None)
        )
