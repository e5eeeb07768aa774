"""Posting into a pane, paging a pane, and following a pane live."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.domain import access, validation
from dealroom.domain.errors import DomainError, ErrorCode, forbidden, not_found
from dealroom.domain.redaction import redact_secrets
from dealroom.domain.seats import AuthorKind, Seat
from dealroom.domain.sessions import DEFAULT_PAUSE
from dealroom.persistence.db import Db
from dealroom.persistence.guest_posts import IP_WINDOW
from dealroom.persistence.messages import MessageRepository, NewMessage
from dealroom.persistence.models import AgentRun, Message, OfferEvent
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.pane_read import Occupant
from dealroom.persistence.repositories import GuestCount
from dealroom.persistence.watches import WatchRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.live.events import (
    AgentTypingEvent,
    EphemeralEvent,
    LoginRequiredChangedEvent,
    MessageAddedEvent,
    MessageDeltaEvent,
    MessageView,
    StageChangedEvent,
    StoredEvent,
    pane_channel,
    stage_event,
)
from dealroom.services.live.heartbeats import Heartbeats, StreamEnd
from dealroom.services.live.publish import RunSignal, publish_after_commit
from dealroom.services.live.stream import LiveStream
from dealroom.services.rooms import guests, pane_log
from dealroom.services.rooms.guests import Publish
from dealroom.services.rooms.pane_log import NotStored
from dealroom.services.rooms.service import (
    RoomAccess,
    WriterAccess,
    room_for_reader,
    room_for_writer,
)
from dealroom.services.turns.queue import queue_for_message, retry_failed
from dealroom.services.unit_of_work import reading

log = structlog.get_logger(__name__)


REPLAY_BATCH = 200


@dataclass(frozen=True, slots=True)
class PostLimits:
    per_minute: int
    session_pause: timedelta = DEFAULT_PAUSE


async def post_message(
    db: Db,
    broker: Broker,
    clock: Clock,
    identity: Identity,
    *,
    room_id: uuid.UUID,
    body: str,
    client_message_id: str,
    seat: Seat | None,
    limits: PostLimits,
    announce: RunSignal | None = None,
    guest_cap: int | None = None,
    counted: Callable[[Db, datetime], Awaitable[None]] | None = None,
    sole_write: bool = False,
) -> MessageView:
    """Store a participant's message in its own pane and publish it after commit.

    Idempotent on ``client_message_id`` per pane: a retry returns the original and stores
    nothing new. The mutation never waits for a model (ARCHITECTURE "The turn", step 1).
    ``counted``: the caller's count of the post (``abuse.count_post``), last in the unit (its
    refusal rolls the post back). ``sole_write``: the post is its unit's only write, so on
    PostgreSQL it may be one statement committed on its own (``pane_log.append_autocommit``)."""
    # RD1: a card number typed into chat is removed before anything stores it (agents never
    # collect cards; payment is made in the offer). RD3: so is an API key (K3).
    body = redact_secrets(validation.message_body(body))
    client_message_id = validation.client_message_id(client_message_id)
    now = clock.now()
    # A guest's charged posts are counted with the room, in its statement (the cap below).
    count = None if guest_cap is None else GuestCount(guest_cap, now - IP_WINDOW)
    room = await room_for_writer(db, identity, room_id, count=count)
    pane = _writable_pane(room, seat)
    participant = room.participant(pane)
    if participant is None:
        raise not_found("Pane")
    key = participant.key
    # The guest cap is decided here and applied in the append: a retry of a post that reached
    # the cap still returns the original (idempotency first, then the rate limit, then the cap).
    refused: DomainError | None = None
    gate_runs: list[AgentRun] = []
    gate_events: list[Publish] = []
    if guest_cap is not None:
        try:
            gate_runs, gate_events = await guests.check_guest_post(
                db, participant, cap=guest_cap, now=now, made=room.guest_posts.get(participant.id)
            )
        except DomainError as error:
            refused = error
    if sole_write and refused is None and not gate_runs and await db.can_write_autocommit():
        stored = await _post_autocommit(
            db,
            room.room.id,
            participant,
            identity,
            body=body,
            client_message_id=client_message_id,
            now=now,
            limits=limits,
            counted=counted,
        )
        if stored is not None:
            view = MessageView.from_new(stored.message, key, stored.seq, stored.session_no)
            return _published(db, broker, view, stored.prev, [], announce)
    done = await pane_log.append(
        db,
        participant,
        author_kind=AuthorKind.PARTICIPANT.value,
        author_account_id=identity.account.id if identity.account else None,
        body=body,
        client_message_id=client_message_id,
        now=now,
        per_minute=limits.per_minute,
        session_pause=limits.session_pause,
        allowed=refused is None,
    )
    if isinstance(done, NotStored):
        if done.existing is not None:
            return MessageView.from_row(done.existing, key)
        if done.retry_after is not None:
            # Rate limit per pane (a retry above is never limited). Raising rolls the
            # sequence number back with the rest.
            raise DomainError(
                ErrorCode.RATE_LIMITED,
                f"At most {limits.per_minute} messages a minute in one pane; wait a moment.",
                retryAfterSeconds=done.retry_after,
            )
        assert refused is not None
        raise refused
    await _defer_post_writes(db, room.room.id, participant.id, done.row.id, now, counted)
    await db.insert(gate_runs, later=True)
    view = MessageView.from_row(done.row, key)
    return _published(db, broker, view, done.prev, gate_events, announce)


async def _defer_post_writes(
    db: Db,
    room_id: uuid.UUID,
    participant_id: uuid.UUID,
    message_id: uuid.UUID,
    now: datetime,
    counted: Callable[[Db, datetime], Awaitable[None]] | None,
) -> None:
    """The writes that go with a stored post's message, all deferred (``Db.defer``): on
    PostgreSQL one statement at the commit, or folded into the append when the post is
    autocommitted (:func:`_post_autocommit`). The turn is queued with the message: a crash
    after commit loses neither, and the mutation never waits for it (first_spoke_at is
    stamped by the pane log). QW1: the room is not quiet. Last, the caller's count, whose
    refusal rolls the post back."""
    await queue_for_message(db, room_id, participant_id, message_id, now)
    WatchRepository(db).arm_later(room_id, now)  # QW1: every post re-arms the room watch
    if counted is not None:
        await counted(db, now)


async def _post_autocommit(
    db: Db,
    room_id: uuid.UUID,
    participant: Occupant,
    identity: Identity,
    *,
    body: str,
    client_message_id: str,
    now: datetime,
    limits: PostLimits,
    counted: Callable[[Db, datetime], Awaitable[None]] | None,
) -> pane_log.StoredAutocommit | None:
    """The post as one statement committed on its own: its runs, its room's watch and the
    caller's count deferred first, then folded into the append (``pane_log.append_autocommit``).
    None when it stored nothing; then nothing was written, and the post goes the usual way,
    which says why (a retry's original, the pane's or the cross-room rate limit)."""
    new = NewMessage(
        id=uuid.uuid4(),
        room_id=room_id,
        participant_id=participant.id,
        author_kind=AuthorKind.PARTICIPANT.value,
        author_account_id=identity.account.id if identity.account else None,
        body=body,
        client_message_id=client_message_id,
        created_at=now,
    )
    await _defer_post_writes(db, room_id, participant.id, new.id, now, counted)
    return await pane_log.append_autocommit(
        db, new, per_minute=limits.per_minute, session_pause=limits.session_pause
    )


def _published(
    db: Db,
    broker: Broker,
    view: MessageView,
    prev: int,
    also: list[Publish],
    announce: RunSignal | None,
) -> MessageView:
    """The stored post's event (``prev``: the cursor of the pane's event before it)
    published after the commit with ``also``, and the runners woken; returns ``view``."""
    event = MessageAddedEvent(cursor=view.seq, prev=prev, message=view)
    publish_after_commit(
        db,
        broker,
        [(pane_channel(view.room_id, view.pane_key), event.encode()), *also],
        announce=announce,
    )
    return view


async def retry_failed_turns(
    db: Db, clock: Clock, identity: Identity, *, room_id: uuid.UUID, seat: Seat | None
) -> int:
    """Re-queue the failed agent turns of a pane the reader may write in (R6)."""
    room = await room_for_reader(db, identity, room_id)
    participant = room.participant(_writable_pane(room, seat))
    if participant is None:
        raise not_found("Pane")
    return await retry_failed(db, clock, participant.id)


def _writable_pane(room: RoomAccess | WriterAccess, seat: Seat | None) -> Seat:
    """R6: only one's own pane; a host may not write into the visitor's pane."""
    pane = seat or room.reader_seat
    if pane not in access.writable_panes(room.seats):
        raise forbidden("You can only write in your own pane.")
    return pane


def readable_pane(
    room: RoomAccess, seat: Seat | None, participant_id: uuid.UUID | None = None
) -> tuple[uuid.UUID, str]:
    """The pane's participant id and key if the reader may read it (R2, R3, R8): by side
    (the reader's own pane there, else the side's lead's) or by participant."""
    if participant_id is not None:
        participant = next((p for p in room.participants if p.id == participant_id), None)
    else:
        participant = room.participant(seat or room.reader_seat)
    if participant is None or participant.key not in room.readable:
        if participant is not None or participant_id is not None:
            raise forbidden("You cannot read that pane.")
        raise not_found("Pane")
    return participant.id, participant.key


@dataclass(frozen=True, slots=True)
class MessagePage:
    messages: list[MessageView]
    has_next: bool
    has_previous: bool


async def page_messages(
    db: Db,
    participant_id: uuid.UUID,
    seat: str,
    *,
    first: int | None,
    after: int | None,
    last: int | None,
    before: int | None,
) -> MessagePage:
    """Cursor pagination both ways. ``first``/``after`` walk forward in time; ``last``/``before``
    walk backward (the newest ``last`` messages before ``before``), returned oldest first."""
    repo = MessageRepository(db)
    if last is not None:
        rows = await repo.page(
            participant_id, after=after, before=before, limit=last + 1, newest_first=True
        )
        has_previous = len(rows) > last
        rows = list(reversed(rows[:last]))
        return MessagePage(
            [MessageView.from_row(r, seat) for r in rows],
            has_next=before is not None,
            has_previous=has_previous,
        )
    limit = first if first is not None else 50
    rows = await repo.page(
        participant_id, after=after, before=before, limit=limit + 1, newest_first=False
    )
    return MessagePage(
        [MessageView.from_row(r, seat) for r in rows[:limit]],
        has_next=len(rows) > limit,
        has_previous=after is not None,
    )


def follow_pane(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    *,
    room_id: uuid.UUID,
    participant_id: uuid.UUID,
    seat: str,
    after: int | None,
    started: Callable[[], None] = lambda: None,
    rereads: asyncio.Semaphore | None = None,
    heartbeats: Heartbeats | None = None,
) -> LiveStream[StoredEvent, EphemeralEvent]:
    """Replay what the database holds after ``after``, then go live: no gap, no duplicate.

    Subscribes first, then reads, so an event committed during the replay is either in the
    read or in the queue; ``prev`` links tell a queued duplicate from a missed event.
    ``after=None`` starts from the pane's end as read *before* subscribing: anything committed
    once the broker lists the subscription is delivered (replayed if it raced the subscribe)."""
    return LiveStream(
        broker,
        pane_channel(room_id, seat),
        after,
        partial(_pane_end, sessionmaker, room_id, participant_id),
        partial(_replay, sessionmaker, room_id, participant_id, seat),
        live=_PANE_STORED,
        passed=_PANE_PASSED,
        started=started,
        rereads=rereads,
        heartbeat=None if heartbeats is None else (heartbeats, StreamEnd("pane", participant_id)),
    )


_PANE_STORED: tuple[type[StoredEvent], ...] = (MessageAddedEvent, StageChangedEvent)
_PANE_PASSED: tuple[type[EphemeralEvent], ...] = (
    AgentTypingEvent,
    MessageDeltaEvent,
    LoginRequiredChangedEvent,
)
"""Typing and deltas are not stored: passed through, never replayed."""


async def _pane_end(
    sessionmaker: async_sessionmaker[AsyncSession], room_id: uuid.UUID, participant_id: uuid.UUID
) -> int:
    async with reading(sessionmaker) as db:
        return await pane_log.pane_end(db, room_id, participant_id)


async def _replay(
    sessionmaker: async_sessionmaker[AsyncSession],
    room_id: uuid.UUID,
    participant_id: uuid.UUID,
    seat: str,
    after: int,
) -> AsyncIterator[StoredEvent]:
    """The pane's stored events after ``after``: its messages and the room's stage changes,
    merged in cursor order, a batch at a time."""
    while True:
        # a session of its own per batch: never hold a connection while the client reads
        async with reading(sessionmaker) as db:
            rows = await MessageRepository(db).page(
                participant_id, after=after, before=None, limit=REPLAY_BATCH, newest_first=False
            )
            stages = await OfferRepository(db).room_events_after(room_id, after, REPLAY_BATCH)
        full = len(rows) == REPLAY_BATCH or len(stages) == REPLAY_BATCH
        # Past the end of a full batch the other table may hold earlier events: stop there.
        horizon = min(
            rows[-1].seq if len(rows) == REPLAY_BATCH else 1 << 62,
            stages[-1].seq if len(stages) == REPLAY_BATCH else 1 << 62,
        )
        merged: list[tuple[int, Message | OfferEvent]] = sorted(
            [(row.seq, row) for row in rows] + [(event.seq, event) for event in stages],
            key=lambda item: item[0],
        )
        prev = after
        for seq, item in merged:
            if seq > horizon:
                break
            if isinstance(item, Message):
                yield MessageAddedEvent(
                    cursor=seq, prev=prev, message=MessageView.from_row(item, seat)
                )
            else:
                yield stage_event(item, prev)
            prev = seq
        if not full:
            return
        after = prev
