"""Subscribe bursts get backpressure (services/live/admission.py).

While the database is held by another connection, a burst of subscribes larger than the
start-up slots must not queue on the connection pool: each one either starts (and then
delivers) or ends UNAVAILABLE with ``retryAfterSeconds`` within the admission wait, never
INTERNAL and never a pool timeout; a refused client that retries after the burst starts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import pytest
import structlog
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.persistence.engine import create_engine
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.e2e.test_metrics import scrape, value
from tests.support.clock import ManualClock
from tests.support.graphql import (
    PANE_EVENTS,
    Client,
    Subscription,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)

BURST = 40
"""More than PostgreSQL's pool (10 + 20): without admission some wait on the pool even there."""
SLOTS = 1
WAIT = 0.5
"""The admission wait configured for the test (default 5 s)."""
POOL_TIMEOUT = 2.0
"""The server's pool timeout (default 60 s on SQLite, 30 s on PostgreSQL), shorter than the
hold: whatever queues on the pool through the hold times out there."""
HOLD = 4.0
"""How long the test keeps the database locked while the burst subscribes."""


@pytest.fixture
async def admitting(
    settings: Settings,
    database_url: str,
    engine: AsyncEngine,  # the run's engine: its tables are emptied after the test
    broker: Broker,
    clock: ManualClock,
) -> AsyncIterator[Server]:
    """A server with one start-up slot, a half-second admission wait, and its own engine
    whose pool gives up after 2 s."""
    async with serving_admission(
        settings, database_url, broker, clock, slots=SLOTS, wait=WAIT, pool_timeout=POOL_TIMEOUT
    ) as running:
        yield running


@contextlib.asynccontextmanager
async def serving_admission(
    settings: Settings,
    database_url: str,
    broker: Broker,
    clock: ManualClock,
    *,
    slots: int,
    wait: float,
    pool_timeout: float | None = None,
) -> AsyncIterator[Server]:
    """A server with ``slots`` start-up slots and a ``wait``-second admission wait, on an
    engine of its own (whose pool gives up after ``pool_timeout``, when given)."""
    own = create_engine(database_url, pool_timeout=pool_timeout)
    chosen = settings.model_copy(
        update={"subscription_start_slots": slots, "subscription_start_wait_seconds": wait}
    )
    try:
        async with serving(chosen, own, broker, clock) as running:
            yield running
    finally:
        await own.dispose()


@contextlib.asynccontextmanager
async def database_held(database_url: str) -> AsyncIterator[None]:
    """Another connection holds what every start-up's first statement needs: on SQLite the
    write lock (our ``BEGIN IMMEDIATE`` takes it for reads too, and waits up to its
    busy_timeout), on PostgreSQL an exclusive lock on ``sessions`` (the token's lookup)."""
    locker = create_engine(database_url)
    try:
        async with locker.begin() as conn:
            if locker.dialect.name == "postgresql":
                await conn.execute(text("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE"))
            else:
                await conn.execute(text("SELECT 1"))  # inside BEGIN IMMEDIATE: the write lock
            yield
    finally:
        await locker.dispose()


@dataclass
class Burst:
    started: list[Subscription]
    refused: list[tuple[Subscription, dict[str, Any]]]
    """Each refused operation's socket and its error."""
    refused_while_held: bool


async def _deal(server: Server) -> tuple[Client, Client, dict[str, Any]]:
    host = server.client()
    await sign_up(host, "mara", "Mara Ellison")
    guest = server.client()
    room_id = (await open_room(guest, "mara"))["room"]["id"]
    await post(guest, room_id, "before the burst")
    return host, guest, {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}


async def _burst(
    server: Server, stack: contextlib.AsyncExitStack, host: Client, variables: dict[str, Any]
) -> Burst:
    """Subscribe ``BURST`` times at once while the database is held; sort each operation by
    its first payload (the replayed message, or an error)."""
    database_url = server.state.settings.resolved_database_url
    async with database_held(database_url):
        subs = await asyncio.gather(
            *(
                stack.enter_async_context(
                    subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(host))
                )
                for _ in range(BURST)
            )
        )
        early = await _first_payloads(subs, within=HOLD / 2)
        await asyncio.sleep(HOLD / 2)
    late = await _first_payloads([sub for sub in subs if sub not in early], within=30)
    started: list[Subscription] = []
    refused: list[tuple[Subscription, dict[str, Any]]] = []
    for sub in subs:
        payload = early.get(sub) or late[sub]
        if payload.get("errors"):
            assert [e["extensions"]["code"] for e in payload["errors"]] == ["UNAVAILABLE"], payload
            (error,) = payload["errors"]
            assert error["extensions"]["retryAfterSeconds"] >= 1
            assert await sub.next() == {"complete": True}
            refused.append((sub, error))
        else:
            assert payload["data"]["paneEvents"]["message"]["body"] == "before the burst"
            started.append(sub)
    refused_while_held = all(sub in early for sub, _error in refused)
    return Burst(started, refused, refused_while_held)


