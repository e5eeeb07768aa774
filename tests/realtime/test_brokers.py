"""The broker contract, on both brokers: a wake-up channel that may lose messages but tells
subscribers when it may have (RESYNC)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from dealroom.realtime.broker import QUEUE_LIMIT, RESYNC, Broker, InProcessBroker, Subscription
from dealroom.realtime.redis_broker import RedisBroker
from tests.support.backends import REDIS_FOR_BROKER_TESTS

RUN = uuid.uuid4().hex[:8]
"""Channel names are this worker's own: pytest-xdist's workers share the Redis server."""


@pytest.fixture(params=["in-process", "redis"])
async def any_broker(request: pytest.FixtureRequest) -> AsyncIterator[Broker]:
    broker: Broker = (
        InProcessBroker() if request.param == "in-process" else RedisBroker(REDIS_FOR_BROKER_TESTS)
    )
    await broker.start()
    yield broker
    await broker.close()


async def _next(sub: Subscription, timeout: float = 2.0) -> str:
    return await asyncio.wait_for(sub.get(), timeout)


async def _settle() -> None:
    await asyncio.sleep(0.05)  # Redis confirms SUBSCRIBE asynchronously


async def test_a_subscriber_gets_what_is_published_on_its_channel(any_broker: Broker) -> None:
    async with any_broker.subscribe([f"pane:a{RUN}:visitor"]) as sub:
        await _settle()
        await any_broker.publish(f"pane:a{RUN}:visitor", "one")
        await any_broker.publish(f"pane:a{RUN}:visitor", "two")
        assert [await _next(sub), await _next(sub)] == ["one", "two"]


async def test_publish_many_delivers_each_in_order(any_broker: Broker) -> None:
    """A post's event and its runs' announce, in one round trip on Redis."""
    pane, runs = f"pane:m{RUN}:visitor", f"agent-runs-{RUN}"
    async with any_broker.subscribe([pane, runs]) as sub:
        await _settle()
        await any_broker.publish_many([(pane, "one"), (runs, "1"), (pane, "two")])
        assert [await _next(sub), await _next(sub), await _next(sub)] == ["one", "1", "two"]


async def test_other_channels_are_not_delivered(any_broker: Broker) -> None:
    async with any_broker.subscribe([f"pane:a{RUN}:visitor"]) as sub:
        await _settle()
        await any_broker.publish(f"pane:a{RUN}:host", "secret")
        await any_broker.publish(f"pane:a{RUN}:visitor", "mine")
        assert await _next(sub) == "mine"
        assert sub.size() == 0


async def test_every_subscriber_of_a_channel_gets_each_message(any_broker: Broker) -> None:
    async with (
        any_broker.subscribe([f"room:r{RUN}"]) as first,
        any_broker.subscribe([f"room:r{RUN}"]) as second,
    ):
        await _settle()
        await any_broker.publish(f"room:r{RUN}", "x")
        assert await _next(first) == "x"
        assert await _next(second) == "x"


async def test_a_closed_subscription_receives_nothing_more(any_broker: Broker) -> None:
    async with any_broker.subscribe([f"room:gone{RUN}"]) as sub:
        await _settle()
    await any_broker.publish(f"room:gone{RUN}", "late")
    await asyncio.sleep(0.1)
    assert sub.size() == 0


async def test_a_reader_that_falls_behind_is_told_to_resync() -> None:
    broker = InProcessBroker()
    async with broker.subscribe(["c"]) as sub:
        for i in range(QUEUE_LIMIT + 5):
            await broker.publish("c", str(i))
        # Dropped payloads are replaced by one RESYNC; later ones queue behind it.
        assert await _next(sub) == RESYNC
        rest = [sub.take() for _ in range(sub.size())]
        assert rest == [str(i) for i in range(QUEUE_LIMIT + 1, QUEUE_LIMIT + 5)]


async def test_redis_unsubscribes_a_channel_when_its_last_listener_leaves() -> None:
    broker = RedisBroker(REDIS_FOR_BROKER_TESTS)
    await broker.start()
    redis = Redis.from_url(REDIS_FOR_BROKER_TESTS)
    counted = f"pane:count{RUN}:visitor"
    try:
        async with broker.subscribe([counted]), broker.subscribe([counted]):
            await _settle()
            assert dict(await redis.pubsub_numsub(counted))[counted.encode()] == 1
        await _settle()
        assert dict(await redis.pubsub_numsub(counted))[counted.encode()] == 0
    finally:
        await redis.aclose()
        await broker.close()


async def test_two_redis_brokers_deliver_each_others_events() -> None:
    """Two server processes share one Redis: each one's publishes reach the other's
    subscribers."""
    left, right = RedisBroker(REDIS_FOR_BROKER_TESTS), RedisBroker(REDIS_FOR_BROKER_TESTS)
    await left.start()
    await right.start()
    try:
        async with (
            left.subscribe([f"room:shared{RUN}"]) as on_left,
            right.subscribe([f"room:shared{RUN}"]) as on_right,
        ):
            await _settle()
            await left.publish(f"room:shared{RUN}", "from-left")
            await right.publish(f"room:shared{RUN}", "from-right")
            assert {await _next(on_left), await _next(on_left)} == {"from-left", "from-right"}
            assert {await _next(on_right), await _next(on_right)} == {"from-left", "from-right"}
    finally:
        await left.close()
        await right.close()


async def test_a_lost_redis_connection_resyncs_subscribers_and_recovers() -> None:
    broker = RedisBroker(REDIS_FOR_BROKER_TESTS)
    await broker.start()
    admin = Redis.from_url(REDIS_FOR_BROKER_TESTS)
    try:
        async with broker.subscribe([f"pane:drop{RUN}:visitor"]) as sub:
            await _settle()
            # Only this broker's pub/sub connection: other test workers (and other runs on this
            # machine) share the Redis server.
            connection: Any = broker._pubsub.connection
            host, port = connection._writer.get_extra_info("sockname")[:2]
            killed = await admin.execute_command(  # type: ignore[no-untyped-call]  # redis-py stub gap
                "CLIENT", "KILL", "ADDR", f"{host}:{port}"
            )
            assert int(killed) == 1
            assert await _next(sub, timeout=10) == RESYNC
            await _settle()
            await broker.publish(f"pane:drop{RUN}:visitor", "after")
            assert await _next(sub, timeout=5) == "after"
    finally:
        await admin.aclose()
        await broker.close()
