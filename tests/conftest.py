"""Fixtures over the run's real backends (see tests/support/backends.py).

One database per test run, migrated once; every test starts from empty tables. The server
is real uvicorn on a loopback port, driven over HTTP and websockets like a client app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Base
from dealroom.realtime import Broker, create_broker
from dealroom.server import start_in_background
from tests.support.backends import REDIS_URL, create_database, drop_database
from tests.support.clock import ManualClock
from tests.support.graphql import Client


@pytest.fixture(scope="session")
async def database_url() -> AsyncIterator[str]:
    url = await create_database()
    yield url
    await drop_database(url)


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await upgrade(engine)
    yield engine
    await engine.dispose()


@pytest.fixture(autouse=True)
async def _empty_tables(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Every test that touches the database starts from empty tables."""
    if "engine" not in request.fixturenames:
        yield
        return
    engine: AsyncEngine = request.getfixturevalue("engine")
    yield
    tables = [t.name for t in reversed(Base.metadata.sorted_tables)]
    async with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            await conn.execute(text(f"TRUNCATE {', '.join(tables)} CASCADE"))
        else:
            for table in tables:
                await conn.execute(text(f"DELETE FROM {table}"))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def broker() -> AsyncIterator[Broker]:
    broker = create_broker(REDIS_URL)
    await broker.start()
    yield broker
    await broker.close()


@pytest.fixture
async def db(engine: AsyncEngine) -> AsyncIterator[Db]:
    """A unit of work for arranging and inspecting state directly."""
    unit = Db(create_sessionmaker(engine))
    yield unit
    await unit.close()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, redis_url=REDIS_URL, debug=False)


@dataclass
class Server:
    base_url: str
    ws_url: str
    engine: AsyncEngine
    broker: Broker
    clock: ManualClock
    _clients: list[httpx.AsyncClient]

    def client(self) -> Client:
        http = httpx.AsyncClient(base_url=self.base_url, timeout=30)
        self._clients.append(http)
        return Client(http)


@pytest.fixture
async def server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    app = create_app(settings, clock=clock, engine=engine, broker=broker)
    running = await start_in_background(app)
    port = running.port
    clients: list[httpx.AsyncClient] = []
    yield Server(
        base_url=f"http://127.0.0.1:{port}",
        ws_url=f"ws://127.0.0.1:{port}/graphql",
        engine=engine,
        broker=broker,
        clock=clock,
        _clients=clients,
    )
    for http in clients:
        await http.aclose()
    await running.stop()


@pytest.fixture
def count_statements(engine: AsyncEngine) -> Callable[[], Any]:
    """``with count_statements() as seen: ...`` then ``len(seen)``: the SQL the block ran."""

    @contextmanager
    def counting() -> Iterator[list[str]]:
        seen: list[str] = []

        def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
                seen.append(statement)

        event.listen(engine.sync_engine, "before_cursor_execute", record)
        try:
            yield seen
        finally:
            event.remove(engine.sync_engine, "before_cursor_execute", record)

    return counting
