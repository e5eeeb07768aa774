"""Fixtures over the run's real backends (see tests/support/backends.py).

One database per test run, migrated once; every test starts from empty tables. The server
is real uvicorn on a loopback port, driven over HTTP and websockets like a client app.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import hypothesis
import pytest
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import ModelClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Base
from dealroom.realtime import Broker, create_broker
from dealroom.schema.context import AppState
from dealroom.server import start_in_background
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.offers.provider import PaymentProvider
from dealroom.services.rooms import demo
from tests.support.backends import (
    REDIS_URL,
    create_database,
    drop_database,
    migrated_database,
)
from tests.support.clock import ManualClock
from tests.support.graphql import TLS, Client

# No deadlines and no "too slow" health checks: the suite runs on shared 2-core machines
# (and in parallel under pytest-xdist), where a slow example is the machine, not the test.
hypothesis.settings.register_profile(
    "suite",
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow, hypothesis.HealthCheck.data_too_large],
)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# The offline engine streams unpaced in the suite, also in the servers it starts as
# subprocesses with this environment (as served, it pauses between reply pieces).
os.environ["DEALROOM_OFFLINE_STREAM_MS"] = "0"  # not setdefault: a shell export must not pace it


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


@pytest.fixture
async def pg_engine() -> AsyncIterator[AsyncEngine]:
    """A migrated PostgreSQL database of its own, on both passes: row locks are PostgreSQL's
    (SQLite has one writer, nothing to interleave)."""
    async with migrated_database() as (_, engine):
        yield engine


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
    # workers=0: the server stores queued agent runs but executes none, so tests of the
    # foundation see only the events they cause. Agent tests use ``agent_server``. No
    # webhook delivery loop either: its poll would land in the statement counts of tests
    # that pin a request's statements; the webhook tests turn it on (the notification tests
    # theirs).
    return Settings(
        database_url=database_url,
        redis_url=REDIS_URL,
        debug=False,
        model_engine="offline",
        offline_stream_ms=0,
        workers=0,
        webhook_workers=0,
        notify_workers=0,
        # Panes start empty: what a test reads there is what it caused. The welcome's own
        # tests (tests/e2e/test_greeting.py, the browser story) turn it on.
        greet_visitors=False,
        # argon2id at its cheapest (8 KiB, one pass: microseconds) instead of OWASP's 19 MiB
        # and two passes (~44 ms of CPU per sign-up and sign-in). The default's own tests are
        # in tests/services/test_passwords.py.
        password_hash_memory_kib=8,
        password_hash_time_cost=1,
        password_hash_below_floor=True,
    )


@dataclass
class Server:
    base_url: str
    ws_url: str
    engine: AsyncEngine
    broker: Broker
    clock: ManualClock
    state: AppState
    _clients: list[httpx.AsyncClient]

    @property
    def runner(self) -> TurnRunner:
        runner = self.state.runner
        assert isinstance(runner, TurnRunner)  # the app wires the job runner
        return runner

    async def seed_demo(self, db: Db) -> demo.DemoHost:
        """The demo host, taught by this server's runner (``dealroom demo``'s seeding)."""
        passwords = passwords_for(self.state.settings.password_profile)
        return await demo.seed_demo(
            db, self.broker, self.clock, self.runner, passwords=passwords, posts_per_minute=60
        )

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait until every due agent run has finished (the rooms are quiet)."""
        await self.state.runner.wait_idle(timeout)

    def client(self) -> Client:
        http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=30,
            verify=TLS,
            # Drop idle connections well before uvicorn's 5 s keep-alive closes them, so a
            # request never goes out on a socket the server is closing (httpx.ReadError).
            limits=httpx.Limits(keepalive_expiry=1.0),
        )
        self._clients.append(http)
        return Client(http)


@pytest.fixture
async def server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    async with serving(settings, engine, broker, clock) as running:
        yield running


@pytest.fixture
def model() -> ModelClient:
    """The model edge: the offline engine unless a test overrides this fixture."""
    return OfflineClient()


@pytest.fixture
def agent_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"workers": 2, "worker_poll_seconds": 0.05})


@pytest.fixture
async def agent_server(
    agent_settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    model: ModelClient,
) -> AsyncIterator[Server]:
    """A server whose agents run: the whole turn, on the model fixture's engine."""
    async with serving(agent_settings, engine, broker, clock, model) as running:
        yield running


@contextlib.asynccontextmanager
async def serving(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    model: ModelClient | None = None,
    payments: PaymentProvider | None = None,
) -> AsyncIterator[Server]:
    """A real server on a loopback port over the given edges (a test may hand in its own
    model client, broker or payment provider)."""
    app = create_app(
        settings,
        clock=clock,
        engine=engine,
        broker=broker,
        model=model or OfflineClient(),
        payments=payments,
    )
    running = await start_in_background(app)
    port = running.port
    clients: list[httpx.AsyncClient] = []
    try:
        yield Server(
            base_url=f"http://127.0.0.1:{port}",
            ws_url=f"ws://127.0.0.1:{port}/graphql",
            engine=engine,
            broker=broker,
            clock=clock,
            state=app.state.dealroom,
            _clients=clients,
        )
    finally:
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
