"""The pane log: a room's event sequence and a pane's messages, with one owner.

``append`` takes the room's next event number and stores a message in one round trip on
PostgreSQL (two statements on SQLite, which has one writer and takes its lock at BEGIN); the
pane's tail it needs (previous cursor, session, the post counter) is kept on the participant
row by the database itself (migration 0011), so no append reads the pane's messages. Every
writer of a pane goes through it: a participant's post, the persona's reply, a run's system
lines, the held sends' questions and the platform's pane lines."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dealroom.domain import pane_words
from dealroom.domain.seats import AuthorKind
from dealroom.domain.sessions import DEFAULT_PAUSE, SessionRule, next_session
from dealroom.persistence.db import Db
from dealroom.persistence.messages import Appended, AppendRules, MessageRepository, NewMessage
from dealroom.persistence.models import Message
from dealroom.persistence.pane_read import Occupant

RATE_WINDOW = timedelta(minutes=1)
UNLIMITED = 1 << 30


@dataclass(frozen=True, slots=True)
class Stored:
    """A message the append stored, and the cursor of the pane's event before it."""

    row: Message
    prev: int
    memory: dict[str, Any] | None = None
    """The room's memory document as the append locked it (``reading_memory``)."""


@dataclass(frozen=True, slots=True)
class NotStored:
    """Nothing was stored: a retry (``existing``), or a post over the pane's rate limit or
    refused by the caller (``allowed=False``). The sequence number it took is rolled back
    with a refusal and spent by a retry (cursors only need to grow)."""

    existing: Message | None
    retry_after: int | None
    """Seconds until the pane's posting window reopens, when the rate limit refused it."""
    memory: dict[str, Any] | None = None
    """The room's memory document as the append locked it (``reading_memory``)."""


async def append(
    db: Db,
    pane: Occupant,
    *,
    author_kind: str,
    body: str,
    client_message_id: str,
    now: datetime,
    author_account_id: uuid.UUID | None = None,
    session: SessionRule = SessionRule.SITTING,
    per_minute: int | None = None,
    session_pause: timedelta = DEFAULT_PAUSE,
    allowed: bool = True,
    message_id: uuid.UUID | None = None,
    relayed_dispatch_id: uuid.UUID | None = None,
    reading_memory: bool = False,
) -> Stored | NotStored:
    """Store ``body`` in ``pane`` as the room's next event, idempotent on
    ``client_message_id``; its session by ``session`` (S1-S4); with ``per_minute``, at most
    that many such posts in a window of a minute from the window's first (a retry is never
    limited). Only ``pane``'s ids are read: the tail comes from the database under the room's
    lock, so the row may come from another transaction and one transaction may append twice.
    Lock order: the room's row, then the pane's. ``reading_memory``: the result also carries
    the room's memory as read under its row lock (a run's apply rewrites it), so no statement
    of its own reads it."""
    if author_kind != AuthorKind.PARTICIPANT.value:
        pane_words.refuse_labels(body)  # PW1: every line written to a person, one check
    repo = MessageRepository(db)
    new = NewMessage(
        id=message_id or uuid.uuid4(),
        room_id=pane.room_id,
        participant_id=pane.id,
        author_kind=author_kind,
        author_account_id=author_account_id,
        body=body,
        client_message_id=client_message_id,
        created_at=now,
        relayed_dispatch_id=relayed_dispatch_id,
    )
    limit = per_minute if per_minute is not None else UNLIMITED
    rules = _rules(now, session, session_pause, limit, allowed)
    if db.dialect == "postgresql":
        done = await repo.append_pg(new, rules, reading_memory=reading_memory)
    else:
        done = await _append_sqlite(repo, new, rules, reading_memory)
    if done.session_no is not None:
        return Stored(new.row(done.seq, done.session_no), done.prev, done.memory)
    existing = await repo.by_client_id(pane.id, client_message_id)
    retry_after = _retry_after(done, limit, now) if existing is None else None
    return NotStored(existing, retry_after, done.memory)


@dataclass(frozen=True, slots=True)
class StoredAutocommit:
    """A post :func:`append_autocommit` stored: what it was given, the event number and session the
    statement decided, and the cursor of the pane's event before it. No ORM row: the post only
    reads these back, and building a ``Message`` entity (its instance state and an attribute event
    per column) would cost about 1 % of a server's CPU under ``bench/realtime.py``."""

    message: NewMessage
    seq: int
    session_no: int
    prev: int


async def append_autocommit(
    db: Db, new: NewMessage, *, per_minute: int, session_pause: timedelta
) -> StoredAutocommit | None:
    """:func:`append` of a participant's post as its unit's only write, with the unit's
    deferred writes in the same statement, committed with it, no transaction around it
    (PostgreSQL, after ``db.can_write_autocommit()`` answered True: ``Db.write_autocommit``).
    None when it stored nothing, for any reason (a retry, the rate limit, a deferred write's
    refusal): then nothing at all was written, and the caller posts through :func:`append` to
    learn why."""
    rules = _rules(new.created_at, SessionRule.SITTING, session_pause, per_minute, True)
    done = await MessageRepository(db).append_autocommit(new, rules)
    if done is None or done.session_no is None:
        return None
    return StoredAutocommit(new, done.seq, done.session_no, done.prev)


def _rules(
    now: datetime, session: SessionRule, session_pause: timedelta, limit: int, allowed: bool
) -> AppendRules:
    return AppendRules(session, now - session_pause, now - RATE_WINDOW, limit, allowed)


async def pane_end(db: Db, room_id: uuid.UUID, participant_id: uuid.UUID) -> int:
    """The cursor of the pane's last stored event (its newest message or the room's newest
    stage change), in one statement on two rows."""
    return await MessageRepository(db).pane_end(room_id, participant_id)


async def _append_sqlite(
    repo: MessageRepository, new: NewMessage, rules: AppendRules, reading_memory: bool
) -> Appended:
    tail = await repo.bump(
        new.room_id, new.participant_id, new.created_at, reading_memory=reading_memory
    )
    done = Appended(
        seq=tail.seq,
        prev=max(tail.pane_seq, tail.stage_seq),
        session_no=None,
        window_start=tail.window_start,
        in_window=tail.in_window,
        memory=tail.memory,
    )
    if not rules.allowed or _over_limit(done, rules.per_window, new.created_at):
        return done
    # S1-S4 (domain.sessions); PostgreSQL computes the same in its statement.
    pause = new.created_at - rules.session_floor
    session_no = next_session(rules.session, tail.session_no, tail.last_at, new.created_at, pause)
    if not await repo.insert_unless_stored(new, tail.seq, session_no):
        return done
    return Appended(tail.seq, done.prev, session_no, done.window_start, done.in_window, tail.memory)


def _over_limit(done: Appended, limit: int, now: datetime) -> bool:
    start = done.window_start
    return start is not None and start > now - RATE_WINDOW and done.in_window >= limit


def _retry_after(done: Appended, limit: int, now: datetime) -> int | None:
    if not _over_limit(done, limit, now):
        return None
    assert done.window_start is not None
    return max(1, int((RATE_WINDOW - (now - done.window_start)).total_seconds()))
