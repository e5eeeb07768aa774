"""Subscriptions that really end: a live stream re-checks its reader's right to it.

Every ``DEALROOM_SUBSCRIPTION_RECHECK_SECONDS`` (and before delivering an event once that
interval has passed) the subscription re-runs its authorisation against the database:

* the session token it was opened with was signed out or expired: the websocket is closed
  with code 4401 (``SESSION_ENDED``), every operation on it ends;
* the session still stands but no longer reaches the stream (an act-as edge revoked, a
  guest key no longer bound to the pane's seat): that operation ends with the authorisation's
  coded error. A claim does not do that: a guest key keeps its seat after the claim.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TypeVar

from starlette.websockets import WebSocket, WebSocketState

from dealroom import gc_tuning
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.persistence.db import Db
from dealroom.persistence.repositories import SessionRepository
from dealroom.schema.context import Info
from dealroom.services.identity import digest

T = TypeVar("T")

SESSION_ENDED = 4401
"""Websocket close code: the session the socket was opened with has ended (signOut, expiry).
The client signs in again and reopens the socket."""


async def guarded(
    info: Info, events: AsyncGenerator[T, None], authorise: Callable[[], Awaitable[object]]
) -> AsyncIterator[T]:
    """``events``, for as long as ``authorise`` (which raises when refused) still passes."""
    loop = asyncio.get_running_loop()
    every = info.context.app.settings.subscription_recheck_seconds
    due = loop.time() + every
    pending: asyncio.Task[T] | None = None
    gc_tuning.note_subscribed()
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({pending}, timeout=max(0.0, due - loop.time()))
            if loop.time() >= due:
                if not await _still_allowed(info, authorise):
                    await _close(info)
                    return
                due = loop.time() + every
            if pending in done:
                task, pending = pending, None
                try:
                    item = task.result()
                except StopAsyncIteration:
                    return
                yield item
    finally:
        gc_tuning.note_unsubscribed()
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await events.aclose()


async def _still_allowed(info: Info, authorise: Callable[[], Awaitable[object]]) -> bool:
    """False when the socket's session has ended (close it); raises the authorisation's error
    when the session stands but no longer reaches the stream (end the operation). A signOut
    landing between the two checks is still a session that ended."""
    if await _session_ended(info):
        return False
    try:
        await authorise()
    except DomainError as error:
        if error.code is ErrorCode.UNAUTHENTICATED or await _session_ended(info):
            return False
        raise
    return True


async def _session_ended(info: Info) -> bool:
    """The socket presented a session token that is no longer live."""
    ctx = info.context
    token = ctx.credentials().token
    if token is None:
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
