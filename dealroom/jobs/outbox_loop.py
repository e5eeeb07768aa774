"""The worker loop an outbox's sender runs (the webhook deliveries, the notification emails):
each loop runs a pass, goes straight on while a pass did work, and otherwise waits for a wake
or the poll interval. Woken at once after a commit in this process (``InProcessBroker``); over
Redis the loops poll instead: a permanent subscription on RedisBroker's one pub/sub connection
made pane subscriptions of two SQLite ``serve`` processes miss events
(tests/e2e/test_two_processes.py), as the agent runner's does; see docs/DECISIONS.md,
"Partner webhooks are an outbox"."""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod

import structlog

from dealroom.realtime.broker import Broker, InProcessBroker


class OutboxLoop(ABC):
    """``run_once`` and the poll interval are the sender's; the loops, the wake and the
    in-process listener are these."""

    def __init__(self, broker: Broker, *, name: str, wake_channel: str) -> None:
        self.broker = broker
        self._name = name
        """Names the tasks (``<name>-worker``, ``<name>-listener``) and the error's log line."""
        self._wake_channel = wake_channel
        self._tasks: list[asyncio.Task[None]] = []
        self._changed = asyncio.Event()

    @property
    @abstractmethod
    def poll_seconds(self) -> float:
        """How long an idle loop waits for a wake before its next pass."""

    @abstractmethod
    async def run_once(self) -> int:
        """One pass; how much work it did (0: the loop waits)."""

    def _spawn(self, loops: int | None = None) -> None:
        """Start one loop, or ``loops`` numbered ones, and, in-process, the listener that
        wakes them."""
        names = (
            [f"{self._name}-worker"]
            if loops is None
            else [f"{self._name}-worker-{index}" for index in range(loops)]
        )
        for name in names:
            self._tasks.append(asyncio.create_task(self._loop(), name=name))
        if isinstance(self.broker, InProcessBroker):
            self._tasks.append(asyncio.create_task(self._listen(), name=f"{self._name}-listener"))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    def wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _listen(self) -> None:
        async with self.broker.subscribe([self._wake_channel]) as subscription:
            async for _payload in subscription:
                self.wake()

    async def _loop(self) -> None:
        while True:
            changed = self._changed
            try:
                done = await self.run_once()
            except Exception:
                structlog.get_logger(type(self).__module__).exception(f"{self._name}_worker_error")
                done = 0
            if done:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), self.poll_seconds)
