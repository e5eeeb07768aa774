"""A line written into a pane by the platform rather than by a participant or its agent:
a system notice (a webhook disabled) or an operator speaking in the agent's seat."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from dealroom.domain.seats import AuthorKind, RoomKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message, Participant, Room
from dealroom.persistence.offers import pane_end
from dealroom.persistence.repositories import MessageRepository, RoomRepository
from dealroom.services.clock import Clock
from dealroom.services.events import MessageAddedEvent, MessageView, pane_channel

Publish = tuple[str, str]


async def write_line(
    db: Db,
    clock: Clock,
    pane: Participant,
    body: str,
    *,
    author: AuthorKind,
    key: str,
    author_account_id: uuid.UUID | None = None,
) -> tuple[Message, Publish | None]:
    """Store ``body`` in ``pane`` (idempotent on ``key``); the publish to make after commit,
    or None when the line was stored before."""
    messages = MessageRepository(db)
    now = clock.now()
    seq = await RoomRepository(db).next_event_seq(pane.room_id, now)  # the room's lock
    existing = await messages.by_client_id(pane.id, key)
    if existing is not None:
        return existing, None
    previous = await messages.last_in_pane(pane.id)
    prev = await pane_end(db, pane.room_id, pane.id)
    row = Message(
        id=uuid.uuid4(),
        room_id=pane.room_id,
        participant_id=pane.id,
        seq=seq,
        author_kind=author.value,
        author_account_id=author_account_id,
        body=body,
        session_no=previous.session_no if previous else 1,
        client_message_id=key,
        created_at=now,
    )
    await db.add(row)
    view = MessageView.from_row(row, Seat(pane.key))
    event = MessageAddedEvent(cursor=seq, prev=prev, message=view)
    return row, (pane_channel(pane.room_id, Seat(pane.key)), event.encode())


async def home_pane(db: Db, account_id: uuid.UUID) -> Participant | None:
    """The account's own pane in its home room: where the platform tells it things."""
    return await db.scalar(
        select(Participant)
        .join(Room, Room.id == Participant.room_id)
        .where(
            Room.host_account_id == account_id,
            Room.kind == RoomKind.HOME.value,
            Participant.key == Seat.HOST.value,
        )
        .limit(1)
    )
