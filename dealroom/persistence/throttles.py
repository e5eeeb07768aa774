"""Queries for throttles (``throttles``): one row per key and fixed window, counting its hits.
A key's first hit in a window removes its older windows. Repositories flush, never commit."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Executable, bindparam, delete, select
from sqlalchemy.dialects.postgresql import Insert as PgInsert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dealroom.persistence.db import Db
from dealroom.persistence.models import Throttle


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


class ThrottleRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def increment(self, key: str, window: datetime, now: datetime) -> int:
        """Add one hit to (key, window) atomically; returns the new count."""
        params = {"key": key, "window": window, "now": now}
        # On the raw lane: through SQLAlchemy's execution path the upsert costs about three times
        # the CPU (on SQLite every post comes here; see also ``increment_later``).
        ((found,),) = await self.db.rows(_INCREMENT[self.db.dialect], params)
        count = int(found)
        if count == 1:
            # The key's first hit in this window: its older windows are over. Pruning only here
            # costs one DELETE per key and window, not one per hit.
            await self.db.execute(_PRUNE, {"key": key, "window": window})
        return count

    def increment_later(
        self,
        key: str,
        window: datetime,
        now: datetime,
        *,
        limit: int,
        refuse: Callable[[], BaseException],
    ) -> None:
        """PostgreSQL only: add one hit while the count is under ``limit``, with the key's
        older windows removed, both sent with the unit's other deferred writes (``Db.defer``);
        past the limit ``refuse()`` is raised where they are sent."""
        self.db.defer(
            _CAPPED_INCREMENT,
            {"key": key, "window": window, "now": now, "limit": limit},
            refuse=refuse,
        )
        self.db.defer(_PRUNE, {"key": key, "window": window})

    async def in_window(self, key: str, window: datetime) -> Throttle | None:
        """The key's row of this window (None before its first hit)."""
        return await self.db.scalar(
            select(Throttle).where(Throttle.key == key, Throttle.window_start == window)
        )

    async def clear(self, key: str) -> None:
        """Forget every window of the key."""
        await self.db.execute(delete(Throttle).where(Throttle.key == key))
