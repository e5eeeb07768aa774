"""The room watch's debounce across two `dealroom serve` processes on one PostgreSQL (issue
12, QW1-QW2): a burst of replies handled by both processes' workers ends in exactly one Guard
run for the room, fired for the watch's last generation.

This test is about several processes sharing PostgreSQL, so it uses PostgreSQL on both passes
(as tests/e2e/test_processes.py does): a machine without it fails the test, never skips it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from dealroom.agents.models.base import AgentName
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from tests.support.backends import (
    migrated_database,
)
from tests.support.graphql import Client, open_room, post, sign_up
from tests.support.processes import free_port, serve, wait_healthy
from tests.support.turns import HOME
from tests.support.watches import runs_of, watch_of


@pytest.fixture
async def pg() -> AsyncIterator[tuple[str, Db]]:
    """A migrated PostgreSQL database of its own, and a unit of work on it."""
    async with migrated_database() as (url, engine):
        db = Db(create_sessionmaker(engine))
        try:
            yield url, db
        finally:
            await db.close()


QUIET_SECONDS = 6.0
"""Long enough that a burst on a busy two-core machine never looks quiet halfway through."""


SETTINGS = {
    "model_engine": "offline",
    "workers": "2",
    "worker_poll_seconds": "0.1",
    "watch_poll_seconds": "0.2",
    "guard_quiet_seconds": str(QUIET_SECONDS),
    "curator_quiet_seconds": "3600",
}


async def test_a_burst_of_replies_on_two_processes_fires_one_guard(
    pg: tuple[str, Db], tmp_path: Path
) -> None:
    database_url, db = pg
    ports = free_port(), free_port()
    logs = [(tmp_path / f"server-{port}.log").open("wb") for port in ports]
    try:
        with (
            serve(database_url, ports[0], logs[0], **SETTINGS) as a,
            serve(database_url, ports[1], logs[1], **SETTINGS) as b,
        ):
            url_a, url_b = (f"http://127.0.0.1:{port}" for port in ports)
            await wait_healthy(url_a, a)
            await wait_healthy(url_b, b)
            async with (
                httpx.AsyncClient(base_url=url_a, timeout=30) as http_a,
                httpx.AsyncClient(base_url=url_b, timeout=30) as http_b,
            ):
                host = Client(http_a)
                await sign_up(host, "burst", "Burst Host")
                home = (await host.query(HOME))["me"]["homeRoom"]["id"]
                await post(host, home, "My fee for a sponsored post is $8,000.")
                guest = Client(http_b)
                room_id = (await open_room(guest, "burst"))["room"]["id"]
                guest_on_a = Client(http_a, dict(guest.headers))
                # Ten messages in a burst, through both processes.
                for n in range(10):
                    await post(guest if n % 2 else guest_on_a, room_id, f"Question {n}: rates?")
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 120
                while not await runs_of(db, room_id, AgentName.GUARD):
                    assert loop.time() < deadline, "the Guard never fired"
                    await asyncio.sleep(0.2)
                # Stay quiet for two more windows: nothing fires again.
                await asyncio.sleep(2 * QUIET_SECONDS)
                [run] = await runs_of(db, room_id, AgentName.GUARD)
                watch = await watch_of(db, room_id)
                assert run.watch_generation == watch.generation
                assert watch.generation >= 10  # every message (and reply) re-armed it
                assert watch.step == "curator"
    finally:
        for log in logs:
            log.close()
            print(Path(log.name).read_text())  # noqa: ASYNC240  # shown when the test fails
