"""A task that runs a process-wide round on an interval, for the app's lifespan (the held
subscriptions' re-checks and heartbeat)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger(__name__)


class Periodic:
    """``start()`` runs ``round`` every ``every`` seconds until ``close()``; a round that
    raises is logged as ``failure`` and the next one retries."""

    def __init__(self, every: float, round: Callable[[], Awaitable[object]], failure: str) -> None:
        self.every = every
        self._round = round
        self._failure = failure
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            try:
                await self._round()
            except Exception:
                log.exception(self._failure)
