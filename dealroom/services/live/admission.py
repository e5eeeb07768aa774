"""Admission for subscription start-ups: a burst of subscribes waits in a short queue of ours
instead of on the connection pool.

A start-up (the subscription's authorisation, the stream's end read, its first replay batch)
holds one of a few slots per process. A subscribe that finds none free waits at most
``wait_seconds`` (well under the pool timeout), then ends UNAVAILABLE with
``retryAfterSeconds``: the client retries later, instead of thousands of start-ups each
queueing on one SQLite connection (or six PostgreSQL ones) until SQLAlchemy's pool timeout
turns them into INTERNAL. The slot is given back as soon as the stream goes live or hands its
first event to the client, so live delivery is never throttled and a client that does not read
its socket cannot keep a slot."""

from __future__ import annotations

import asyncio
import math
import random
from types import TracebackType

import structlog
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import QueuePool

from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.services.ops import metrics

log = structlog.get_logger(__name__)

SQLITE_SLOTS = 2
"""One start-up on the single connection, one ready to take it: the second's statements fill
the gaps of the first's Python work; its wait on the pool is one start-up's statements."""
POOL_SHARE = 3
"""On PostgreSQL a third of pool size + overflow (2 of 6): the rest stays free for
requests, agent runs and the live streams' re-checks."""


def slots_for(engine: AsyncEngine, configured: int | None) -> int:
    """The configured bound, or one sized from ``engine``'s pool."""
    if configured is not None:
        return configured
    if engine.dialect.name == "sqlite":
        return SQLITE_SLOTS
    pool = engine.pool
    if not isinstance(pool, QueuePool):
        return 1
    # SQLAlchemy has no public reader for the overflow bound.
    capacity = pool.size() + max(pool._max_overflow, 0)
    return max(1, capacity // POOL_SHARE)


class Admission:
    """Per process: at most ``slots`` subscription start-ups touch the database at once."""

    def __init__(self, slots: int, wait_seconds: float) -> None:
        self.slots = slots
        self.wait_seconds = wait_seconds
        self._free = asyncio.Semaphore(slots)
        self.rereads = asyncio.Semaphore(slots)
        """Live streams' re-reads (heartbeat, resync, gap) at once: as many as start-ups.
        With 5,000 subscriptions held the heartbeats alone are ~170 reads a second; unbounded
        they took the whole pool and requests timed out on it (docs/BENCHMARKS.md)."""

    def start_up(self) -> StartUp:
        """``async with admission.start_up() as started:`` around a subscription's body; call
        ``started()`` once the stream no longer needs the slot (it is given back on exit
        anyway). Entering raises UNAVAILABLE when no slot frees up within the wait."""
        return StartUp(self)

    async def enter(self) -> None:
        """Take a slot, waiting at most ``wait_seconds``; UNAVAILABLE past that."""
        if not self._free.locked():  # locked() is also true while others wait: FIFO holds
            await self._free.acquire()
            metrics.SUBSCRIPTION_STARTS.labels("immediate").inc()
            return
        try:
            async with asyncio.timeout(self.wait_seconds):
                await self._free.acquire()
        except TimeoutError:
            metrics.SUBSCRIPTION_STARTS.labels("refused").inc()
            raise self.busy() from None
        metrics.SUBSCRIPTION_STARTS.labels("waited").inc()

    async def take_if_free(self) -> bool:
        """A slot if one is free now, neither queued for nor counted (a socket's credential
        check at ``connection_init``: on a busy server it is left to the socket's first
        start-up, which queues and counts). Give it back with ``release()``."""
        if self._free.locked():
            return False
        await self._free.acquire()  # free: returns without waiting
        return True

    def release(self) -> None:
        self._free.release()

    def busy(self) -> DomainError:
        # Spread over one to two waits: refused together, the clients must not return together.
        wait = max(1, math.ceil(self.wait_seconds))
        retry_after = random.randint(wait, 2 * wait)  # jitter, not a secret
        return DomainError(
            ErrorCode.UNAVAILABLE,
            f"Too many subscriptions are starting at once; retry in {retry_after} s.",
            retryAfterSeconds=retry_after,
        )


class StartUp:
    """One subscription's hold on a start-up slot (a small object: it lives as long as the
    subscription)."""

    __slots__ = ("_admission", "_held")

    def __init__(self, admission: Admission) -> None:
        self._admission = admission
        self._held = False

    async def __aenter__(self) -> StartUp:
        await self._admission.enter()
        self._held = True
        return self

    def __call__(self) -> None:
        """The start-up is over: give the slot back (once)."""
        if self._held:
            self._held = False
            self._admission.release()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        starting = self._held
        self()
        if starting and isinstance(error, PoolTimeout):
            # Admitted, yet the pool stayed full (requests and agent runs share it): still
            # a busy server to the client, never INTERNAL. Seen often, the slots are too many.
            log.warning("subscription_start_pool_timeout", slots=self._admission.slots)
            metrics.SUBSCRIPTION_STARTS.labels("refused").inc()
            raise self._admission.busy() from error
