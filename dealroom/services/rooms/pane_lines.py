"""A line written into a pane by the platform rather than by a participant or its agent:
a system notice (a webhook disabled) or an operator speaking in the agent's seat."""

from __future__ import annotations

import uuid
from datetime import datetime

from dealroom.domain.seats import AuthorKind
from dealroom.domain.sessions import SessionRule
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message, Participant
from dealroom.persistence.pane_read import Occupant
from dealroom.persistence.seats import SeatRepository
from dealroom.services.clock import Clock
from dealroom.services.live.events import MessageAddedEvent, MessageView, pane_channel
from dealroom.services.rooms import pane_log
from dealroom.services.rooms.pane_log import NotStored

Publish = tuple[str, str]


async def write_line(
    db: Db,
    clock: Clock,
    pane: Occupant,
    body: str,
    *,
    author: AuthorKind,
    key: str,
    author_account_id: uuid.UUID | None = None,
) -> tuple[Message, Publish | None]:
    """Store ``body`` in ``pane`` through the pane log (idempotent on ``key``; S4: it
    continues the pane's session); the publish to make after commit, or None when the line
    was stored before."""
    return await line_at(
        db, pane, body, author=author, key=key, now=clock.now(), author_account_id=author_account_id
    )


async def line_at(
    db: Db,
    pane: Occupant,
    body: str,
    *,
    author: AuthorKind,
    key: str,
    now: datetime,
    author_account_id: uuid.UUID | None = None,
) -> tuple[Message, Publish | None]:
    """``write_line`` at a time the caller already holds (a turn's apply)."""
    done = await pane_log.append(
        db,
        pane,
        author_kind=author.value,
        author_account_id=author_account_id,
        body=body,
        client_message_id=key,
        now=now,
        session=SessionRule.CONTINUES,
    )
    if isinstance(done, NotStored):
        assert done.existing is not None  # nothing refuses a line: only a retry stores nothing
        return done.existing, None
    view = MessageView.from_row(done.row, pane.key)
    event = MessageAddedEvent(cursor=done.row.seq, prev=done.prev, message=view)
    return done.row, (pane_channel(pane.room_id, pane.key), event.encode())


async def home_pane(db: Db, account_id: uuid.UUID) -> Participant | None:
    """The account's own pane in its home room: where the platform tells it things."""
    return await SeatRepository(db).home_pane(account_id)
