"""Every query lives here. Repositories flush, never commit. (A pane's messages are in
``persistence.messages``; ``MessageRepository`` is re-exported for its callers.)"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    case,
    delete,
    func,
    inspect,
    or_,
    select,
    update,
)
from sqlalchemy.orm import aliased, make_transient_to_detached

from dealroom.persistence.db import Db
from dealroom.persistence.guest_posts import charged_up_to_cap
from dealroom.persistence.messages import MessageRepository
from dealroom.persistence.models import (
    Account,
    AccountManager,
    AccountMemory,
    AuthSession,
    Credential,
    Participant,
    PendingEffect,
    Room,
)

__all__ = [
    "AccountRepository",
    "MessageRepository",
    "RoomRepository",
    "SessionRepository",
]


class AccountRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, account_id: uuid.UUID) -> Account | None:
        return await self.db.get(Account, account_id)

    async def by_ids(self, ids: Sequence[uuid.UUID]) -> list[Account]:
        return list(await self.db.scalars(select(Account).where(Account.id.in_(ids))))

    async def by_handle(self, handle: str, *, lock: bool = False) -> Account | None:
        statement = select(Account).where(Account.handle == handle)
        if lock:
            statement = statement.with_for_update()
        return await self.db.scalar(statement)

    async def credential_by_email(self, email: str) -> Credential | None:
        return await self.db.scalar(select(Credential).where(Credential.email == email))

    async def credential_for(self, account_id: uuid.UUID) -> Credential | None:
        return await self.db.get(Credential, account_id)

    async def handle_or_email_taken(self, handle: str, email: str) -> str | None:
        if await self.db.scalar(select(Account.id).where(Account.handle == handle)):
            return "handle"
        if await self.db.scalar(select(Credential.account_id).where(Credential.email == email)):
            return "email"
        return None

    async def manages(self, manager_id: uuid.UUID, managed_id: uuid.UUID) -> bool:
        found = await self.db.scalar(
            select(AccountManager.manager_id).where(
                AccountManager.manager_id == manager_id, AccountManager.managed_id == managed_id
            )
        )
        return found is not None

    async def managed_by(self, manager_id: uuid.UUID) -> list[Account]:
        return list(
            await self.db.scalars(
                select(Account)
                .join(AccountManager, AccountManager.managed_id == Account.id)
                .where(AccountManager.manager_id == manager_id)
                .order_by(Account.handle)
            )
        )

    async def any_exist(self) -> bool:
        """Whether any account exists (a fresh database has none)."""
        return await self.db.scalar(select(Account.id).limit(1)) is not None

    async def revoke_manager(self, manager_id: uuid.UUID, managed_id: uuid.UUID) -> None:
        """``manager_id`` may no longer act as ``managed_id`` (a no-op if it could not)."""
        await self.db.execute(
            delete(AccountManager).where(
                AccountManager.manager_id == manager_id, AccountManager.managed_id == managed_id
            )
        )

    async def memories(self, ids: Sequence[uuid.UUID]) -> list[AccountMemory]:
        return list(
            await self.db.scalars(select(AccountMemory).where(AccountMemory.account_id.in_(ids)))
        )


class SessionRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def account_for_live_token(self, token_hash: str, now: datetime) -> Account | None:
        """The account of a live (unexpired, unrevoked) session, in one statement built once
        and read without beginning a transaction, loading no entity into the session, so a
        signed-in post can still be autocommitted (``Db.write_autocommit``) as a guest's is. The
        account comes back detached: read it, never write through it."""
        rows = await self.db.rows(
            _LIVE_SESSION, {"token_hash": token_hash, "now": now}, begin=False
        )
        if not rows:
            return None
        row = rows[0]
        account = Account(**{prop.key: getattr(row, prop.key) for prop in _ACCOUNT_COLUMNS})
        make_transient_to_detached(account)
        return account

    async def revoke(self, token_hash: str, now: datetime) -> None:
        await self.db.execute(
            update(AuthSession)
            .where(AuthSession.token_hash == token_hash, AuthSession.revoked_at.is_(None))
            .values(revoked_at=now)
        )


_ACCOUNT_COLUMNS = inspect(Account).column_attrs
_LIVE_SESSION = (
    select(*(prop.columns[0].label(prop.key) for prop in _ACCOUNT_COLUMNS))
    .join_from(Account, AuthSession, AuthSession.account_id == Account.id)
    .where(
        AuthSession.token_hash == bindparam("token_hash", type_=AuthSession.token_hash.type),
        AuthSession.expires_at > bindparam("now", type_=AuthSession.expires_at.type),
        AuthSession.revoked_at.is_(None),
    )
)
"""A bearer token's account, built once (the raw lane keeps its compiled form)."""

