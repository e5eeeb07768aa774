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

Six since 2026-12-05 (fifteen before). Each connection a process holds is a PostgreSQL backend
whose cached plans an ``ANALYZE`` of a table they read invalidates; the backend re-plans them,
and rebuilds the table's catalog entries, the next time it is used. At steady load the pool's
stack keeps the work on the top few, but the ``ANALYZE`` slows those few, more requests are
then in flight at once, and the stack is dug into: every connection held joins in within a few
hundred milliseconds, each re-planning on a machine already short of CPU. With 5,000
subscriptions held and 331-332 posts a second (0.75 of the Core floor), three pairs
interleaved, fifteen a process against six: up to 14-28 PostgreSQL processes busy in the same
100 ms after an ``ANALYZE`` against 11-13, PostgreSQL 65 ms over its median in the second after
one against 25 (means of six), send -> event p99 74.2-134.7 ms against 38.7-45.7. Turns were
unchanged (``turn_machine.py`` 177-189 against 191 turns a second). The queue moves to the
pool, in the process, where it costs no CPU (docs/BENCHMARKS.md, twenty-fifth session). A third
of the pool goes to subscription start-ups (services/admission.py: two).

Fifteen from 2026-12-04 (thirty before). A process under steady load runs on about a dozen; a
second of slow posts puts more in flight at once, and each connection the pool opens then is
a new PostgreSQL backend that prepares and plans the hot statements anew, spending the CPU
the second was short of. With 5,000 subscriptions held and 300 posts a second, every run whose
two processes opened 15-39 backends during the posting had a send -> event p99 of 105-828 ms
and its slowest posts at 0.4-1.2 s; with fifteen a process, the stall queues on the pool
instead: p99 46-120 ms, slowest posts under 0.34 s (docs/BENCHMARKS.md, twentieth session).
A third of the pool still goes to subscription start-ups (services/admission.py).

Before that, until earlier on 2026-12-04, it was 10 kept and 20 more of SQLAlchemy's
overflow, closed at checkin: under load every burst past 10 opened them again, each a new
PostgreSQL backend with every statement prepared and planned anew (asyncpg prepares per
connection; PostgreSQL plans a prepared statement five times before it settles on a generic
plan). With 5,000 subscriptions held and 300 posts a second: 127 distinct backends in 20 s
against 61 with thirty kept, and a post's room read planned 654 times (669 ms) against 244
(260 ms) (docs/BENCHMARKS.md). N processes hold at most N x ``POOL_SIZE`` of
PostgreSQL's ``max_connections``."""


GENERIC_PLANS = "force_generic_plan"
"""PostgreSQL's ``plan_cache_mode`` on the pool's connections (since 2026-12-04; ``auto``
before).

In ``auto`` PostgreSQL plans a prepared statement afresh for its first five executions on a
connection, then plans it generically and compares: six plans a statement on every new
connection. Every hot statement settled on the generic plan anyway (``pg_prepared_statements``
after 800 posts: 5 custom plans each, the rest generic, an ``ANALYZE`` between included), so
forcing it changes no plan the hot path runs on; it makes a connection's first executions
one plan instead of six. Those first executions come exactly when the load needs more
connections than it had (the posting's start, a second slowed by an ``ANALYZE``), on a busy
machine. With 5,000 subscriptions held and 355 posts a second (0.75-0.79 of the Core floor),
five runs against four, interleaved: send -> event p99 68.7-92.8 ms against 84.8-138.1, the
posting's first second without its 47-48 slow posts (docs/BENCHMARKS.md, twenty-first
session; a later A/B of this and ``open_pool`` together against neither, at 300 a second on
a slower VM, did not show the gain: three pairs too few for its noise).

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
        # No pre-ping: it cost three round trips per checkout (~2 ms; an agent turn checks out
        # 8-9 times). A connection the server dropped fails one statement, SQLAlchemy then
        # invalidates the pool, and the pool reopens its connections as they are next used.
        # Agent runs retry such a failure; a request gets one INTERNAL. No recycling by age
        # either (1800 s until 2026-12-04): the connections ``open_pool`` opens at start wait
        # at the bottom of the stack for the second that needs them, and an age limit would
        # have that second reopen them.
        #
        # The pool hands out the connection returned last (a stack, not SQLAlchemy's default
        # queue), so steady load runs on the few connections it needs at once and the rest
        # stay idle. As a queue (until 2026-12-04) it sent every post to the least recently
        # used of all 30: each of two processes' 60 backends prepared and planned the whole hot
        # path (five custom plans a statement before a generic one) and re-planned it after
        # every ANALYZE, at a few executions a second each. With 5,000 subscriptions held and
        # 300 posts a second, PostgreSQL and Redis took 30-31 % of the machine against 42 %,
        # and send -> event p99 was 113-131 ms against 327-643 (docs/BENCHMARKS.md,
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
    demand, as before)."""
    return max(0, min(min(wanted, POOL_SIZE) - open_now, free // 2))


async def open_pool(
    engine: AsyncEngine, wanted: int | None = None, *, timeout: float = 10.0
) -> int:
    """Open the pool's connections now, at start, instead of when the load first needs them.

    The pool keeps what it opens, as a stack: steady load runs on the top few, and the rest
    are reached only when more requests are in flight at once than before, which is when a
    second has gone slow (an ``ANALYZE`` re-planning every backend, a burst). Opened then,
    each is a PostgreSQL fork, its catalogs read and its statements prepared on the busiest
    machine of the hour, and about 2 ms of the process's own CPU (a new connection's first
    post against a kept one's; 8 ms of wall time); with 5,000 subscriptions held and 355 posts
    a second, the two processes opened 10-12 a run, each time at a stall (docs/BENCHMARKS.md,
    twenty-first session).

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
