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

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.persistence.db import Db
from dealroom.persistence.throttles import ThrottleRepository

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


async def hit(db: Db, limit: Limit, subject: str, now: datetime, message: str) -> None:
    """Count one hit in the caller's transaction; RATE_LIMITED past the limit."""
    count = await ThrottleRepository(db).increment(
        f"{limit.name}:{subject}", limit.window(now), now
    )
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
    retry_after = limit.retry_after(now)
    ThrottleRepository(db).increment_later(
        f"{limit.name}:{subject}",
        limit.window(now),
        now,
        limit=limit.count,
        refuse=lambda: rate_limited(message, retry_after),
    )


async def record(db: Db, limit: Limit, subject: str, now: datetime) -> int:
    """Count one hit and commit it (``db`` holds no other work); returns the window's count."""
    count = await ThrottleRepository(db).increment(
        f"{limit.name}:{subject}", limit.window(now), now
    )
    await db.commit()
    return count


async def clear(db: Db, limit: Limit, subject: str) -> None:
    await ThrottleRepository(db).clear(f"{limit.name}:{subject}")


@dataclass(frozen=True, slots=True)
class Backoff:
    """Failures counted per window; past ``free`` of them, a growing wait."""

    limit: Limit
    free: int
    cap: timedelta

    async def check(self, db: Db, subject: str, now: datetime, message: str) -> None:
        """RATE_LIMITED while the wait after the last failure lasts."""
        row = await ThrottleRepository(db).in_window(
            f"{self.limit.name}:{subject}", self.limit.window(now)
        )
        if row is None or row.count < self.free:
            return
        wait = min(self.cap, timedelta(seconds=2 ** (row.count - self.free)))
        until = row.updated_at + wait
        if now < until:
            raise rate_limited(message, max(1, math.ceil((until - now).total_seconds())))
