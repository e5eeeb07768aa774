"""PostgreSQL's pool keeps the connections a burst opened (``engine.POOL_SIZE``): the next burst
finds them open, with their prepared statements, instead of forking new backends. A pool that
closes its overflow at checkin makes a process under load open a new PostgreSQL connection a few
times a second."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.persistence.engine import FREE_CONNECTIONS, POOL_SIZE, connections_to_open
from tests.support.backends import migrated_database

BURST = POOL_SIZE - 1
"""More than steady use needs, fewer than the pool allows."""


async def _burst(engine: AsyncEngine, size: int) -> None:
    """``size`` connections checked out at once, each used, then all returned."""
    everyone_in = asyncio.Barrier(size)

    async def hold() -> None:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
            await everyone_in.wait()

    await asyncio.wait_for(asyncio.gather(*(hold() for _ in range(size))), timeout=30)


async def test_a_burst_of_checkouts_leaves_its_connections_open_for_the_next(
    pg_engine: AsyncEngine,
) -> None:
    opened: list[Any] = []
    event.listen(pg_engine.sync_engine, "connect", lambda dbapi, _record: opened.append(dbapi))

    await _burst(pg_engine, BURST)
    first = len(opened)  # (the migration's connection may have been pooled already)
    assert first >= BURST - 1
    assert pg_engine.pool.checkedin() == BURST  # type: ignore[attr-defined]  # QueuePool's

    await _burst(pg_engine, BURST)
    assert len(opened) == first  # the second burst opened none


async def test_steady_use_after_a_burst_stays_on_the_connection_returned_last(
    pg_engine: AsyncEngine,
) -> None:
    """The pool is a stack: one request at a time after a burst runs on one backend, not on each of
    the burst's connections in turn (which makes every backend prepare and plan, and after an
    ANALYZE re-plan, the whole hot path; docs/DECISIONS.md, "PostgreSQL: six connections a
    process")."""
    await _burst(pg_engine, BURST)

    backends: set[int] = set()
    for _ in range(BURST):
        async with pg_engine.connect() as conn:
            backends.add((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())
    assert len(backends) == 1


async def test_a_connection_plans_each_statement_once(pg_engine: AsyncEngine) -> None:
    """A prepared statement is planned once per connection (``engine.GENERIC_PLANS``), not for each
    of its first five executions and then once more: a connection the pool opens under load (a
    stall, the start of a burst) joins at one plan a statement. The hot statements settle on the
    generic plan anyway (docs/DECISIONS.md, "PostgreSQL: six connections a process")."""
    statement = text("SELECT count(*) FROM rooms WHERE id = :id AND event_seq >= :seq")
    async with pg_engine.connect() as conn:
        for seq in range(8):
            await conn.execute(statement, {"id": uuid.uuid4(), "seq": seq})
        generic, custom = (
            await conn.execute(
                text(
                    "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                    " WHERE statement LIKE 'SELECT count(*) FROM rooms WHERE id = %'"
                )
            )
        ).one()
    assert (generic, custom) == (8, 0)


def test_a_process_opens_at_most_its_pool_and_half_of_what_postgresql_has_free() -> None:
    assert connections_to_open(free=90, open_now=1) == POOL_SIZE - 1
    assert connections_to_open(free=90, open_now=POOL_SIZE) == 0
    assert connections_to_open(free=10, open_now=1) == 5
    assert connections_to_open(free=1, open_now=0) == 0
    assert connections_to_open(free=-3, open_now=0) == 0
    assert connections_to_open(free=90, open_now=1, wanted=3) == 2
    assert connections_to_open(free=90, open_now=1, wanted=POOL_SIZE + 5) == POOL_SIZE - 1


async def _backends(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        return int((await conn.execute(text(query))).scalar_one())


async def test_a_server_opens_its_pool_at_start(settings: Settings) -> None:
    """A server with an engine of its own opens its pool as it starts (``engine.open_pool``), so a
    slow second later finds the connections open instead of forking backends in it
    (docs/DECISIONS.md, "PostgreSQL: six connections a process"); on both passes, on a PostgreSQL
    of its own.

    All of the pool when PostgreSQL has room; the suite's other workers share it (their servers,
    their databases), so what they hold meanwhile may lower the server's half-of-free bound:
    the floor allows for 8 connections opened by others between the two readings."""
    async with migrated_database() as (url, engine):
        before = await _backends(engine)  # the counting connection itself
        async with engine.connect() as conn:
            free = int((await conn.execute(text(FREE_CONNECTIONS))).scalar_one())
        app = create_app(settings.model_copy(update={"database_url": url}))
        async with app.router.lifespan_context(app):
            started = await _backends(engine)
        stopped = await _backends(engine)
    floor = max(1, 1 + connections_to_open(free - 8, open_now=1))
    assert floor <= started - before <= POOL_SIZE  # none would open without open_pool
    assert stopped == before  # the server closes what it opened


async def test_a_server_told_to_open_fewer_opens_fewer_or_none(settings: Settings) -> None:
    """``DEALROOM_DATABASE_CONNECTIONS_AT_START``: 3 holds three; 0 leaves the pool to open on
    demand (the lifespan's first statement is then the first request's)."""
    async with migrated_database() as (url, engine):
        before = await _backends(engine)
        opened = []
        for wanted in (3, 0):
            app = create_app(
                settings.model_copy(
                    update={"database_url": url, "database_connections_at_start": wanted}
                )
            )
            async with app.router.lifespan_context(app):
                opened.append(await _backends(engine) - before)
    assert opened == [3, 0]
