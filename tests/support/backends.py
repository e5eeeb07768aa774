"""The run's real backends: SQLite + in-process broker by default; PostgreSQL and Redis when
DEALROOM_TEST_DATABASE_URL / DEALROOM_TEST_REDIS_URL are set (CI's second pass)."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade

PG_URL = os.environ.get("DEALROOM_TEST_DATABASE_URL")
REDIS_URL = os.environ.get("DEALROOM_TEST_REDIS_URL")
# Tests that are about Redis itself (the broker contract, two server processes) use this one
# even on the embedded pass: Redis runs on every machine of this project, and a test that
# cannot reach it fails rather than skips.
REDIS_FOR_BROKER_TESTS = REDIS_URL or "redis://127.0.0.1:6379/0"
# Likewise for the tests that are about several server processes sharing one PostgreSQL.
PG_FOR_PROCESS_TESTS = PG_URL or "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def backend_name() -> str:
    return "postgresql" if PG_URL else "sqlite"


async def create_database(pg_url: str | None = PG_URL) -> str:
    """A fresh, empty database for this test run (beside ``pg_url``'s, or an SQLite file when
    there is none); returns its SQLAlchemy URL."""
    if pg_url is None:
        folder = Path(tempfile.mkdtemp(prefix="dealroom-test-"))
        return f"sqlite+aiosqlite:///{folder / 'test.sqlite3'}"
    url = make_url(pg_url)
    name = f"dealroom_t_{os.getpid()}_{secrets.token_hex(3)}"
    conn = await asyncpg.connect(_dsn(pg_url))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return url.set(database=name).render_as_string(hide_password=False)


async def drop_database(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        return
    url = make_url(db_url)
    conn = await asyncpg.connect(_dsn(url.set(database="postgres").render_as_string(False)))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)')
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def migrated_database(
    pg_url: str | None = PG_FOR_PROCESS_TESTS,
) -> AsyncIterator[tuple[str, AsyncEngine]]:
    """A migrated PostgreSQL database of its own (on both passes by default) and an engine on
    it, both gone on the way out."""
    url = await create_database(pg_url)
    engine = create_engine(url)
    try:
        await upgrade(engine)
        yield url, engine
    finally:
        await engine.dispose()
        await drop_database(url)


def _dsn(sqlalchemy_url: str) -> str:
    return (
        make_url(sqlalchemy_url).set(drivername="postgresql").render_as_string(hide_password=False)
    )
