"""Migrations run on both backends and match the models exactly."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from types import ModuleType

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import alembic_config, downgrade, upgrade
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


def _predicate(text: object) -> str:
    """A partial index's predicate as both backends and the models write it, compared by
    its words: without parentheses, casts, spaces or case."""
    plain = re.sub(r"::\w+", "", str(text))
    return re.sub(r"[()\s]", "", plain).lower()


def _partial(connection: Connection) -> dict[str, tuple[str, str]]:
    """Each partial index of the models: (the models' predicate, the migrated one's)."""
    dialect = connection.dialect.name
    found: dict[str, tuple[str, str]] = {}
    inspector = inspect(connection)
    for table in Base.metadata.sorted_tables:
        reflected = {index["name"]: index for index in inspector.get_indexes(table.name)}
        for index in table.indexes:
            where = index.dialect_options[dialect].get("where")
            if where is None:
                continue
            name = str(index.name)
            migrated = reflected.get(name)
            options: dict[str, object] = (
                dict(migrated.get("dialect_options", {})) if migrated else {}
            )
            found[name] = (_predicate(where), _predicate(options.get(f"{dialect}_where", "")))
    return found


async def test_the_migrated_partial_indexes_have_the_models_predicates(
    fresh_engine: AsyncEngine,
) -> None:
    """Alembic's comparison does not look at a partial index's predicate (a model changed to
    ``status = 'running'`` still compares equal), so this does."""
    await upgrade(fresh_engine)
    async with fresh_engine.connect() as conn:
        found = await conn.run_sync(_partial)
    assert "ix_agent_runs_queued" in found
    for name, (model, migrated) in found.items():
        assert model == migrated, name


def _migration(revision: str) -> ModuleType:
    """A revision's module, as Alembic loads it."""
    script = ScriptDirectory.from_config(alembic_config()).get_revision(revision)
    assert script is not None
    return script.module


HOT = _migration("0013")

_TARGETS = text(
    "SELECT attrelid::regclass::text, attname, coalesce(attstattarget, -1) FROM pg_attribute "
    "WHERE attrelid = ANY(CAST(:tables AS regclass[])) AND attnum > 0 AND NOT attisdropped"
)


async def _targets(engine: AsyncEngine) -> dict[tuple[str, str], int]:
    async with engine.connect() as conn:
        rows = await conn.execute(_TARGETS, {"tables": list(HOT.HOT_TABLES)})
        return {(table, column): target for table, column, target in rows.all()}


async def test_every_column_of_the_tables_a_post_writes_is_sampled_small(
    pg_engine: AsyncEngine,
) -> None:
    """Migration 0013, on every column, those added since included (a column left at the
    default makes ANALYZE sample the whole table's 30,000 rows again); a downgrade restores
    the default."""
    assert set(HOT.HOT_TABLES) <= set(Base.metadata.tables)
    targets = await _targets(pg_engine)
    assert {table for table, _ in targets} == set(HOT.HOT_TABLES)
    for column in Base.metadata.tables["messages"].columns:
        assert ("messages", column.name) in targets
    assert {key: value for key, value in targets.items() if value != HOT.TARGET} == {}

    await downgrade(pg_engine, "0012")
    assert set((await _targets(pg_engine)).values()) == {-1}


async def test_analyze_of_a_table_a_post_writes_keeps_ten_buckets(pg_engine: AsyncEngine) -> None:
    """What the target changes: ANALYZE keeps at most 10 histogram buckets of a column with
    500 distinct values (101 bounds at the default of 100)."""
    async with pg_engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO throttles (key, window_start, count, updated_at) "
                "SELECT 'post:' || n, now(), n, now() FROM generate_series(1, 500) AS n"
            )
        )
    async with pg_engine.connect() as conn:
        await conn.execute(text("ANALYZE throttles"))
        bounds = await conn.scalar(
            text(
                "SELECT array_length(histogram_bounds, 1) FROM pg_stats "
                "WHERE tablename = 'throttles' AND attname = 'count'"
            )
        )
    assert bounds is not None
    assert 2 <= bounds <= HOT.TARGET + 1
