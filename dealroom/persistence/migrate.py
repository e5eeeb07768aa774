"""Alembic, driven from code: ``dealroom migrate``, embedded ``serve`` and the tests."""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url:
        config.set_main_option("sqlalchemy.url", url)
    return config


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade over the engine's own connection (works inside a running event loop)."""

    def run(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with engine.begin() as connection:
        await connection.run_sync(run)


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    def run(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.downgrade(config, revision)

    async with engine.begin() as connection:
        await connection.run_sync(run)


class NotAtHead(Exception):
    """The database's schema is not the one this code was written against."""

    def __init__(self, current: str | None, head: str) -> None:
        at = f"revision {current}" if current else "no revision (empty or unmigrated)"
        super().__init__(
            f"the database is at {at}, this code needs {head}: run `dealroom migrate` first"
        )
        self.current = current
        self.head = head


@functools.cache
def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


async def current_revision(engine: AsyncEngine) -> str | None:
    def read(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    async with engine.connect() as connection:
        return await connection.run_sync(read)


async def require_head(engine: AsyncEngine) -> None:
    """Raise NotAtHead unless every migration is applied."""
    current, head = await current_revision(engine), head_revision()
    if current != head:
        raise NotAtHead(current, head)
