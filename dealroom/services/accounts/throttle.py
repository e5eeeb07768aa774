"""Throttles stored in the database, so they hold across processes and restarts.

A ``Limit`` allows ``count`` hits on a key per fixed window of ``per``; the hit that would
exceed it is refused with RATE_LIMITED and ``retryAfterSeconds`` (the rest of the window).

* ``hit(db, ...)`` counts inside the caller's transaction: an action that fails or is
  refused rolls its own hit back, so only actions that happened are counted.
* ``record(db, ...)`` counts in a transaction of its own, committed at once: for failures
  that roll the caller back (a wrong password) but must still count. Call it after the
  rollback, on the same unit of work (SQLite's pool has one connection).
* ``Backoff``: after ``free`` failures in its window, each further attempt waits
  ``2 ** (failures - free)`` seconds (capped) after the last failure.

One row per key and window (``throttles``); a key's first hit in a window removes its older
windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Executable, bindparam, delete, select
from sqlalchemy.dialects.postgresql import Insert as PgInsert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.persistence.db import Db
from dealroom.persistence.models import Throttle

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Limit:
    name: str
    count: int
    per: timedelta

    def window(self, now: datetime) -> datetime:
        size = self.per.total_seconds()
        start = math.floor((now - EPOCH).total_seconds() / size) * size
        return EPOCH + timedelta(seconds=start)

    def retry_after(self, now: datetime) -> int:
        return max(1, math.ceil((self.window(now) + self.per - now).total_seconds()))


def rate_limited(message: str, retry_after: int) -> DomainError:
    return DomainError(ErrorCode.RATE_LIMITED, message, retryAfterSeconds=retry_after)


def _increment_statement(insert: PgInsert | SqliteInsert, *, capped: bool = False) -> Executable:
    """The upsert of one hit; ``capped``: only while the count is under ``:limit`` (a hit
    over it changes nothing and returns no row)."""
    now = bindparam("now", type_=Throttle.updated_at.type)
    return (
        insert.values(
            key=bindparam("key", type_=Throttle.key.type),
            window_start=bindparam("window", type_=Throttle.window_start.type),
            count=1,
            updated_at=now,
        )
        .on_conflict_do_update(
            index_elements=[Throttle.key, Throttle.window_start],
            set_={"count": Throttle.count + 1, "updated_at": now},
            where=Throttle.count < bindparam("limit", type_=Throttle.count.type)
            if capped
            else None,
        )
        .returning(Throttle.count)
    )


# Built once per dialect: every post counts a hit, and building the upsert per call costs more CPU
# than its round trip.
_INCREMENT: dict[str, Executable] = {
    "postgresql": _increment_statement(pg_insert(Throttle)),
    "sqlite": _increment_statement(sqlite_insert(Throttle)),
}


_CAPPED_INCREMENT: Executable = _increment_statement(pg_insert(Throttle), capped=True)
_PRUNE: Executable = delete(Throttle).where(
    Throttle.key == bindparam("key", type_=Throttle.key.type),
    Throttle.window_start < bindparam("window", type_=Throttle.window_start.type),
)


async def _increment(db: Db, key: str, window: datetime, now: datetime) -> int:
    """Add one hit to (key, window) atomically; returns the new count."""
    params = {"key": key, "window": window, "now": now}
    # On the raw lane: through SQLAlchemy's execution path the upsert costs about three times the
    # CPU (on SQLite every post comes here; see also ``hit_at_commit``).
    ((found,),) = await db.rows(_INCREMENT[db.dialect], params)
    count = int(found)
    if count == 1:
        # The key's first hit in this window: its older windows are over. Pruning only here
        # costs one DELETE per key and window, not one per hit.
        await db.execute(_PRUNE, {"key": key, "window": window})
    return count


async def hit(db: Db, limit: Limit, subject: str, now: datetime, message: str) -> None:
    """Count one hit in the caller's transaction; RATE_LIMITED past the limit."""
    count = await _increment(db, f"{limit.name}:{subject}", limit.window(now), now)
    if count > limit.count:
        raise rate_limited(message, limit.retry_after(now))


async def hit_at_commit(db: Db, limit: Limit, subject: str, now: datetime, message: str) -> None:
    """``hit``; on PostgreSQL sent with the unit's closing writes (``Db.defer``: one statement with
    them) instead of at once. Past the limit the unit then fails where they are sent, with
    RATE_LIMITED, and rolls back with everything it did; so only for a last step that nothing
    before it depends on. The key's older windows go with it each time (the count is not known
    before; in the same statement, it costs no round trip). On SQLite, where a statement costs no
    round trip, ``hit`` as it is."""
    if db.dialect != "postgresql":
        await hit(db, limit, subject, now, message)
        return
    key = f"{limit.name}:{subject}"
    window = limit.window(now)
    retry_after = limit.retry_after(now)
    db.defer(
        _CAPPED_INCREMENT,
        {"key": key, "window": window, "now": now, "limit": limit.count},
        refuse=lambda: rate_limited(message, retry_after),
    )
    db.defer(_PRUNE, {"key": key, "window": window})


async def record(db: Db, limit: Limit, subject: str, now: datetime) -> int:
    """Count one hit and commit it (``db`` holds no other work); returns the window's count."""
    count = await _increment(db, f"{limit.name}:{subject}", limit.window(now), now)
    await db.commit()
    return count


async def clear(db: Db, limit: Limit, subject: str) -> None:
    await db.execute(delete(Throttle).where(Throttle.key == f"{limit.name}:{subject}"))


@dataclass(frozen=True, slots=True)
class Backoff:
    """Failures counted per window; past ``free`` of them, a growing wait."""

    limit: Limit
    free: int
    cap: timedelta

    async def check(self, db: Db, subject: str, now: datetime, message: str) -> None:
        """RATE_LIMITED while the wait after the last failure lasts."""
        row = await db.scalar(
            select(Throttle).where(
                Throttle.key == f"{self.limit.name}:{subject}",
                Throttle.window_start == self.limit.window(now),
            )
        )
        if row is None or row.count < self.free:
            return
        wait = min(self.cap, timedelta(seconds=2 ** (row.count - self.free)))
        until = row.updated_at + wait
        if now < until:
            raise rate_limited(message, max(1, math.ceil((until - now).total_seconds())))