async def _first_payloads(
    subs: list[Subscription], within: float
) -> dict[Subscription, dict[str, Any]]:
    """The first payload of each operation that sent one ``within`` seconds."""
    found: dict[Subscription, dict[str, Any]] = {}

    async def first(sub: Subscription) -> None:
        with contextlib.suppress(TimeoutError):
            found[sub] = await sub.next(timeout=within)

    await asyncio.gather(*(first(sub) for sub in subs))
    return found


def _server_errors(
    logs: list[MutableMapping[str, Any]], caplog: pytest.LogCaptureFixture
) -> list[str]:
    structured = [str(e) for e in logs if e.get("log_level") in ("error", "critical")]
    standard = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    return structured + standard


async def test_a_subscribe_burst_starts_or_ends_unavailable_never_internal(
    admitting: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server = admitting
    host, guest, variables = await _deal(server)
    before = await scrape(server)
    async with contextlib.AsyncExitStack() as stack:
        with structlog.testing.capture_logs() as logs:
            burst = await _burst(server, stack, host, variables)
            # Every refusal came from our queue while the database was still held: none
            # waited out a pool timeout (2 s) or the hold (4 s).
            assert burst.refused_while_held
            assert burst.started, "the admitted start-up got through once the hold ended"
            assert len(burst.refused) >= BURST - 2 * SLOTS

            await post(guest, variables["roomId"], "after the burst")
            for sub in burst.started:
                assert (await sub.event())["message"]["body"] == "after the burst"
        assert _server_errors(logs, caplog) == []
        # Our queue refused them, not the pool-timeout fallback (services/live/admission.py).
        assert not [e for e in logs if e["event"] == "subscription_start_pool_timeout"]
    after = await scrape(server)
    refused = value(after, "dealroom_subscription_starts_total", outcome="refused") - value(
        before, "dealroom_subscription_starts_total", outcome="refused"
    )
    assert refused == len(burst.refused)


async def test_a_refused_subscriber_that_retries_after_the_burst_starts(
    admitting: Server,
) -> None:
    server = admitting
    host, guest, variables = await _deal(server)
    async with contextlib.AsyncExitStack() as stack:
        burst = await _burst(server, stack, host, variables)
        assert burst.refused

        async def retry(error: dict[str, Any]) -> Subscription:
            """What a client does with UNAVAILABLE: wait retryAfterSeconds, subscribe again
            (its own back-off; a retry may meet the other retries and be refused once more)."""
            for _attempt in range(6):
                await asyncio.sleep(error["extensions"]["retryAfterSeconds"])
                sub = await stack.enter_async_context(
                    subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(host))
                )
                payload = await sub.next()
                if not payload.get("errors"):
                    assert payload["data"]["paneEvents"]["message"]["body"] == "before the burst"
                    return sub
                assert [e["extensions"]["code"] for e in payload["errors"]] == ["UNAVAILABLE"]
                error = payload["errors"][0]
            raise AssertionError("a retry never started")

        retried = await asyncio.gather(*(retry(error) for _sub, error in burst.refused))
        await post(guest, variables["roomId"], "after the retry")
        for sub in retried:
            assert (await sub.event())["message"]["body"] == "after the retry"


async def test_live_subscriptions_hold_no_start_up_slot(admitting: Server) -> None:
    """With one slot, streams that went live leave it free: each later subscribe starts at
    once, and every stream delivers."""
    server = admitting
    host, guest, variables = await _deal(server)
    before = await scrape(server)
    async with contextlib.AsyncExitStack() as stack:
        subs = []
        for _ in range(4):
            sub = await stack.enter_async_context(
                subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(host))
            )
            assert (await sub.event())["message"]["body"] == "before the burst"
            subs.append(sub)
        await post(guest, variables["roomId"], "to every live stream")
        for sub in subs:
            assert (await sub.event())["message"]["body"] == "to every live stream"
    after = await scrape(server)
    for outcome, moved in (("immediate", 4), ("waited", 0), ("refused", 0)):
        name = "dealroom_subscription_starts_total"
        assert value(after, name, outcome=outcome) - value(before, name, outcome=outcome) == moved
