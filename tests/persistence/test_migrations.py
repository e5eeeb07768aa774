"""Migrations run on both backends and match the models exactly."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, inspect
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import downgrade, upgrade
from dealroom.persistence.models import Base
from tests.support.backends import create_database, drop_database


@pytest.fixture
async def fresh_engine() -> AsyncIterator[AsyncEngine]:
    url = await create_database()
    engine = create_engine(url)
    yield engine
    await engine.dispose()
    await drop_database(url)


def _tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names()) - {"alembic_version"}


def _diff(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def test_upgrade_creates_every_table_of_the_models(fresh_engine: AsyncEngine) -> None:
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as conn:
        assert await conn.run_sync(_tables) == set(Base.metadata.tables)


async def test_the_migrated_schema_matches_the_models(fresh_engine: AsyncEngine) -> None:
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as conn:
        assert await conn.run_sync(_diff) == []


async def test_downgrade_to_base_and_back_up(fresh_engine: AsyncEngine) -> None:
    await upgrade(fresh_engine)
    await downgrade(fresh_engine, "base")
    async with fresh_engine.connect() as conn:
        assert await conn.run_sync(_tables) == set()
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as conn:
        assert await conn.run_sync(_tables) == set(Base.metadata.tables)


async def test_upgrading_twice_is_harmless(fresh_engine: AsyncEngine) -> None:
    await upgrade(fresh_engine)
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as conn:
        assert await conn.run_sync(_diff) == []
