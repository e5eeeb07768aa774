"""The pane log's queries: a pane's messages, its tail and the one-round-trip append.

A pane's tail (its newest message's cursor, session and time, and the participant's post
counter) lives on the participant row and the room's newest stage change on the room row,
both kept by triggers on every insert (migration 0011), so reading a pane's end never scans
its messages and no writer can forget to keep them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import JSON, Integer, Uuid, and_, bindparam, func, select, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dealroom.domain.sessions import SessionRule
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message, Participant, Room, UTCDateTime


@dataclass(frozen=True, slots=True)
class NewMessage:
    """What an append stores; ``seq`` and (on PostgreSQL) ``session_no`` are decided by it."""

    id: uuid.UUID
    room_id: uuid.UUID
    participant_id: uuid.UUID
    author_kind: str
    author_account_id: uuid.UUID | None
    body: str
    client_message_id: str
    created_at: datetime
    relayed_dispatch_id: uuid.UUID | None = None
    """The delivery an agent's line relays (the persona's reply to a dispatch)."""

    def columns(self, seq: int, session_no: int) -> dict[str, object]:
        return {
            "id": self.id,
            "room_id": self.room_id,
            "participant_id": self.participant_id,
            "seq": seq,
            "author_kind": self.author_kind,
            "author_account_id": self.author_account_id,
            "body": self.body,
            "session_no": session_no,
            "client_message_id": self.client_message_id,
            "relayed_dispatch_id": self.relayed_dispatch_id,
            "created_at": self.created_at,
        }

    def row(self, seq: int, session_no: int) -> Message:
        """The stored message as a detached row (for views; never added to a session)."""
        return Message(**self.columns(seq, session_no))


@dataclass(frozen=True, slots=True)
class Appended:
    """The outcome of one append, with the pane's tail as it was before it."""

    seq: int
    """The event number the append took (spent, not stored, when ``session_no`` is None)."""
    prev: int
    """The pane's end before the append: the previous event's cursor."""
    session_no: int | None
    """The stored message's session; None when nothing was stored (a retry or a refusal)."""
    window_start: datetime | None
    """The participant's posting window as it was before the append (the rate limit)."""
    in_window: int
    memory: dict[str, Any] | None = None
    """The room's memory document as the append locked it, when asked for
    (``reading_memory``)."""


@dataclass(frozen=True, slots=True)
class AppendRules:
    """What an append decides by: the session (S1-S4: ``session`` with the S2 pause's
    ``session_floor``), the rate limit (at most ``per_window`` posts in a window that began
    after ``window_floor``) and whether the caller allows the insert at all."""

    session: SessionRule
    session_floor: datetime
    window_floor: datetime
    per_window: int
    allowed: bool = True


@dataclass(frozen=True, slots=True)
class Tail:
    """SQLite's bump: the event number it took and the pane's tail as it was, read in the
    same statement (the participant row in a caller's session may be older: the turn loads
    the pane in one transaction and appends in another, and one transaction may append
    twice)."""

    seq: int
    stage_seq: int
    pane_seq: int
    session_no: int | None
    last_at: datetime | None
    window_start: datetime | None
    in_window: int
    memory: dict[str, Any] | None = None


# One round trip on PostgreSQL: the room's row lock and sequence bump, the pane's tail read
# under that lock (FOR NO KEY UPDATE, in a LATERAL that runs after the bump: a plain read would
# see the statement's snapshot, taken before the lock wait), the insert unless refused or a
# retry (ON CONFLICT on the pane's client id), and the tail as it was. NO KEY: a plain FOR
# UPDATE also blocks the KEY SHARE lock every foreign key to the pane takes, so a job queueing
# a run for this pane (its FK check) waited on the post while the post waited on the job's
# watch row: a deadlock, seen on PostgreSQL under load. The session is S1-S4
# (``domain.sessions.next_session``): ``:sitting`` the S2 pause, ``:opens`` S3.
_PG_APPEND_SQL = """
WITH s AS (
    UPDATE rooms SET event_seq = event_seq + 1, last_activity_at = :now
    WHERE id = :room_id
    RETURNING event_seq, stage_seq{room}
), t AS (
    SELECT s.event_seq, s.stage_seq, p.pane_seq, p.pane_session_no, p.pane_last_at,
           p.posts_window_start, p.posts_in_window
    FROM s CROSS JOIN LATERAL (
        SELECT pane_seq, pane_session_no, pane_last_at, posts_window_start, posts_in_window
        FROM participants WHERE id = :participant_id AND s.event_seq > 0
        FOR NO KEY UPDATE
    ) AS p
), m AS (
    INSERT INTO messages (id, room_id, participant_id, seq, author_kind, author_account_id,
                          body, session_no, client_message_id, relayed_dispatch_id,
                          created_at)
    SELECT :id, :room_id, :participant_id, t.event_seq, :author_kind, :author_account_id,
           :body,
           CASE WHEN t.pane_last_at IS NULL OR t.pane_session_no IS NULL THEN 1
                WHEN (:opens OR :sitting) AND t.pane_last_at < :session_floor
                    THEN t.pane_session_no + 1
                ELSE t.pane_session_no END,
           :client_message_id, :relayed_dispatch_id, :now
    FROM t
    WHERE :allowed AND NOT (t.posts_window_start IS NOT NULL
                            AND t.posts_window_start > :window_floor
                            AND t.posts_in_window >= :per_window)
    ON CONFLICT (participant_id, client_message_id) DO NOTHING
    RETURNING session_no
)
SELECT t.event_seq, t.stage_seq, t.pane_seq, t.posts_window_start, t.posts_in_window,
       m.session_no{room_out}
FROM t{join} LEFT JOIN m ON true
"""
_PG_APPEND = text(_PG_APPEND_SQL.format(room="", room_out="", join=""))
# The persona's reply also reads the room's memory (a run's apply rewrites it): returned by the
# bump itself, so it is the row as locked (the newest version), not the statement's snapshot.
_PG_APPEND_READING_MEMORY = text(
    _PG_APPEND_SQL.format(
        room=", memory",
        room_out=", s.memory",
        join=" CROSS JOIN s",
    )
).columns(
    event_seq=Integer,
    stage_seq=Integer,
    pane_seq=Integer,
    posts_window_start=UTCDateTime,
    posts_in_window=Integer,
    session_no=Integer,
    memory=JSON,
)


