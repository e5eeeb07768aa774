"""The one after-commit publish path, for requests (``Db.after_commit``) and jobs alike.

A publish runs only once its event is durable, so a failed publish loses a wake-up, never an
event. It is retried with backoff; if the broker still refuses, this process's subscribers
of the channel get a RESYNC at once (they re-read the database from their cursor), and a
subscriber elsewhere is woken by its process's next heartbeat (``services/heartbeats.py``)
or on its own broker's reconnect. Either way the caller's work is
done: publishing never raises into it, so a committed run is never logged as failed.
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

RETRY_DELAYS: Sequence[float] = (0.2, 1.0, 3.0)
"""Pauses between attempts (one attempt more than pauses): ~4 s plus the client's own
reconnect tries, about as long as a Redis failover or restart takes."""


async def publish_all(
    broker: Broker, published: Iterable[Publish], *, delays: Sequence[float] = RETRY_DELAYS
) -> None:
    """Publish each payload in order; never raises (see the module docstring)."""
    for channel, payload in published:
        await _publish(broker, channel, payload, delays)


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


def publish_after_commit(db: Db, broker: Broker, published: Sequence[Publish]) -> None:
    """Register ``published`` to go out once ``db`` commits (dropped on rollback)."""
    if not published:
        return
    events = list(published)

    async def publish() -> None:
        await publish_all(broker, events)

    db.after_commit(publish)
