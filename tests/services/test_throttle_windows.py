"""Throttle rows (services.throttle): a key's older windows go when its first hit of a new
window lands, and only then (not a DELETE per hit on the hot path)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Throttle
from dealroom.services.throttle import Limit, hit

PER_MINUTE = Limit("posts", 10, timedelta(minutes=1))


async def _windows(db: Db) -> list[tuple[datetime, int]]:
    rows = await db.scalars(select(Throttle).where(Throttle.key == "posts:p1"))
    return sorted((r.window_start.replace(tzinfo=UTC), r.count) for r in rows)


async def test_a_new_window_prunes_the_old_ones_and_later_hits_count_on(db: Db) -> None:
    start = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    for _ in range(3):
        await hit(db, PER_MINUTE, "p1", start, "slow down")
    later = start + timedelta(minutes=1)
    await hit(db, PER_MINUTE, "p1", later, "slow down")
    assert await _windows(db) == [(PER_MINUTE.window(later), 1)]
    await hit(db, PER_MINUTE, "p1", later, "slow down")
    assert await _windows(db) == [(PER_MINUTE.window(later), 2)]
    await db.commit()
