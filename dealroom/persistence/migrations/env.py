"""Alembic environment. Runs on a connection handed in by ``dealroom.persistence.migrate``,
or, from the alembic CLI, on the engine named by ``sqlalchemy.url``."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection

from dealroom.persistence.engine import create_engine
from dealroom.persistence.models import Base

target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_online() -> None:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url, "set sqlalchemy.url or pass a connection"
    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(run_on)
    await engine.dispose()


given = context.config.attributes.get("connection")
if given is not None:
    run_on(given)
else:
    asyncio.run(run_online())
