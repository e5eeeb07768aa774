"""The broker: a wake-up channel, never the record.

Pub/sub is at-most-once (seed 000; ARCHITECTURE "Realtime"): the database holds every event
and subscribers resume from cursors. Both brokers fan out to local subscribers through one
``_Fanout``; the Redis broker keeps a single pub/sub connection per process and subscribes to
a channel only while some local subscriber wants it (no pattern subscriptions).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Protocol

import structlog

log = structlog.get_logger(__name__)

RESYNC = "__resync__"
"""Delivered to every local subscriber when messages may have been lost (a Redis reconnect):
subscribers re-read the database from their cursor."""

QUEUE_LIMIT = 256

HEARTBEAT_SECONDS = 30.0
"""A subscriber idle this long is handed a RESYNC: it re-reads the database from its cursor,
so a wake-up lost by a failed publish in another process costs at most this delay."""


class Subscription:
    """One local listener: a bounded queue of raw payloads."""

    __slots__ = ("channels", "idle_resync", "queue")

    def __init__(self, channels: tuple[str, ...]) -> None:
        self.channels = channels
        self.queue: asyncio.Queue[str] = asyncio.Queue(QUEUE_LIMIT)
        self.idle_resync: float | None = HEARTBEAT_SECONDS
        """After this long idle the reader is handed a RESYNC; None: never (a stream the
        process heartbeat follows, ``services/heartbeats.py``, is woken only when behind)."""

    def offer(self, payload: str) -> None:
        try:
            self.queue.put_nowait(payload)
        except asyncio.QueueFull:
            # A slow reader loses live payloads, not events: it is told to resync from the DB.
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(RESYNC)

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            if self.idle_resync is None:
                yield await self.queue.get()
                continue
            # asyncio.timeout, not wait_for: wait_for wraps the get in a task of its own, one
            # more task (and future) per held subscription.
            try:
                async with asyncio.timeout(self.idle_resync):
                    payload = await self.queue.get()
            except TimeoutError:
                payload = RESYNC
            yield payload


class Broker(Protocol):
    async def publish(self, channel: str, payload: str) -> None: ...

    def subscribe(
        self, channels: Iterable[str]
    ) -> contextlib.AbstractAsyncContextManager[Subscription]: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def listening(self) -> list[str]:
        """Channels this process has local subscribers for (diagnostics)."""
        ...

    async def ping(self) -> None:
        """Raise if the broker cannot be reached (readiness)."""
        ...

    def resync(self, channel: str) -> None:
        """Tell this process's subscribers of ``channel`` to re-read the database (a publish
        to it was lost)."""
        ...


class _Fanout:
    def __init__(self) -> None:
        self._by_channel: dict[str, set[Subscription]] = {}

    def add(self, sub: Subscription) -> list[str]:
        """Register; returns the channels that had no local listener before."""
        fresh = []
        for channel in sub.channels:
            listeners = self._by_channel.setdefault(channel, set())
            if not listeners:
                fresh.append(channel)
            listeners.add(sub)
        return fresh

    def remove(self, sub: Subscription) -> list[str]:
        """Unregister; returns the channels that now have no local listener."""
        emptied = []
        for channel in sub.channels:
            listeners = self._by_channel.get(channel)
            if listeners is None:
                continue
            listeners.discard(sub)
            if not listeners:
                del self._by_channel[channel]
                emptied.append(channel)
        return emptied

    def deliver(self, channel: str, payload: str) -> None:
        for sub in tuple(self._by_channel.get(channel, ())):
            sub.offer(payload)

    def deliver_all(self, payload: str) -> None:
        seen: set[int] = set()
        for listeners in self._by_channel.values():
            for sub in listeners:
                if id(sub) not in seen:
                    seen.add(id(sub))
                    sub.offer(payload)

    @property
    def channels(self) -> list[str]:
        return list(self._by_channel)


class InProcessBroker:
    """The embedded default: one process, no network."""

    def __init__(self) -> None:
        self._fanout = _Fanout()

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def publish(self, channel: str, payload: str) -> None:
        self._fanout.deliver(channel, payload)

    def listening(self) -> list[str]:
        return self._fanout.channels

    def resync(self, channel: str) -> None:
        self._fanout.deliver(channel, RESYNC)

    async def ping(self) -> None:
        return None

    @contextlib.asynccontextmanager
    async def subscribe(self, channels: Iterable[str]) -> AsyncIterator[Subscription]:
        sub = Subscription(tuple(channels))
        self._fanout.add(sub)
        try:
            yield sub
        finally:
            self._fanout.remove(sub)
