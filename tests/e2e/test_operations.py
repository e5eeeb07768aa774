"""Operations: liveness and readiness, the origin refusal's advice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
import structlog
import websockets
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine
from websockets.typing import Subprotocol

from dealroom.config import Settings
from dealroom.persistence.engine import create_engine
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.backends import create_database, drop_database
from tests.support.clock import ManualClock
from tests.support.graphql import TRANSPORT_WS


@pytest.fixture
async def unmigrated(
    settings: Settings, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    """A server over a database no migration has touched."""
    url = await create_database()
    engine = create_engine(url)
    try:
        async with serving(settings, engine, broker, clock) as running:
            yield running
    finally:
        await engine.dispose()
        await drop_database(url)


async def test_liveness_and_readiness_on_a_current_database(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        live = await http.get("/health/live")
        ready = await http.get("/health/ready")
        health = await http.get("/health")

    assert live.json() == {"status": "ok"}
    checks = {"database": "ok", "migrations": "ok", "broker": "ok"}
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": checks}
    assert health.json() == ready.json()


async def test_probes_that_arrive_together_share_one_check(
    server: Server, engine: AsyncEngine
) -> None:
    """A burst of readiness probes takes a database connection per check, not per probe (a
    cold pool opening 16 at once on a loaded machine answered some of them 503:
    test_processes)."""
    checkouts: list[object] = []

    def counted(*_: object) -> None:
        checkouts.append(None)

    async with httpx.AsyncClient(base_url=server.base_url) as http:
        await http.get("/health")  # the client's connections and the server's pool are warm
        event.listen(engine.sync_engine, "checkout", counted)
        try:
            answers = await asyncio.gather(*(http.get("/health") for _ in range(16)))
        finally:
            event.remove(engine.sync_engine, "checkout", counted)
    assert [a.status_code for a in answers] == [200] * 16
    assert len(checkouts) <= 8  # one a check; a probe each without the shared check


async def test_an_unmigrated_database_is_alive_but_not_ready(unmigrated: Server) -> None:
    """Readiness says unavailable, naming ``dealroom migrate``, rather than ok while every request
    would be INTERNAL."""
    async with httpx.AsyncClient(base_url=unmigrated.base_url) as http:
        live = await http.get("/health/live")
        ready = await http.get("/health")

    assert live.status_code == 200
    assert ready.status_code == 503
    body = ready.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert "`dealroom migrate`" in body["checks"]["migrations"]


async def test_a_refused_websocket_origin_names_dealroom_cors_origins(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    with structlog.testing.capture_logs() as logs, pytest.raises(websockets.InvalidStatus):
        async with websockets.connect(
            server.ws_url,
            subprotocols=[Subprotocol(TRANSPORT_WS)],
            origin=websockets.Origin("https://elsewhere.example"),
        ):
            pass

    refusals = [entry for entry in logs if entry["event"] == "websocket_origin_refused"]
    assert refusals
    assert refusals[0]["origin"] == "https://elsewhere.example"
    assert "DEALROOM_CORS_ORIGINS" in refusals[0]["hint"]
    assert "allowed_origins" not in caplog.text  # strawberry's advice names its own argument
