"""Alembic, driven from code: ``dealroom migrate``, embedded ``serve`` and the tests."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
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
