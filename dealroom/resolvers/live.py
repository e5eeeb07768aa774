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

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from starlette.websockets import WebSocket, WebSocketState

from dealroom import gc_tuning
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.scopes import API_KEY_PREFIX
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.repositories import SessionRepository
from dealroom.schema.context import Info
from dealroom.services.events import EphemeralEvent, StoredEvent
from dealroom.services.identity import digest
from dealroom.services.live_stream import WOKEN, LiveStream
from dealroom.services.rechecks import Held, Outcome

S = TypeVar("S", bound=StoredEvent)
E = TypeVar("E", bound=EphemeralEvent)

SESSION_ENDED = 4401
"""Websocket close code: the session the socket was opened with has ended (signOut, expiry).
The client signs in again and reopens the socket."""


async def guarded(
    info: Info,
    events: LiveStream[S, E],
    authorise: Callable[[], Awaitable[object]],
    *,
    field: str,
    room_id: uuid.UUID,
    pane: Seat | None = None,
) -> AsyncIterator[S | E]:
    """``events``, for as long as ``authorise`` (which raises when refused) would still pass.

    ``field``, ``room_id`` and ``pane`` name what ``authorise`` checked (the root field for an
    API key's scopes, the room whose seats reach the stream, the pane read), so the registry
    can re-check the stream with every other one held in the process.

    A re-check's wake-up interrupts the stream's wait (``LiveStream.interrupt``) and is looked
    at before every item is passed on: no event reaches the reader after its stream was woken
    and before it acted. One task reads the stream (issue 17: no task, ``asyncio.wait`` and
    waiter per event per subscriber); cancelling it ends the stream."""
    rechecks = info.context.app.rechecks
    held = Held.of(info.context.credentials(), field=field, room_id=room_id, pane=pane)
    watch = rechecks.hold(held)
    watch.woken.add_done_callback(events.interrupt)
    gc_tuning.note_subscribed()
    try:
        async for item in events:
            if watch.woken.done():
                if not await _still_allowed(info, watch.woken.result(), authorise):
                    await _close(info)
                    return
                rechecks.release(watch)
                watch = rechecks.hold(held)
                watch.woken.add_done_callback(events.interrupt)
            if item is WOKEN:
                continue
            yield item
    finally:
        watch.woken.remove_done_callback(events.interrupt)
        rechecks.release(watch)
        gc_tuning.note_unsubscribed()
        await events.aclose()


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
    db = Db(ctx.app.sessionmaker)
    try:
        live = await SessionRepository(db).account_for_live_token(
            digest(token), ctx.app.clock.now()
        )
    finally:
        await db.close()
    return live is None


async def _close(info: Info) -> None:
    socket = info.context.request
    if isinstance(socket, WebSocket) and socket.application_state is WebSocketState.CONNECTED:
        with contextlib.suppress(Exception):
            await socket.close(code=SESSION_ENDED, reason="session ended")
