"""Redis pub/sub broker: one connection for publishing, one pub/sub connection for all
local subscribers of this process."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

import structlog
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from dealroom.realtime.broker import RESYNC, Joining, Subscription, _Fanout

log = structlog.get_logger(__name__)


class RedisBroker(Joining):
    def __init__(self, url: str) -> None:
        self._redis: Redis = Redis.from_url(url, decode_responses=True)
        self._pubsub: PubSub = self._redis.pubsub(ignore_subscribe_messages=True)
        self._fanout = _Fanout()
        self._reader: asyncio.Task[None] | None = None
        self._ops = asyncio.Lock()
        self._ready = asyncio.Event()

    async def start(self) -> None:
        await self._redis.ping()  # fail fast: an unreachable Redis is a startup error
        self._reader = asyncio.create_task(self._read_loop(), name="redis-broker-reader")

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await self._pubsub.aclose()
        await self._redis.aclose()

    def listening(self) -> list[str]:
        return self._fanout.channels

    def resync(self, channel: str) -> None:
        self._fanout.deliver(channel, RESYNC)

    async def ping(self) -> None:
        await self._redis.ping()

    async def publish(self, channel: str, payload: str) -> None:
        await self._redis.publish(channel, payload)

    async def publish_many(self, published: Sequence[tuple[str, str]]) -> None:
        """One pipeline (no MULTI): one write and one read for them all, which costs this
        process less CPU than one PUBLISH after the other (measured: docs/DECISIONS.md, "One
        Redis pub/sub connection a process, one after-commit publish path")."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for channel, payload in published:
                pipe.publish(channel, payload)
            await pipe.execute()

    async def join(self, sub: Subscription) -> None:
        fresh = self._fanout.add(sub)
        if fresh:
            try:
                await self._uncut(lambda: self._pubsub.subscribe(*fresh))
            except BaseException:
                await self.leave(sub)
                raise
            self._ready.set()

    async def leave(self, sub: Subscription) -> None:
        emptied = self._fanout.remove(sub)
        if emptied:
            with contextlib.suppress(RedisConnectionError, RedisTimeoutError):
                await self._uncut(lambda: self._pubsub.unsubscribe(*emptied))

    async def _uncut(self, command: Callable[[], Awaitable[object]]) -> None:
        """A (un)subscribe on the shared pub/sub connection, run to completion even if the
        caller is cancelled (a client leaving while its stream starts); the cancellation is
        re-raised after. redis-py cut off mid-command drops the connection every local
        subscriber listens on, and was seen to swallow the cancel: the stream then went on
        waiting for a client that had left (tests/e2e/test_subscription_close.py)."""
        task = asyncio.ensure_future(self._locked(command))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await asyncio.wait([task])
            if not task.cancelled():
                task.exception()  # retrieved: it belongs to a caller that is gone
            raise

    async def _locked(self, command: Callable[[], Awaitable[object]]) -> None:
        async with self._ops:
            await command()

    async def _read_loop(self) -> None:
        backoff = 0.1
        while True:
            try:
                if not self._pubsub.subscribed:
                    # Nothing to listen to yet; get_message would return at once.
                    self._ready.clear()
                    await self._ready.wait()
                    continue
                message = await self._pubsub.get_message(timeout=1.0)
                backoff = 0.1
                if message is not None and message.get("type") == "message":
                    self._fanout.deliver(str(message["channel"]), str(message["data"]))
            except asyncio.CancelledError:
                raise
            except (RedisConnectionError, RedisTimeoutError, OSError):
                # Until every local channel is subscribed again: a resubscribe refused while
                # Redis is still away leaves the new connection subscribed to nothing, and
                # the loop above would then wait for a new local subscriber, every existing
                # one deaf until its heartbeat.
                while True:
                    log.warning("redis_broker_reconnect", backoff=backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)
                    if await self._resubscribe():
                        break

    async def _resubscribe(self) -> bool:
        """A new pub/sub connection for this process's channels; False if Redis refused."""
        try:
            async with self._ops:
                await self._pubsub.aclose()
                self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
                channels = self._fanout.channels
                if channels:
                    await self._pubsub.subscribe(*channels)
        except (RedisConnectionError, RedisTimeoutError, OSError):
            return False
        # Anything published while we were away is in the database, not here.
        self._fanout.deliver_all(RESYNC)
        return True
