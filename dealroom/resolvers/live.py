"""Subscriptions that really end: a live stream re-checks its reader's right to it.

Every ``DEALROOM_SUBSCRIPTION_RECHECK_SECONDS`` the process's registry (``services/rechecks``)
re-reads, for every held stream at once, what the streams stand on, and wakes only those whose
standing changed; an event is never delivered after its stream was woken and before it acted:

* the session token it was opened with was signed out or expired (or its API key revoked): the
  websocket is closed with code 4401 (``SESSION_ENDED``), every operation on it ends;
* the session still stands but no longer reaches the stream (an act-as edge revoked, a guest
  key or account no longer bound to the pane's seat): the stream re-runs its authorisation,
  and that operation ends with its coded error. A claim does not do that: a guest key keeps
  its seat after the claim.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import structlog
from prometheus_client import Gauge
from starlette.websockets import WebSocket, WebSocketState

from dealroom import gc_tuning
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.scopes import API_KEY_PREFIX
from dealroom.persistence.repositories import SessionRepository
from dealroom.schema.context import Context, Info
from dealroom.services.accounts.identity import digest, resolve_identity
from dealroom.services.live.admission import StartUp
from dealroom.services.live.events import EphemeralEvent, StoredEvent
from dealroom.services.live.rechecks import Held, Outcome, Watch
from dealroom.services.live.stream import WOKEN, LiveStream

S = TypeVar("S", bound=StoredEvent)
E = TypeVar("E", bound=EphemeralEvent)
T = TypeVar("T")

log = structlog.get_logger(__name__)

SESSION_ENDED = 4401
"""Websocket close code: the session the socket was opened with has ended (signOut, expiry).
The client signs in again and reopens the socket."""
NOT_VALID = 4401
"""Websocket close code: a credential the socket presented is not valid."""
ACT_AS_FORBIDDEN = 4403
"""Websocket close code: the credentials are valid but may not act as the account asked for."""

_CLOSE_FOR = {
    ErrorCode.UNAUTHENTICATED: NOT_VALID,
    # A guest key or actAs this server never issued is a credential that is not valid.
    ErrorCode.BAD_USER_INPUT: NOT_VALID,
    ErrorCode.FORBIDDEN: ACT_AS_FORBIDDEN,
}


async def credentials_refusal(ctx: Context) -> tuple[int, str] | None:
    """The close code and reason for a socket's credentials presented but not valid; None when
    they stand (or none were presented: an anonymous socket). A stale session *cookie* is
    ignored, as over HTTP: the browser keeps sending it after expiry and it names no choice of
    the client's."""
    try:
        async with ctx.reading() as db:
            await resolve_identity(db, ctx.app.clock, ctx.credentials())
    except DomainError as error:
        code = _CLOSE_FOR.get(error.code)
        if code is None:
            raise
        return code, error.message
    return None


async def after_init_check(ctx: Context) -> None:
    """Wait for connection_init's credential check if it is still waiting on the database
    (``ws_graphql``): it holds a start-up slot, so the socket's start-up follows it instead of
    queueing behind it and being refused while its own check holds the slot."""
    check = ctx.credentials_check
    if check is not None and not check.done():
        await asyncio.wait([check])  # a cancelled subscribe leaves the socket's check running


async def settle_credentials(info: Info) -> bool:
    """On a socket acked with its credentials unchecked (the database was busy at
    connection_init), check them now, in the caller's start-up slot: a credential that is not
    valid closes the socket as connection_init would have, and False ends the operation. A
    busy pool raises here, inside the slot, and becomes UNAVAILABLE (``StartUp``)."""
    ctx = info.context
    if not ctx.credentials_unchecked:
        return True
    refused = await credentials_refusal(ctx)
    if refused is None:
        ctx.credentials_unchecked = False
        return True
    code, reason = refused
    log.info("websocket_refused", code=code, reason=reason, protocol="start-up")
    await _close(info, code, reason)
    return False


@dataclass(frozen=True, slots=True)
class Opened(Generic[S, E, T]):
    """What a subscription's start-up found: its stream, how to re-run its authorisation,
    what that authorisation checked (the root field for an API key's scopes, the room whose
    seats reach the stream, the pane read) and how an event reads to this reader (None:
    not for it)."""

    stream: LiveStream[S, E]
    authorise: Callable[[], Awaitable[object]]
    field: str
    room_id: uuid.UUID
    project: Callable[[S | E], T | None]
    pane: str | None = None
    """The pane (participant key) a pane stream reads."""


Admit = Callable[[], Awaitable[StartUp]]
Open = Callable[[Admit], Awaitable[Opened[S, E, T]]]
"""A resolver's start-up: parse its input, ``await admit()`` for a start-up slot, authorise,
follow; returns what it opened."""