_FOR_WRITER = (
    select(
        Room.id.label("room_id"),
        Room.mode,
        Participant.id,
        Participant.key,
        Participant.account_id,
        Participant.guest_key_hash,
    )
    .outerjoin(Participant, Participant.room_id == Room.id)
    .where(Room.id == bindparam("room_id", type_=Room.id.type))
    .order_by(Participant.key)
)
# The same with, on each unclaimed guest's seat, the posts charged to its key up to the cap
# (the guest message cap), so a guest's post needs no statement of its own to count them.
# Binds ``since`` and ``cap`` besides ``room_id``.
_GUEST = and_(Participant.account_id.is_(None), Participant.guest_key_hash.is_not(None))
_FOR_GUEST_WRITER = _FOR_WRITER.add_columns(
    case((_GUEST, charged_up_to_cap()), else_=None).label("guest_posts")
)


@dataclass(frozen=True, slots=True)
class GuestCount:
    """Count each unclaimed guest seat's charged posts with the room: up to ``cap``, its
    address's other keys from ``since``."""

    cap: int
    since: datetime


class WriterRoom(NamedTuple):
    """The room as a post reads it."""

    id: uuid.UUID
    mode: str


class WriterSeat(NamedTuple):
    """A participant as a post reads it (a ``pane_read.Occupant``)."""

    id: uuid.UUID
    room_id: uuid.UUID
    key: str
    account_id: uuid.UUID | None
    guest_key_hash: str | None


@dataclass(frozen=True, slots=True)
class WriterRead:
    room: WriterRoom
    participants: list[WriterSeat]
    guest_posts: dict[uuid.UUID, int]
    """By participant id, for each unclaimed guest seat, when counted (``GuestCount``)."""


class RoomRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, room_id: uuid.UUID, *, fresh: bool = False) -> Room | None:
        """``fresh`` re-reads the row over whatever this session holds: call it after taking
        the room's lock, so the decision is made on the committed state."""
        if not fresh:
            return await self.db.get(Room, room_id)
        return await self.db.scalar(
            select(Room).where(Room.id == room_id).execution_options(populate_existing=True)
        )

    async def locked(self, room_id: uuid.UUID) -> Room | None:
        """The room with its row locked (``FOR UPDATE``) until the transaction ends."""
        return await self.db.scalar(select(Room).where(Room.id == room_id).with_for_update())

    async def mode(self, room_id: uuid.UUID) -> str | None:
        return await self.db.scalar(select(Room.mode).where(Room.id == room_id))

    async def by_ids(self, ids: Sequence[uuid.UUID]) -> list[Room]:
        return list(await self.db.scalars(select(Room).where(Room.id.in_(ids))))

    async def home_room(self, account_id: uuid.UUID) -> Room | None:
        return await self.db.scalar(
            select(Room).where(Room.host_account_id == account_id, Room.kind == "home")
        )

    async def for_writer(
        self, room_id: uuid.UUID, *, count: GuestCount | None = None
    ) -> WriterRead | None:
        """The room and its participants (by key) in one statement, as plain rows of what a
        post reads (``WriterRoom``, ``WriterSeat``): never the room's memory, which a writer
        of a pane does not read (decoding it on every post would be CPU spent for nothing).
        With ``count``, each unclaimed guest seat's charged posts come in the same statement. On
        PostgreSQL the raw lane runs it, which is why it returns plain rows: only SQLAlchemy's
        own execution path builds ORM entities."""
        params: dict[str, object] = {"room_id": room_id}
        if count is not None:
            params.update(cap=count.cap, since=count.since)
        # No BEGIN when the unit has begun nothing: the post may then be autocommitted.
        statement = _FOR_WRITER if count is None else _FOR_GUEST_WRITER
        rows = await self.db.rows(statement, params, begin=False)
        if not rows:
            return None
        room = WriterRoom(rows[0].room_id, rows[0].mode)
        seated = [row for row in rows if row.id is not None]
        participants = [
            WriterSeat(row.id, room.id, row.key, row.account_id, row.guest_key_hash)
            for row in seated
        ]
        charged = {
            row.id: int(row.guest_posts)
            for row in seated
            if count is not None and row.guest_posts is not None
        }
        return WriterRead(room, participants, charged)

    async def participants(self, room_id: uuid.UUID) -> list[Participant]:
        return list(
            await self.db.scalars(
                select(Participant).where(Participant.room_id == room_id).order_by(Participant.key)
            )
        )

    async def participants_of(self, room_ids: Sequence[uuid.UUID]) -> list[Participant]:
        return list(
            await self.db.scalars(
                select(Participant)
                .where(Participant.room_id.in_(room_ids))
                .order_by(Participant.room_id, Participant.key)
            )
        )

    async def newest_visit(
        self,
        host_id: uuid.UUID,
        *,
        account_id: uuid.UUID | None,
        guest_key_hash: str | None,
        service_id: uuid.UUID | None = None,
    ) -> tuple[Room, Participant] | None:
        """The visitor's newest deal room with this host, with its visitor seat (about
        ``service_id`` when one is given)."""
        visitor = aliased(Participant)
        bound = (
            visitor.account_id == account_id
            if account_id is not None
            else and_(visitor.guest_key_hash == guest_key_hash, visitor.account_id.is_(None))
        )
        statement = (
            select(Room, visitor)
            .join(visitor, and_(visitor.room_id == Room.id, visitor.key == "visitor"))
            .where(Room.host_account_id == host_id, Room.kind == "deal", bound)
        )
        if service_id is not None:
            statement = statement.where(Room.service_id == service_id)
        result = await self.db.execute(
            statement.order_by(Room.created_at.desc(), Room.id.desc()).limit(1)
        )
        row = result.first()
        if row is None:
            return None
        room, participant = tuple(row)
        return room, participant

    def _reader_filter(
        self, account_id: uuid.UUID | None, guest_key_hash: str | None
    ) -> ColumnElement[bool]:
        seat_match: list[ColumnElement[bool]] = []
        if account_id is not None:
            seat_match.append(Participant.account_id == account_id)
        if guest_key_hash is not None:  # R4, R7: the key's seats no account has claimed
            seat_match.append(
                and_(Participant.guest_key_hash == guest_key_hash, Participant.account_id.is_(None))
            )
        held = select(Participant.room_id).where(or_(*seat_match))
        conditions: list[ColumnElement[bool]] = [Room.id.in_(held)]
        if account_id is not None:
            conditions.append(Room.host_account_id == account_id)
        return or_(*conditions)

    async def page_for_reader(
        self,
        *,
        account_id: uuid.UUID | None,
        guest_key_hash: str | None,
        limit: int,
        after: tuple[datetime, uuid.UUID] | None,
    ) -> list[Room]:
        """Rooms the reader holds a seat in, most recently active first (keyset paging)."""
        statement = select(Room).where(self._reader_filter(account_id, guest_key_hash))
        if after is not None:
            stamp, room_id = after
            statement = statement.where(
                or_(
                    Room.last_activity_at < stamp,
                    and_(Room.last_activity_at == stamp, Room.id < room_id),
                )
            )
        statement = statement.order_by(Room.last_activity_at.desc(), Room.id.desc()).limit(limit)
        return list(await self.db.scalars(statement))

    async def count_for_reader(
        self, *, account_id: uuid.UUID | None, guest_key_hash: str | None
    ) -> int:
        statement = select(func.count(Room.id)).where(
            self._reader_filter(account_id, guest_key_hash)
        )
        return int(await self.db.scalar(statement) or 0)

    async def lock(self, room_id: uuid.UUID) -> None:
        """Take the room's row lock without handing out an event number (a no-op write:
        PostgreSQL locks the row, SQLite takes its one write lock). Offer changes take it
        before reading the offer, so two clicks decide one after the other."""
        await self.db.execute(
            update(Room).where(Room.id == room_id).values(event_seq=Room.event_seq)
        )

    async def next_event_seq(self, room_id: uuid.UUID, now: datetime) -> int:
        """Take the room's row lock and hand out its next event number.

        The UPDATE holds the row lock until commit (PostgreSQL; SQLite has one writer), so two
        writers to one room commit in cursor order and a resuming reader never skips a row."""
        result = await self.db.execute(
            update(Room)
            .where(Room.id == room_id)
            .values(event_seq=Room.event_seq + 1, last_activity_at=now)
            .returning(Room.event_seq)
        )
        return int(result.scalar_one())

    async def unclaimed_rooms_with_held_effects(
        self, room_ids: Sequence[uuid.UUID]
    ) -> set[uuid.UUID]:
        """Rooms whose visitor is an unclaimed guest and that hold effects waiting on sign-in
        (seed 000 "The login gate lives in the mechanism"): exactly what makes loginRequired."""
        rows = await self.db.scalars(
            select(PendingEffect.room_id)
            .join(
                Participant,
                and_(Participant.room_id == PendingEffect.room_id, Participant.key == "visitor"),
            )
            .where(
                PendingEffect.room_id.in_(room_ids),
                PendingEffect.status == "held",
                Participant.account_id.is_(None),
            )
            .distinct()
        )
        return set(rows)

    async def held_effects(self, room_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
        """How many effects each room holds for its guest's sign-in."""
        rows = await self.db.execute(
            select(PendingEffect.room_id, func.count(PendingEffect.id))
            .where(PendingEffect.room_id.in_(room_ids), PendingEffect.status == "held")
            .group_by(PendingEffect.room_id)
        )
        return {room_id: int(count) for room_id, count in (tuple(r) for r in rows)}
