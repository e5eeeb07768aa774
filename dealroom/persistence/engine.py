"""Engine construction for both backends."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.pool import AsyncAdaptedQueuePool

from dealroom.persistence.db import Db

log = structlog.get_logger(__name__)

POOL_SIZE = 6
"""PostgreSQL connections a process may hold, and keeps once it has opened them.

Each is a PostgreSQL backend whose cached plans an ``ANALYZE`` invalidates; in the slow second
after one, more requests are in flight, the pool's stack is dug into, and every connection
reached re-plans on a machine already short of CPU. With fewer connections fewer backends
re-plan, and the wait moves to the pool, in the process, where it costs no CPU: six gave a
lower send -> event p99 than fifteen with turns unchanged (measured:
docs/DECISIONS.md, "PostgreSQL: six connections a process, a stack, opened at start, planned
generically"). None is opened past the bound or closed at
checkin: each new one prepares and plans the hot statements anew. A third of the pool goes
to subscription start-ups (services/live/admission.py: two). N processes hold at most
N x ``POOL_SIZE`` of PostgreSQL's ``max_connections``."""


GENERIC_PLANS = "force_generic_plan"
"""PostgreSQL's ``plan_cache_mode`` on the pool's connections.

In ``auto`` PostgreSQL plans a prepared statement afresh for its first five executions on a
connection, then plans it generically and compares: six plans a statement on every new
connection. Every hot statement settles on the generic plan anyway, so forcing it changes no
plan the hot path runs on; it makes a connection's first executions one plan instead of six,
and those come exactly when the load needs more connections than it had, on a busy machine
(measured: docs/DECISIONS.md,
"PostgreSQL: six connections a process, a stack, opened at start, planned generically").

The run claim (``claim_statements.claim_candidate``) was built to keep its plan generic: its
partial index is matched by literals, and ``tests/persistence/test_claim_candidate.py`` runs
it under both modes."""


def create_engine(
    url: str, *, echo: bool = False, pool_timeout: float | None = None
) -> AsyncEngine:
    """``pool_timeout``: how long a checkout waits for a connection (default 30 s on
    PostgreSQL, SQLAlchemy's; 60 s on SQLite)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        # No pre-ping: it costs three round trips per checkout (~2 ms; an agent turn checks out
        # 8-9 times). A connection the server dropped fails one statement, SQLAlchemy then
        # invalidates the pool, and the pool reopens its connections as they are next used.
        # Agent runs retry such a failure; a request gets one INTERNAL. No recycling by age
        # either: the connections ``open_pool`` opens at start wait at the bottom of the stack
        # for the second that needs them, and an age limit would have that second reopen them.
        #
        # The pool hands out the connection returned last (a stack, not SQLAlchemy's default
        # queue), so steady load runs on the few connections it needs at once and the rest
        # stay idle. A queue would send every post to the least recently used connection, so
        # every backend would prepare and plan the whole hot path and re-plan it after every
        # ANALYZE (measured: docs/DECISIONS.md, "PostgreSQL: six connections a
        # process, a stack, ..."; pinned by
        # tests/persistence/test_pool.py).
        #
        # Every prepared statement is planned once per connection, generically
        # (``plan_cache_mode``, GENERIC_PLANS above).
        return create_async_engine(
            url,
            echo=echo,
            pool_size=POOL_SIZE,
            max_overflow=0,
            pool_use_lifo=True,
            pool_timeout=30 if pool_timeout is None else pool_timeout,
            connect_args={"server_settings": {"plan_cache_mode": GENERIC_PLANS}},
        )
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    # One connection per process: SQLite has one writer anyway, and a single connection makes
    # in-process writes queue on the pool instead of failing with "database is locked".
    engine = create_async_engine(
        url,
        echo=echo,
        poolclass=AsyncAdaptedQueuePool,
        pool_size=1,
        max_overflow=0,
        pool_timeout=60 if pool_timeout is None else pool_timeout,
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so that BEGIN IMMEDIATE below is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        # IMMEDIATE takes the write lock up front, so another process's writer makes us wait
        # (busy_timeout) instead of failing a read-then-write transaction half-way.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


FREE_CONNECTIONS = """
SELECT current_setting('max_connections')::int
     - current_setting('superuser_reserved_connections')::int
     - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')
"""


def connections_to_open(free: int, open_now: int, wanted: int = POOL_SIZE) -> int:
    """How many more connections ``open_pool`` opens: up to ``wanted`` (at most the pool's
    bound), and at most half of what PostgreSQL has free, so that processes starting together
    leave room for each other and for everyone else (what is not opened at start is opened on
    demand)."""
    return max(0, min(min(wanted, POOL_SIZE) - open_now, free // 2))


async def open_pool(
    engine: AsyncEngine, wanted: int | None = None, *, timeout: float = 10.0
) -> int:
    """Open the pool's connections now, at start, instead of when the load first needs them.

    The pool keeps what it opens, as a stack: steady load runs on the top few, and the rest
    are reached only when more requests are in flight at once than before, which is when a
    second has gone slow (an ``ANALYZE`` re-planning every backend, a burst). Opened then,
    each is a PostgreSQL fork, its catalogs read and its statements prepared on the busiest
    machine of the hour, at a stall (measured: docs/DECISIONS.md,
    "PostgreSQL: six connections a process, a stack, opened at start, planned generically").

    ``wanted``: how many to hold (``DEALROOM_DATABASE_CONNECTIONS_AT_START``; None: the pool's
    bound; 0: none). A best effort: bounded by :func:`connections_to_open` and by ``timeout``,
    and a failure (PostgreSQL down, full) is logged and leaves the pool to open on demand.
    Returns how many connections the pool holds."""
    pool: Any = engine.pool
    if engine.dialect.name != "postgresql" or wanted == 0:
        return int(pool.checkedin())
    try:
        async with asyncio.timeout(timeout):
            async with engine.connect() as conn:
                free = int((await conn.execute(text(FREE_CONNECTIONS))).scalar_one())
            open_now = pool.checkedin()
            holding = open_now + connections_to_open(
                free, open_now, POOL_SIZE if wanted is None else wanted
            )
            async with contextlib.AsyncExitStack() as held:
                # all at once: one checked out and returned would be handed out again; every
                # attempt ends before the stack closes, so none is left checked out
                results = await asyncio.gather(
                    *(held.enter_async_context(engine.connect()) for _ in range(holding)),
                    return_exceptions=True,
                )
        failed = [str(result) for result in results if isinstance(result, BaseException)]
        if failed:
            log.warning("pool_partly_opened", error=failed[0], failed=len(failed))
    except (TimeoutError, OSError, SQLAlchemyError) as error:
        log.warning("pool_not_opened", error=str(error))
    return int(pool.checkedin())


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[Any]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


__all__ = ["Db", "create_engine", "create_sessionmaker", "open_pool"]
