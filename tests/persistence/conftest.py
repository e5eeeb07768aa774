from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker


@pytest.fixture
async def pg_db(pg_engine: AsyncEngine) -> AsyncIterator[Db]:
    """A unit of work on the test's own PostgreSQL database, closed after the test."""
    unit = Db(create_sessionmaker(pg_engine))
    yield unit
    await unit.close()
