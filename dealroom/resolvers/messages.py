"""Message resolvers and the pane subscription."""

from __future__ import annotations

import uuid
from functools import partial
from typing import assert_never

import strawberry

from dealroom.domain.cursors import event_cursor, parse_event_cursor
from dealroom.domain.seats import AuthorKind, Seat, message_alignment
from dealroom.resolvers.live import Admit, Guarded, Opened
from dealroom.schema.context import Info
from dealroom.schema.fanout import shared
from dealroom.schema.inputs import PostMessageInput
from dealroom.schema.offer_types import StageChanged
from dealroom.schema.pane_types import (
    AgentTyping,
    LoginRequiredChanged,
    Message,
    MessageAdded,
    MessageDelta,
    PaneEvent,
    SystemLine,
)
from dealroom.schema.scope_gate import require_key_scope
from dealroom.services.accounts import abuse
from dealroom.services.accounts.identity import resolve_identity
from dealroom.services.live.events import (
    AgentTypingEvent,
    EphemeralEvent,
    LoginRequiredChangedEvent,
    MessageAddedEvent,
    MessageDeltaEvent,
    PaneEventData,
    StageChangedEvent,
    StoredEvent,
)
from dealroom.services.ops import metrics
from dealroom.services.rooms import messages
from dealroom.services.rooms import service as rooms


async def post_message(info: Info, input: PostMessageInput) -> Message:
    ctx = info.context
    identity = await ctx.identity()
    room_id = rooms.parse_id(input.room_id, "room")
    async with ctx.transaction() as db:
        view = await messages.post_message(
            db,
            ctx.app.broker,
            ctx.app.clock,
            identity,
            room_id=room_id,
            body=input.body,
            client_message_id=input.client_message_id,
            seat=Seat(input.seat) if input.seat is not None else None,
            limits=messages.PostLimits(
                per_minute=ctx.app.settings.posts_per_minute,
                session_pause=ctx.app.settings.session_pause,
            ),
            announce=ctx.app.runner.signal,
            guest_cap=ctx.app.settings.guest_message_cap,
            counted=lambda db, now: abuse.count_post(db, ctx.app.settings, identity, now),
            sole_write=True,
        )
    metrics.POSTS.labels("participant").inc()
    # The author reads its own message from the pane it wrote into.
    return Message.from_view(view, view.seat)


async def retry_turn(info: Info, room_id: strawberry.ID, seat: Seat | None) -> int:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        count = await messages.retry_failed_turns(
            db, ctx.app.clock, identity, room_id=rooms.parse_id(room_id, "room"), seat=seat
        )
    if count:
        await ctx.app.runner.announce()
    return count


def pane_events(
    info: Info,
    room_id: strawberry.ID,
    seat: Seat | None,
    after: str | None = None,
    participant_id: strawberry.ID | None = None,
) -> Guarded[StoredEvent, EphemeralEvent, PaneEvent]:
    async def open(admit: Admit) -> Opened[StoredEvent, EphemeralEvent, PaneEvent]:
        ctx = info.context
        room_uuid = rooms.parse_id(room_id, "room")
        wanted = rooms.parse_id(participant_id, "participant") if participant_id else None
        start = parse_event_cursor(after) if after is not None else None
        started = await admit()
        pane_id, key, reader = await _authorise_pane(info, room_uuid, seat, wanted)
        return Opened(
            messages.follow_pane(
                ctx.app.sessionmaker,
                ctx.app.broker,
                room_id=room_uuid,
                participant_id=pane_id,
                seat=key,
                after=start,
                started=started,
                rereads=ctx.app.admission.rereads,
                heartbeats=ctx.app.heartbeats,
            ),
            lambda: _authorise_pane(info, room_uuid, seat, wanted),
            field="paneEvents",
            room_id=room_uuid,
            pane=key,
            project=partial(_item_for, reader),
        )

    return Guarded(info, open, metrics.SUBSCRIPTIONS_OPEN.labels("paneEvents"))


def _item_for(reader: Seat, event: PaneEventData) -> PaneEvent | None:
    if isinstance(event, LoginRequiredChangedEvent) and reader is not Seat.VISITOR:
        return None  # seed 000: the gate is the visitor view's (the host reads false)
    # One object for every subscriber whose view of the event is the same: executed and
    # encoded once (schema/fanout.py).
    return shared(_view_of(event, reader), partial(_project, event, reader))


def _view_of(event: PaneEventData, reader: Seat) -> tuple[object, ...]:
    """All that ``_project(event, reader)`` depends on: the reader matters to a message only
    through its alignment; every other event reads alike from both seats."""
    if isinstance(event, MessageAddedEvent):
        view = event.message
        return (event, message_alignment(reader, view.seat, view.author_kind))
    return (event,)


def _project(event: PaneEventData, reader: Seat) -> PaneEvent:
    match event:
        case MessageDeltaEvent():
            return MessageDelta(
                cursor=event_cursor(event.after),
                message_id=strawberry.ID(str(event.message_id)),
                delta=event.delta,
            )
        case AgentTypingEvent():
            return AgentTyping(
                cursor=event_cursor(event.after),
                message_id=strawberry.ID(str(event.message_id)),
                agent=event.agent,
            )
        case StageChangedEvent():
            return StageChanged.from_event(event)
        case LoginRequiredChangedEvent():
            return LoginRequiredChanged(
                cursor=event_cursor(event.after), login_required=event.login_required
            )
        case MessageAddedEvent():
            message = Message.from_view(event.message, reader)
            if event.message.author_kind is AuthorKind.SYSTEM:
                return SystemLine(cursor=event_cursor(event.cursor), message=message)
            return MessageAdded(cursor=event_cursor(event.cursor), message=message)
        case _:
            assert_never(event)


async def _authorise_pane(
    info: Info, room_id: uuid.UUID, seat: Seat | None, participant_id: uuid.UUID | None
) -> tuple[uuid.UUID, str, Seat]:
    """Check the reader may follow the pane; return only what the stream needs.

    A separate frame on purpose: the rows loaded here (room, participants, account) would
    otherwise live as long as the subscription, about 10 KiB each."""
    ctx = info.context
    # A short-lived unit of work: a subscription must never hold a connection while it waits.
    async with ctx.reading() as db:
        # Resolved per operation: a session revoked since the socket opened no longer reads.
        identity = await resolve_identity(db, ctx.app.clock, ctx.credentials())
        require_key_scope(identity, "paneEvents")
        room = await rooms.room_for_reader(db, identity, room_id)
        pane_id, key = messages.readable_pane(room, seat, participant_id)
        return pane_id, key, room.reader_seat
