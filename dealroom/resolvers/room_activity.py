"""``roomEvents``: the signed-in reader's room list, live (services/live/room_activity.py)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.websockets import WebSocket, WebSocketState

from dealroom.domain.errors import unauthenticated
from dealroom.resolvers.live import SESSION_ENDED, after_init_check, settle_credentials
from dealroom.schema.context import Info
from dealroom.schema.room_activity import RoomActivity
from dealroom.schema.scope_gate import require_key_scope
from dealroom.services.accounts.identity import digest, resolve_identity
from dealroom.services.live.room_activity import SessionEnded, room_activity
from dealroom.services.rooms import service as rooms


async def room_events(info: Info) -> AsyncIterator[RoomActivity]:
    ctx = info.context
    await after_init_check(ctx)
    # A start-up like the panes' (services/live/admission.py): a burst queues for a slot and
    # is refused UNAVAILABLE with a retry hint, never left to the pool's timeout. Its read is
    # short and of its own: the stream never holds a connection while it waits.
    async with ctx.app.admission.start_up():
        if not await settle_credentials(info):
            return  # the socket is closed
        async with ctx.reading() as db:
            identity = await resolve_identity(db, ctx.app.clock, ctx.credentials())
            require_key_scope(identity, "roomEvents")
            if identity.account is None:
                raise unauthenticated("Sign in to follow your room list.")
            page = await rooms.rooms_for_reader(
                db, identity, first=ctx.app.settings.max_page_size, after=None
            )
            # Which panes of each room the reader follows (its own, or all on the host side).
            participants = await rooms.participants_by_room(db, [r.id for r in page.rooms])
    token = ctx.credentials().token
    stream = room_activity(
        ctx.app.broker,
        identity.account.id,
        page.rooms,
        digest(token) if token else None,
        participants,
    )
    try:
        async for activity in stream:
            yield RoomActivity.from_activity(activity)
    except SessionEnded:
        socket = ctx.request
        if isinstance(socket, WebSocket) and socket.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await socket.close(code=SESSION_ENDED, reason="session ended")
    finally:
        await stream.aclose()
