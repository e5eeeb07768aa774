"""The broker: a wake-up channel, never the record.

Pub/sub is at-most-once (seed 000; ARCHITECTURE "Realtime"): the database holds every event
and subscribers resume from cursors. Both brokers fan out to local subscribers through one
``_Fanout``; the Redis broker keeps a single pub/sub connection per process and subscribes to
a channel only while some local subscriber wants it (no pattern subscriptions).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Sequence
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
    """One local listener: a bounded list of raw payloads and at most one waiter.

    Not an ``asyncio.Queue``: a queue keeps three deques and a dict, and thousands of
    subscriptions are held, each costing memory. One reader waits at a time,
    which is all a stream does."""

    __slots__ = ("_items", "_timer", "_waiter", "channels", "idle_resync")

    def __init__(self, channels: tuple[str, ...]) -> None:
        self.channels = channels
        self._items: list[str] = []
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.idle_resync: float | None = HEARTBEAT_SECONDS
        """After this long idle the reader is handed a RESYNC; None: never (a stream the
        process heartbeat follows, ``services/live/heartbeats.py``, is woken only when behind)."""

    def offer(self, payload: str) -> None:
        if len(self._items) >= QUEUE_LIMIT:
            # A slow reader loses live payloads, not events: it is told to resync from the DB.
            self._items.clear()
            payload = RESYNC
        self._items.append(payload)
        self.wake()

    def wake(self) -> None:
        """End the reader's ``wait`` now, with or without a payload (a stream told to look
        up from its queue: its re-check woke it)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self) -> str | None:
        """The oldest payload, or None when none is waiting."""
        return self._items.pop(0) if self._items else None

    def size(self) -> int:
        return len(self._items)

    async def wait(self) -> None:
        """Until a payload is offered or ``wake`` is called (at once if one is waiting); an
        ``idle_resync`` with nothing offered offers a RESYNC."""
        if self._items:
            return
        waiter = self.arm()
        try:
            await waiter
        finally:
            self.disarm()

    def arm(self) -> asyncio.Future[None]:
        """``wait`` without its coroutine, for a reader that awaits the future itself (a
        held stream: one frame fewer per subscription); call ``disarm`` once it is done."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        if self.idle_resync is not None:
            # A timer handle, not asyncio.timeout: one object per wait, not three.
            self._timer = loop.call_later(self.idle_resync, self.offer, RESYNC)
        return waiter

    def disarm(self) -> None:
        self._waiter = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def get(self) -> str:
        """The next payload, waiting for it."""
        while True:
            payload = self.take()
            if payload is not None:
                return payload
            await self.wait()

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            yield await self.get()


class Broker(Protocol):
    async def publish(self, channel: str, payload: str) -> None: ...

    async def publish_many(self, published: Sequence[tuple[str, str]]) -> None:
        """Publish each ``(channel, payload)`` in order, in one round trip where the broker
        can (a post's event and its runs' announce). If it raises, any of them may
        or may not have gone out."""
        ...

    def subscribe(
        self, channels: Iterable[str]
    ) -> contextlib.AbstractAsyncContextManager[Subscription]: ...

    async def join(self, sub: Subscription) -> None:
        """List ``sub`` for its channels (what ``subscribe`` does on entry). A stream held
        for hours joins and leaves by hand: no context manager's frame kept per stream."""
        ...

    async def leave(self, sub: Subscription) -> None:
        """Unlist ``sub`` (what ``subscribe`` does on exit)."""
        ...

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


class Joining:
    """``subscribe`` built on a broker's ``join`` and ``leave`` (both brokers share it)."""

    async def join(self, sub: Subscription) -> None:
        raise NotImplementedError

    async def leave(self, sub: Subscription) -> None:
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def subscribe(self, channels: Iterable[str]) -> AsyncIterator[Subscription]:
        sub = Subscription(tuple(channels))
        await self.join(sub)
        try:
            yield sub
        finally:
            await self.leave(sub)


class InProcessBroker(Joining):
    """The embedded default: one process, no network."""

    def __init__(self) -> None:
        self._fanout = _Fanout()

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def publish(self, channel: str, payload: str) -> None:
        self._fanout.deliver(channel, payload)

    async def publish_many(self, published: Sequence[tuple[str, str]]) -> None:
        for channel, payload in published:
            await self.publish(channel, payload)

    def listening(self) -> list[str]:
        return self._fanout.channels

    def resync(self, channel: str) -> None:
        self._fanout.deliver(channel, RESYNC)

    async def ping(self) -> None:
        return None

    async def join(self, sub: Subscription) -> None:
        self._fanout.add(sub)

    async def leave(self, sub: Subscription) -> None:
        self._fanout.remove(sub)
