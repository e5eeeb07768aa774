"""Throttle rows (services.accounts.throttle): a key's older windows go when its first hit of a new
window lands, and only then (not a DELETE per hit on the hot path); a hit counted at the commit
(``hit_at_commit``, PostgreSQL) removes them in the same statement, and past its limit fails the
commit and rolls the whole unit back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Throttle
from dealroom.services.accounts.throttle import Limit, hit, hit_at_commit

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


async def test_a_hit_at_commit_past_the_limit_rolls_the_unit_back(pg_engine: AsyncEngine) -> None:
    sessionmaker = create_sessionmaker(pg_engine)
    two = Limit("posts", 2, timedelta(minutes=1))
    start = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    for _ in range(2):
        unit = Db(sessionmaker)
        await hit_at_commit(unit, two, "p1", start, "slow down")
        await unit.commit()
        await unit.close()

    unit = Db(sessionmaker)
    await hit(unit, two, "other", start, "slow down")  # the unit's own work, sent at once
    await hit_at_commit(unit, two, "p1", start, "slow down")
    with pytest.raises(DomainError) as refused:
        await unit.commit()
    assert refused.value.code == ErrorCode.RATE_LIMITED
    await unit.rollback()
    await unit.close()

    check = Db(sessionmaker)
    rows = await check.scalars(select(Throttle))
    assert sorted((r.key, r.count) for r in rows) == [("posts:p1", 2)]
    await check.close()


async def test_a_hit_at_commit_in_a_new_window_removes_the_old_ones(
    pg_engine: AsyncEngine,
) -> None:
    sessionmaker = create_sessionmaker(pg_engine)
    start = datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC)
    for now in (start, start, start + timedelta(minutes=1)):
        unit = Db(sessionmaker)
        await hit_at_commit(unit, PER_MINUTE, "p1", now, "slow down")
        await unit.commit()
        await unit.close()

    check = Db(sessionmaker)
    assert await _windows(check) == [(PER_MINUTE.window(start + timedelta(minutes=1)), 1)]
    await check.close()
