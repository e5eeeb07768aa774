"""One replay-then-live loop for every subscription that follows stored events (panes and
offers; DECISIONS "Realtime").

Subscribe first, then read: an event committed during the replay is either in the read or in
the queue. A live event is delivered only when its ``prev`` is the cursor delivered last; an
older one is a duplicate of the replay and dropped; anything else (a gap, a RESYNC, a payload
of a kind the stream does not take live) sends the stream back to the database."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TypeVar

import structlog
from sqlalchemy.exc import DBAPIError, InterfaceError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from dealroom.realtime.broker import RESYNC, Broker, Subscription
from dealroom.services.events import EphemeralEvent, StoredEvent, decode
from dealroom.services.heartbeats import Followed, Heartbeats, StreamEnd

log = structlog.get_logger(__name__)


def unavailable(error: Exception) -> bool:
    """The database cannot serve now (the pool timed out, the connection dropped): a re-read
    that fails so is tried again at the next wake-up or heartbeat, since the events are still
    in the database and the stream's cursor has not moved. Anything else (a bug) still ends
    the stream, coded INTERNAL."""
    # Not OperationalError as such: SQLite raises it for a missing table or bad SQL too.
    if isinstance(error, PoolTimeout | InterfaceError | ConnectionError):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated


S = TypeVar("S", bound=StoredEvent)
E = TypeVar("E", bound=EphemeralEvent)


async def replay_then_live(
    broker: Broker,
    channel: str,
    after: int | None,
    end: Callable[[], Awaitable[int]],
    replay: Callable[[int], AsyncIterator[S]],
    *,
    live: tuple[type[S], ...],
    passed: tuple[type[E], ...] = (),
    started: Callable[[], None] = lambda: None,
    rereads: asyncio.Semaphore | None = None,
    heartbeat: tuple[Heartbeats, StreamEnd] | None = None,
) -> AsyncGenerator[S | E, None]:
    """The stored events after ``after`` (``replay(cursor)`` reads them, in cursor order),
    then what ``channel`` publishes: events of the ``live`` kinds in ``prev`` order, the
    ``passed`` kinds (never stored, never replayed) as they come.

    ``after=None`` starts from the stream's end (``end()``) as read *before* subscribing:
    anything committed once the broker lists the subscription is delivered (replayed if it
    raced the subscribe).

    ``started()`` is called when the start-up's database work is done: before the first
    event reaches the client, or before waiting live (services/admission.py gives its slot
    back then; a later replay, after a gap, is live delivery and never waits for one).

    A later re-read (a RESYNC, a heartbeat, a gap) takes one of ``rereads`` (per process:
    thousands of held streams' heartbeats must not take the pool from requests), reads what
    was missed, gives it back, then yields. One the database cannot serve now (the pool
    timed out, the connection dropped) ends nothing: it is logged and tried again at the
    next wake-up or heartbeat.

    With ``heartbeat`` the process's heartbeat follows the stream (woken only when the
    database holds an event it has not delivered); without, the broker hands it a RESYNC
    after every idle ``HEARTBEAT_SECONDS``."""
    start = await end() if after is None else after
    delivered = start
    async with (
        broker.subscribe([channel]) as subscription,
        _Following(heartbeat, subscription, lambda: delivered),
    ):
        async for event in replay(start):
            started()  # never hold a slot while the client reads (a long replay's later batches)
            delivered = event.cursor
            yield event
        started()
        async for payload in subscription:
            found = decode(payload) if payload != RESYNC else None
            if isinstance(found, passed):
                yield found
                continue
            if isinstance(found, live):
                if found.cursor <= delivered:
                    continue  # already delivered by a replay
                if found.prev == delivered:
                    delivered = found.cursor
                    yield found
                    continue
            # A resync signal, a gap, or a payload we cannot read: the database decides.
            try:
                async with rereads or contextlib.nullcontext():
                    missed = [event async for event in replay(delivered)]
            except Exception as error:
                if not unavailable(error):
                    raise
                log.warning("reread_deferred", channel=channel, error=type(error).__name__)
                continue
            for event in missed:
                delivered = event.cursor
                yield event


class _Following:
    """The process heartbeat follows the stream while it lives (instead of its own idle
    timer). A small slotted object, not a generator-based context manager: it is held for
    the subscription's whole life."""

    __slots__ = ("_beats", "_followed")

    def __init__(
        self,
        heartbeat: tuple[Heartbeats, StreamEnd] | None,
        subscription: Subscription,
        delivered: Callable[[], int],
    ) -> None:
        self._beats: Heartbeats | None = None
        self._followed: Followed | None = None
        if heartbeat is not None:
            self._beats, stream_end = heartbeat
            subscription.idle_resync = None
            self._followed = Followed(stream_end, delivered, lambda: subscription.offer(RESYNC))

    async def __aenter__(self) -> None:
        if self._beats is not None and self._followed is not None:
            self._beats.follow(self._followed)

    async def __aexit__(self, *_: object) -> None:
        if self._beats is not None and self._followed is not None:
            self._beats.forget(self._followed)
