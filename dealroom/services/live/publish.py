"""The one after-commit publish path, for requests (``Db.after_commit``) and jobs alike.

A publish runs only once its event is durable, so a failed publish loses a wake-up, never an
event. It is retried with backoff; if the broker still refuses, this process's subscribers
of the channel get a RESYNC at once (they re-read the database from their cursor), and a
subscriber elsewhere is woken by its process's next heartbeat (``services/live/heartbeats.py``)
or on its own broker's reconnect. Either way the caller's work is
done: publishing never raises into it, so a committed run is never logged as failed.

Runs queued by the unit are announced on the same path (``RunSignal``): this process's
workers are woken at once and every process's are told through the broker, in the same
round trip as the unit's events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

import structlog

from dealroom.persistence.db import Db
from dealroom.realtime.broker import Broker

log = structlog.get_logger(__name__)

Publish = tuple[str, str]
"""(channel, payload)."""

RUNS_CHANNEL = "agent-runs"
"""Where a process tells every other process's runner that runs were queued."""

ANNOUNCEMENT: Publish = (RUNS_CHANNEL, "1")


class RunSignal:
    """Wakes this process's idle workers (``wake``) or every process's (``announce``). The
    runner waits on it; a handler only ever sets it, through its unit of work."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.generation = 0
        self.changed = asyncio.Event()

    def wake(self) -> None:
        """New runs may be due: wake idle workers now instead of at the next poll."""
        self.generation += 1
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()

    async def announce(self) -> None:
        """Tell every process's runner (and this one) that runs were queued."""
        self.wake()
        try:
            await self.broker.publish(*ANNOUNCEMENT)
        except Exception:
            log.warning("runs_announce_failed")  # other processes still poll


RETRY_DELAYS: Sequence[float] = (0.2, 1.0, 3.0)
"""Pauses between attempts (one attempt more than pauses): ~4 s plus the client's own
reconnect tries, about as long as a Redis failover or restart takes."""


async def publish_all(
    broker: Broker,
    published: Iterable[Publish],
    *,
    announce: RunSignal | None = None,
    delays: Sequence[float] = RETRY_DELAYS,
) -> None:
    """Publish each payload in order, then ``announce``'s runs (this process's workers woken
    last); never raises (see the module docstring). More than one go in one round trip
    (``Broker.publish_many``); if that fails, each event is published on its own with its
    retries, then the runs are announced as ``RunSignal.announce`` does."""
    events = list(published)
    batch = [*events, ANNOUNCEMENT] if announce is not None else events
    if len(batch) > 1:
        try:
            await broker.publish_many(batch)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("publish_many_failed", count=len(batch), error=repr(exc))
        else:
            if announce is not None:
                announce.wake()
            return
    for channel, payload in events:
        await _publish(broker, channel, payload, delays)
    if announce is not None:
        await announce.announce()


async def _publish(broker: Broker, channel: str, payload: str, delays: Sequence[float]) -> None:
    for attempt, delay in enumerate((*delays, None), start=1):
        try:
            await broker.publish(channel, payload)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if delay is None:
                log.error("publish_gave_up", channel=channel, attempts=attempt, error=repr(exc))
                broker.resync(channel)
                return
            log.warning("publish_retry", channel=channel, attempt=attempt, error=repr(exc))
            await asyncio.sleep(delay)


def publish_after_commit(
    db: Db, broker: Broker, published: Sequence[Publish], *, announce: RunSignal | None = None
) -> None:
    """Register ``published`` to go out once ``db`` commits, and ``announce``'s runs (both
    dropped on rollback)."""
    if not published and announce is None:
        return
    events = list(published)

    async def publish() -> None:
        await publish_all(broker, events, announce=announce)

    db.after_commit(publish)