# SQLite's first half of the append: the room's next event number and the pane's tail in one
# statement, built once (SQLite has one writer, taken at BEGIN: the tail read here is current).
# Written out: SQLAlchemy renders a RETURNING subquery's WHERE unqualified on SQLite.
_SQLITE_BUMP_SQL = """
UPDATE rooms SET event_seq = event_seq + 1, last_activity_at = :now
WHERE rooms.id = :room_id
RETURNING event_seq, stage_seq,
    (SELECT p.pane_seq FROM participants AS p WHERE p.id = :participant_id) AS pane_seq,
    (SELECT p.pane_session_no FROM participants AS p WHERE p.id = :participant_id)
        AS pane_session_no,
    (SELECT p.pane_last_at FROM participants AS p WHERE p.id = :participant_id) AS pane_last_at,
    (SELECT p.posts_window_start FROM participants AS p WHERE p.id = :participant_id)
        AS posts_window_start,
    (SELECT p.posts_in_window FROM participants AS p WHERE p.id = :participant_id)
        AS posts_in_window{room}
"""
_SQLITE_TAIL = {
    "event_seq": Integer,
    "stage_seq": Integer,
    "pane_seq": Integer,
    "pane_session_no": Integer,
    "pane_last_at": UTCDateTime,
    "posts_window_start": UTCDateTime,
    "posts_in_window": Integer,
}
_SQLITE_BINDS = (
    bindparam("now", type_=UTCDateTime),
    bindparam("room_id", type_=Uuid),
    bindparam("participant_id", type_=Uuid),
)
_SQLITE_BUMP = (
    text(_SQLITE_BUMP_SQL.format(room="")).bindparams(*_SQLITE_BINDS).columns(**_SQLITE_TAIL)
)
_SQLITE_BUMP_READING_MEMORY = (
    text(_SQLITE_BUMP_SQL.format(room=", memory"))
    .bindparams(*_SQLITE_BINDS)
    .columns(**_SQLITE_TAIL, memory=JSON)
)


def _memory_of(row: Any) -> dict[str, Any]:
    return dict(row.memory or {})


def _append_params(message: NewMessage, rules: AppendRules) -> dict[str, Any]:
    return {
        "id": message.id,
        "room_id": message.room_id,
        "participant_id": message.participant_id,
        "author_kind": message.author_kind,
        "author_account_id": message.author_account_id,
        "body": message.body,
        "client_message_id": message.client_message_id,
        "relayed_dispatch_id": message.relayed_dispatch_id,
        "now": message.created_at,
        "allowed": rules.allowed,
        "opens": rules.session is SessionRule.OPENS,
        "sitting": rules.session is SessionRule.SITTING,
        "session_floor": rules.session_floor,
        "window_floor": rules.window_floor,
        "per_window": rules.per_window,
    }


def _appended(row: Any, reading_memory: bool) -> Appended:
    seq, stage_seq, pane_seq, window_start, in_window, session_no = cast(
        tuple[int, int, int, datetime | None, int, int | None], tuple(row)[:6]
    )
    return Appended(
        seq=seq,
        prev=max(pane_seq, stage_seq),
        session_no=session_no,
        window_start=window_start,
        in_window=in_window,
        memory=_memory_of(row) if reading_memory else None,
    )


class MessageRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def times_since(self, participant_id: uuid.UUID, since: datetime) -> list[datetime]:
        """When each of the pane's messages after ``since`` was stored, in order (times
        only: the silences of a pane)."""
        rows = await self.db.scalars(
            select(Message.created_at)
            .where(Message.participant_id == participant_id, Message.created_at > since)
            .order_by(Message.seq)
        )
        return list(rows)

    async def by_client_id(self, participant_id: uuid.UUID, client_id: str) -> Message | None:
        return await self.db.scalar(
            select(Message).where(
                Message.participant_id == participant_id, Message.client_message_id == client_id
            )
        )

    async def page(
        self,
        participant_id: uuid.UUID,
        *,
        after: int | None,
        before: int | None,
        limit: int,
        newest_first: bool,
    ) -> list[Message]:
        statement = select(Message).where(Message.participant_id == participant_id)
        if after is not None:
            statement = statement.where(Message.seq > after)
        if before is not None:
            statement = statement.where(Message.seq < before)
        order = Message.seq.desc() if newest_first else Message.seq.asc()
        return list(await self.db.scalars(statement.order_by(order).limit(limit)))

    async def last_in_panes(self, participant_ids: Sequence[uuid.UUID]) -> list[Message]:
        """The newest message of each pane, in one statement."""
        newest = (
            select(Message.participant_id, func.max(Message.seq).label("seq"))
            .where(Message.participant_id.in_(participant_ids))
            .group_by(Message.participant_id)
            .subquery()
        )
        return list(
            await self.db.scalars(
                select(Message).join(
                    newest,
                    and_(
                        Message.participant_id == newest.c.participant_id,
                        Message.seq == newest.c.seq,
                    ),
                )
            )
        )

    async def pane_end(self, room_id: uuid.UUID, participant_id: uuid.UUID) -> int:
        """The cursor of a pane's last stored event, its newest message or the room's newest
        stage change (both panes see every stage change): two columns, one statement."""
        row = (
            await self.db.execute(
                select(Participant.pane_seq, Room.stage_seq)
                .join(Room, Room.id == Participant.room_id)
                .where(Participant.id == participant_id, Room.id == room_id)
            )
        ).one_or_none()
        if row is None:
            return 0
        pane_seq, stage_seq = cast(tuple[int, int], tuple(row))
        return max(pane_seq, stage_seq)

    async def append_pg(
        self, message: NewMessage, rules: AppendRules, *, reading_memory: bool = False
    ) -> Appended:
        """The append in one statement (``_PG_APPEND``); the caller decides nothing after.
        ``reading_memory``: it also returns the room's memory as it locked it."""
        statement = _PG_APPEND_READING_MEMORY if reading_memory else _PG_APPEND
        (row,) = await self.db.rows(statement, _append_params(message, rules))
        return _appended(row, reading_memory)

    async def append_autocommit(self, message: NewMessage, rules: AppendRules) -> Appended | None:
        """:meth:`append_pg` as the unit's only write, with the unit's deferred writes
        folded into its statement and committed with it (``Db.write_autocommit``): None when it
        stored nothing (a retry, the rate limit, a deferred write's refusal), and then
        nothing at all was written."""
        params = _append_params(message, rules)
        found = await self.db.write_autocommit(_PG_APPEND, params, stored="m")
        if found is None:
            return None
        (row,) = found
        return _appended(row, False)

    async def bump(
        self,
        room_id: uuid.UUID,
        participant_id: uuid.UUID,
        now: datetime,
        *,
        reading_memory: bool = False,
    ) -> Tail:
        """SQLite's first half of the append: the room's next event number, its newest stage
        change and the pane's tail, in one statement (``_SQLITE_BUMP``); ``reading_memory``:
        the room's memory too."""
        row = (
            await self.db.execute(
                _SQLITE_BUMP_READING_MEMORY if reading_memory else _SQLITE_BUMP,
                {"room_id": room_id, "participant_id": participant_id, "now": now},
            )
        ).one()
        found = cast(
            tuple[int, int, int | None, int | None, datetime | None, datetime | None, int | None],
            tuple(row)[:7],
        )
        seq, stage_seq, pane_seq, session_no, last_at, window_start, in_window = found
        return Tail(
            seq,
            stage_seq,
            pane_seq or 0,
            session_no,
            last_at,
            window_start,
            in_window or 0,
            _memory_of(row) if reading_memory else None,
        )

    async def insert_unless_stored(self, message: NewMessage, seq: int, session_no: int) -> bool:
        """SQLite's second half: the insert, skipped when the pane holds the client id."""
        result = await self.db.execute(
            sqlite_insert(Message)
            .values(**message.columns(seq, session_no))
            .on_conflict_do_nothing(index_elements=["participant_id", "client_message_id"])
            .returning(Message.seq)
        )
        return result.first() is not None