class Guarded(Generic[S, E, T]):
    """A subscription resolver's stream, for as long as its authorisation would still pass.

    The first ``__anext__`` runs ``open`` (which takes a start-up slot through its ``admit``
    once its input is parsed) and counts the stream in ``gauge``; the process's registry
    then re-checks it with every other stream held (``field``, ``room_id`` and ``pane`` name
    what was checked). A re-check's wake-up interrupts the stream's wait
    (``LiveStream.interrupt``) and is looked at before every item is passed on: no event
    reaches the reader after its stream was woken and before it acted.

    One object, read by the operation's own task: no async generator per layer,
    no task, ``asyncio.wait`` and waiter per event per subscriber. Any error, the end of the
    stream, a cancel or ``aclose`` ends it the same way (``_end``, once)."""

    __slots__ = ("_gauge", "_info", "_open", "_opened", "_start_up", "_watch")

    def __init__(self, info: Info, open: Open[S, E, T], gauge: Gauge) -> None:
        self._info = info
        self._open: Open[S, E, T] | None = open
        self._gauge: Gauge | None = gauge
        self._opened: Opened[S, E, T] | None = None
        self._start_up: StartUp | None = None
        self._watch: Watch | None = None

    def __aiter__(self) -> Guarded[S, E, T]:
        return self

    async def __anext__(self) -> T:
        try:
            opened = self._opened or await self._begin()
            while True:
                item = await opened.stream.__anext__()
                watch = self._watch
                if watch is not None and watch.woken.done():
                    if not await _still_allowed(self._info, watch.woken.result(), opened.authorise):
                        await _close(self._info)
                        raise StopAsyncIteration
                    self._rewatch(opened)
                if item is WOKEN:
                    continue
                projected = opened.project(item)
                if projected is not None:
                    return projected
        except BaseException as error:
            await self._end(error)
            raise

    async def _begin(self) -> Opened[S, E, T]:
        if self._open is None:
            raise StopAsyncIteration  # ended before it began
        open, self._open = self._open, None
        opened = await open(self._admit)
        self._opened = opened
        if self._gauge is not None:
            self._gauge.inc()
        self._rewatch(opened)
        gc_tuning.note_subscribed()
        return opened

    async def _admit(self) -> StartUp:
        """Take a start-up slot (``open`` calls it once its input is parsed): a burst of
        subscribes queues here, bounded, not on the pool (services/live/admission.py). The
        socket's credentials are checked in it when connection_init could not."""
        await after_init_check(self._info.context)
        start_up = StartUp(self._info.context.app.admission)
        await start_up.__aenter__()
        self._start_up = start_up
        if not await settle_credentials(self._info):
            raise StopAsyncIteration  # the socket is closed
        return start_up

    def _rewatch(self, opened: Opened[S, E, T]) -> None:
        self._unwatch(opened)
        held = Held.of(
            self._info.context.credentials(),
            field=opened.field,
            room_id=opened.room_id,
            pane=opened.pane,
        )
        self._watch = self._info.context.app.rechecks.hold(held)
        self._watch.woken.add_done_callback(opened.stream.interrupt)

    def _unwatch(self, opened: Opened[S, E, T]) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.woken.remove_done_callback(opened.stream.interrupt)
            self._info.context.app.rechecks.release(watch)

    async def aclose(self) -> None:
        await self._end(None)

    async def _end(self, error: BaseException | None) -> None:
        """Once: stop watching, close the stream, uncount it, give a start-up slot back (an
        error while starting may still be turned into UNAVAILABLE there). Each step runs even
        if one before it raised (a second cancel while the stream leaves the broker)."""
        self._open = None
        opened, self._opened = self._opened, None
        gauge, self._gauge = self._gauge, None
        start_up, self._start_up = self._start_up, None
        try:
            if opened is not None:
                if self._watch is not None:
                    self._unwatch(opened)
                    gc_tuning.note_unsubscribed()
                if gauge is not None:
                    gauge.dec()
                await opened.stream.aclose()
        finally:
            if start_up is not None:
                kind = None if error is None else type(error)
                await start_up.__aexit__(kind, error, None)


async def _still_allowed(
    info: Info, outcome: Outcome, authorise: Callable[[], Awaitable[object]]
) -> bool:
    """False when the socket's session has ended (close it); raises the authorisation's error
    when the session stands but no longer reaches the stream (end the operation). A signOut
    landing between the round and the authorisation is still a session that ended."""
    if outcome is Outcome.SESSION_ENDED:
        return False
    try:
        await authorise()
    except DomainError as error:
        if error.code is ErrorCode.UNAUTHENTICATED or await _session_ended(info):
            return False
        raise
    return True


async def _session_ended(info: Info) -> bool:
    """The socket presented a session token that is no longer live. (An API key is not a
    session: its authorisation answers UNAUTHENTICATED once it is revoked.)"""
    ctx = info.context
    token = ctx.credentials().token
    if token is None or token.startswith(API_KEY_PREFIX):
        return False
    async with ctx.reading() as db:
        live = await SessionRepository(db).account_for_live_token(
            digest(token), ctx.app.clock.now()
        )
    return live is None


async def _close(info: Info, code: int = SESSION_ENDED, reason: str = "session ended") -> None:
    socket = info.context.request
    if isinstance(socket, WebSocket) and socket.application_state is WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await socket.close(code=code, reason=reason[:120])
