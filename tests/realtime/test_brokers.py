"""The broker contract, on both brokers: a wake-up channel that may lose messages but tells
subscribers when it may have (RESYNC)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from dealroom.realtime.broker import QUEUE_LIMIT, RESYNC, Broker, InProcessBroker, Subscription
from dealroom.realtime.redis_broker import RedisBroker
from tests.support.backends import REDIS_FOR_BROKER_TESTS


@pytest.fixture(params=["in-process", "redis"])
async def any_broker(request: pytest.FixtureRequest) -> AsyncIterator[Broker]:
    broker: Broker = (
        InProcessBroker() if request.param == "in-process" else RedisBroker(REDIS_FOR_BROKER_TESTS)
    )
    await broker.start()
    yield broker
    await broker.close()


async def _next(sub: Subscription, timeout: float = 2.0) -> str:
    return await asyncio.wait_for(sub.queue.get(), timeout)


async def _settle() -> None:
    await asyncio.sleep(0.05)  # Redis confirms SUBSCRIBE asynchronously


async def test_a_subscriber_gets_what_is_published_on_its_channel(any_broker: Broker) -> None:
    async with any_broker.subscribe(["pane:a:visitor"]) as sub:
        await _settle()
        await any_broker.publish("pane:a:visitor", "one")
        await any_broker.publish("pane:a:visitor", "two")
        assert [await _next(sub), await _next(sub)] == ["one", "two"]


async def test_other_channels_are_not_delivered(any_broker: Broker) -> None:
    async with any_broker.subscribe(["pane:a:visitor"]) as sub:
        await _settle()
        await any_broker.publish("pane:a:host", "secret")
        await any_broker.publish("pane:a:visitor", "mine")
        assert await _next(sub) == "mine"
        assert sub.queue.empty()


async def test_every_subscriber_of_a_channel_gets_each_message(any_broker: Broker) -> None:
    async with (
        any_broker.subscribe(["room:r"]) as first,
        any_broker.subscribe(["room:r"]) as second,
    ):
        await _settle()
        await any_broker.publish("room:r", "x")
        assert await _next(first) == "x"
        assert await _next(second) == "x"


async def test_a_closed_subscription_receives_nothing_more(any_broker: Broker) -> None:
    async with any_broker.subscribe(["room:gone"]) as sub:
        await _settle()
    await any_broker.publish("room:gone", "late")
    await asyncio.sleep(0.1)
    assert sub.queue.empty()


async def test_a_reader_that_falls_behind_is_told_to_resync() -> None:
    broker = InProcessBroker()
    async with broker.subscribe(["c"]) as sub:
        for i in range(QUEUE_LIMIT + 5):
            await broker.publish("c", str(i))
        # Dropped payloads are replaced by one RESYNC; later ones queue behind it.
        assert await _next(sub) == RESYNC
        rest = [sub.queue.get_nowait() for _ in range(sub.queue.qsize())]
        assert rest == [str(i) for i in range(QUEUE_LIMIT + 1, QUEUE_LIMIT + 5)]


async def test_redis_unsubscribes_a_channel_when_its_last_listener_leaves() -> None:
    broker = RedisBroker(REDIS_FOR_BROKER_TESTS)
    await broker.start()
    redis = Redis.from_url(REDIS_FOR_BROKER_TESTS)
    try:
        async with (
            broker.subscribe(["pane:count:visitor"]),
            broker.subscribe(["pane:count:visitor"]),
        ):
            await _settle()
            assert dict(await redis.pubsub_numsub("pane:count:visitor"))[b"pane:count:visitor"] == 1
        await _settle()
        assert dict(await redis.pubsub_numsub("pane:count:visitor"))[b"pane:count:visitor"] == 0
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
            left.subscribe(["room:shared"]) as on_left,
            right.subscribe(["room:shared"]) as on_right,
        ):
            await _settle()
            await left.publish("room:shared", "from-left")
            await right.publish("room:shared", "from-right")
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
        async with broker.subscribe(["pane:drop:visitor"]) as sub:
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
            await broker.publish("pane:drop:visitor", "after")
            assert await _next(sub, timeout=5) == "after"
    finally:
        await admin.aclose()
        await broker.close()
