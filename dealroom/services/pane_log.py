"""The pane log: a room's event sequence and a pane's messages, with one owner.

``append`` takes the room's next event number and stores a message in one round trip on
PostgreSQL (two statements on SQLite, which has one writer and takes its lock at BEGIN); the
pane's tail it needs (previous cursor, session, the post counter) is kept on the participant
row by the database itself (migration 0011), so no append reads the pane's messages."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from dealroom.domain.sessions import DEFAULT_PAUSE, session_number
from dealroom.persistence.db import Db
from dealroom.persistence.messages import Appended, MessageRepository, NewMessage
from dealroom.persistence.models import Message, Participant

RATE_WINDOW = timedelta(minutes=1)
UNLIMITED = 1 << 30


@dataclass(frozen=True, slots=True)
class Stored:
    """A message the append stored, and the cursor of the pane's event before it."""

    row: Message
    prev: int


@dataclass(frozen=True, slots=True)
class NotStored:
    """Nothing was stored: a retry (``existing``), or a post over the pane's rate limit or
    refused by the caller (``allowed=False``). The sequence number it took is rolled back
    with a refusal and spent by a retry (cursors only need to grow)."""

    existing: Message | None
    retry_after: int | None
    """Seconds until the pane's posting window reopens, when the rate limit refused it."""


async def append(
    db: Db,
    pane: Participant,
    *,
    author_kind: str,
    body: str,
    client_message_id: str,
    now: datetime,
    author_account_id: uuid.UUID | None = None,
    per_minute: int | None = None,
    session_pause: timedelta = DEFAULT_PAUSE,
    allowed: bool = True,
) -> Stored | NotStored:
    """Store ``body`` in ``pane`` as the room's next event, idempotent on
    ``client_message_id``; with ``per_minute``, at most that many such posts in a window of a
    minute from the window's first (a retry is never limited). ``pane`` must have been read
    in this transaction (SQLite takes its write lock at BEGIN, so it is current there)."""
    repo = MessageRepository(db)
    new = NewMessage(
        id=uuid.uuid4(),
        room_id=pane.room_id,
        participant_id=pane.id,
        author_kind=author_kind,
        author_account_id=author_account_id,
        body=body,
        client_message_id=client_message_id,
        created_at=now,
    )
    limit = per_minute if per_minute is not None else UNLIMITED
    if db.dialect == "postgresql":
        done = await repo.append_pg(
            new,
            allowed=allowed,
            session_floor=now - session_pause,
            window_floor=now - RATE_WINDOW,
            per_window=limit,
        )
    else:
        done = await _append_sqlite(repo, pane, new, allowed, limit, session_pause)
    if done.session_no is not None:
        return Stored(new.row(done.seq, done.session_no), done.prev)
    existing = await repo.by_client_id(pane.id, client_message_id)
    return NotStored(existing, _retry_after(done, limit, now) if existing is None else None)


async def pane_end(db: Db, room_id: uuid.UUID, participant_id: uuid.UUID) -> int:
    """The cursor of the pane's last stored event (its newest message or the room's newest
    stage change), in one statement on two rows."""
    return await MessageRepository(db).pane_end(room_id, participant_id)


async def _append_sqlite(
    repo: MessageRepository,
    pane: Participant,
    new: NewMessage,
    allowed: bool,
    limit: int,
    session_pause: timedelta,
) -> Appended:
    seq, stage_seq = await repo.bump(new.room_id, new.created_at)
    done = Appended(
        seq=seq,
        prev=max(pane.pane_seq, stage_seq),
        session_no=None,
        window_start=pane.posts_window_start,
        in_window=pane.posts_in_window,
    )
    if not allowed or _over_limit(done, limit, new.created_at):
        return done
    # S1, S2 (domain.sessions); PostgreSQL computes the same in its statement.
    session_no = session_number(
        pane.pane_session_no, pane.pane_last_at, new.created_at, session_pause
    )
    if not await repo.insert_unless_stored(new, seq, session_no):
        return done
    return Appended(seq, done.prev, session_no, done.window_start, done.in_window)


def _over_limit(done: Appended, limit: int, now: datetime) -> bool:
    start = done.window_start
    return start is not None and start > now - RATE_WINDOW and done.in_window >= limit


def _retry_after(done: Appended, limit: int, now: datetime) -> int | None:
    if not _over_limit(done, limit, now):
        return None
    assert done.window_start is not None
    return max(1, int((RATE_WINDOW - (now - done.window_start)).total_seconds()))
