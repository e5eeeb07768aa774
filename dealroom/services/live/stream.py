"""One replay-then-live loop for every subscription that follows stored events (panes and
offers; DECISIONS "Realtime").

Subscribe first, then read: an event committed during the replay is either in the read or in
the queue. A live event is delivered only when its ``prev`` is the cursor delivered last; an
older one is a duplicate of the replay and dropped; anything else (a gap, a RESYNC, a payload
of a kind the stream does not take live) sends the stream back to the database."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Generic, TypeVar

import structlog
from sqlalchemy.exc import DBAPIError, InterfaceError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from dealroom.realtime.broker import RESYNC, Broker, Subscription
from dealroom.services.live.events import EphemeralEvent, StoredEvent, decode_shared
from dealroom.services.live.heartbeats import Followed, Heartbeats, StreamEnd

log = structlog.get_logger(__name__)


def _nothing() -> None:
    return None


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


class Woken(enum.Enum):
    """What a stream returns when ``interrupt`` was called: look up before reading on."""

    WOKEN = "woken"


WOKEN = Woken.WOKEN


class LiveStream(Generic[S, E]):
    """The stored events after ``after`` (``replay(cursor)`` reads them, in cursor order),
    then what ``channel`` publishes: events of the ``live`` kinds in ``prev`` order, the
    ``passed`` kinds (never stored, never replayed) as they come.

    ``after=None`` starts from the stream's end (``end()``) as read *before* subscribing:
    anything committed once the broker lists the subscription is delivered (replayed if it
    raced the subscribe).

    ``started()`` is called when the start-up's database work is done: before the first
    event reaches the client, or before waiting live (services/live/admission.py gives its slot
    back then; a later replay, after a gap, is live delivery and never waits for one).

    A later re-read (a RESYNC, a heartbeat, a gap) takes one of ``rereads`` (per process:
    thousands of held streams' heartbeats must not take the pool from requests), reads what
    was missed, gives it back, then returns it. One the database cannot serve now (the pool
    timed out, the connection dropped) ends nothing: it is logged and tried again at the
    next wake-up or heartbeat.

    With ``heartbeat`` the process's heartbeat follows the stream (woken only when the
    database holds an event it has not delivered); without, the broker hands it a RESYNC
    after every idle ``HEARTBEAT_SECONDS``.

    One object with ``__anext__``, not a chain of async generators: a held stream waits on one
    future, and a delivery leaves a coroutine behind, not an ``asend``, a coroutine and a frame per
    layer. ``interrupt()`` (a re-check's wake-up) makes the next ``__anext__`` return ``WOKEN``
    before anything else it would read. A ``__anext__`` that raised (a cancel included) ends the
    stream's use: close it, as ``resolvers/live.Guarded`` does (a cancelled replay or re-read is
    not resumed)."""

    __slots__ = (
        "_after",
        "_broker",
        "_channel",
        "_closed",
        "_delivered",
        "_end",
        "_followed",
        "_heartbeats",
        "_interrupted",
        "_live",
        "_missed",
        "_passed",
        "_replay",
        "_replaying",
        "_rereads",
        "_started",
        "_subscription",
    )

    def __init__(
        self,
        broker: Broker,
        channel: str,
        after: int | None,
        end: Callable[[], Awaitable[int]],
        replay: Callable[[int], AsyncIterator[S]],
        *,
        live: tuple[type[S], ...],
        passed: tuple[type[E], ...] = (),
        started: Callable[[], None] = _nothing,
        rereads: asyncio.Semaphore | None = None,
        heartbeat: tuple[Heartbeats, StreamEnd] | None = None,
    ) -> None:
        self._broker = broker
        self._channel = channel
        self._after = after
        self._end = end
        self._replay = replay
        self._live = live
        self._passed = passed
        self._started = started
        self._rereads = rereads
        self._heartbeats: Heartbeats | None = None
        self._followed: Followed | None = None
        if heartbeat is not None:
            self._heartbeats = heartbeat[0]
            self._followed = Followed(heartbeat[1], self._cursor, self._resync)
        self._subscription: Subscription | None = None
        self._replaying: AsyncIterator[S] | None = None
        self._missed: list[S] = []
        self._delivered = 0
        self._interrupted = False
        self._closed = False

    def __aiter__(self) -> LiveStream[S, E]:
        return self

    def interrupt(self, _: object = None) -> None:
        """The next ``__anext__`` returns ``WOKEN`` first (a future's done callback)."""
        self._interrupted = True
        if self._subscription is not None:
            self._subscription.wake()

    async def __anext__(self) -> S | E | Woken:
        if self._closed:
            raise StopAsyncIteration
        if self._replaying is not None or self._subscription is None:
            replayed = await self._start_up()
            if replayed is not None:
                return replayed
        subscription = self._subscription
        assert subscription is not None
        # The held stream's wait is this one frame and the subscription's future (no
        # coroutine per step below it): thousands are held at once.
        while True:
            if self._interrupted:
                self._interrupted = False
                return WOKEN
            if self._missed:
                event = self._missed.pop(0)
                self._delivered = event.cursor
                return event
            payload = subscription.take()
            if payload is None:
                waiter = subscription.arm()
                try:
                    await waiter
                finally:
                    subscription.disarm()
                continue
            found = decode_shared(payload) if payload != RESYNC else None
            if isinstance(found, self._passed):
                return found
            if isinstance(found, self._live):
                if found.cursor <= self._delivered:
                    continue  # already delivered by a replay
                if found.prev == self._delivered:
                    self._delivered = found.cursor
                    return found
            # A resync signal, a gap, or a payload we cannot read: the database decides.
            await self._reread()

    async def _start_up(self) -> S | None:
        """Subscribe, then the replay's next event; None once the replay is done."""
        if self._subscription is None:
            await self._open()
        assert self._replaying is not None
        event = await anext(self._replaying, None)
        self._started()  # never hold a slot while the client reads (later batches)
        if event is None:
            self._replaying = None
            return None
        self._delivered = event.cursor
        return event

    async def _open(self) -> None:
        start = await self._end() if self._after is None else self._after
        subscription = Subscription((self._channel,))
        if self._followed is not None:
            subscription.idle_resync = None
        await self._broker.join(subscription)
        self._delivered = start
        self._subscription = subscription
        if self._interrupted:
            subscription.wake()
        if self._heartbeats is not None and self._followed is not None:
            self._heartbeats.follow(self._followed)
        self._replaying = aiter(self._replay(start))

    async def _reread(self) -> None:
        """What the database holds after the cursor, into ``_missed``; deferred (logged,
        tried at the next wake-up) when the database cannot serve now."""
        try:
            async with self._rereads or contextlib.nullcontext():
                self._missed = [event async for event in self._replay(self._delivered)]
        except Exception as error:
            if not unavailable(error):
                raise
            log.warning("reread_deferred", channel=self._channel, error=type(error).__name__)

    def _cursor(self) -> int:
        return self._delivered

    def _resync(self) -> None:
        if self._subscription is not None:
            self._subscription.offer(RESYNC)

    async def aclose(self) -> None:
        """Stop following: the broker and the heartbeat forget the stream, a replay under way
        gives its connection back. Idempotent; each step runs even if one before it raised
        (a second cancel, a broker error)."""
        if self._closed:
            return
        self._closed = True
        replaying, self._replaying = self._replaying, None
        heartbeats, followed = self._heartbeats, self._followed
        self._followed = None  # it holds two of our bound methods: no cycle left behind
        subscription, self._subscription = self._subscription, None
        try:
            if replaying is not None and hasattr(replaying, "aclose"):
                await replaying.aclose()
        finally:
            if heartbeats is not None and followed is not None:
                heartbeats.forget(followed)
            if subscription is not None:
                await self._broker.leave(subscription)
