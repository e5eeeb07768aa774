"""Queries for a room's seats (``participants``): a seat by its key, the visitor's seat as the
login gate reads it, a guest key's seats and their binding to an account at the claim, an
account's home pane. (A room's seats all at once, by key: ``RoomRepository.participants``.)
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from typing import NamedTuple, cast

from sqlalchemy import select, update

from dealroom.domain.seats import RoomKind, Seat
from dealroom.persistence import run_statements as q
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Participant, Room


class VisitorSeat(NamedTuple):
    """A room's visitor seat with what decides whether the login gate holds its effects."""

    id: uuid.UUID
    account_id: uuid.UUID | None
    room_kind: str
    room_mode: str


class SeatRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_key(self, room_id: uuid.UUID, key: str) -> Participant | None:
        return await self.db.scalar(
            select(Participant).where(Participant.room_id == room_id, Participant.key == key)
        )

    async def id_by_key(self, room_id: uuid.UUID, key: str) -> uuid.UUID | None:
        return await self.db.scalar(
            select(Participant.id).where(Participant.room_id == room_id, Participant.key == key)
        )

    async def account_of(self, participant_id: uuid.UUID) -> uuid.UUID | None:
        """The account bound to the seat (None for an unclaimed guest's, or no such seat)."""
        return await self.db.scalar(
            select(Participant.account_id).where(Participant.id == participant_id)
        )

    async def visitor(self, room_id: uuid.UUID) -> VisitorSeat | None:
        """The room's visitor seat with its room's kind and mode (None in a home room)."""
        row = (
            await self.db.execute(
                select(Participant.id, Participant.account_id, Room.kind, Room.mode)
                .join(Room, Room.id == Participant.room_id)
                .where(Participant.room_id == room_id, Participant.key == Seat.VISITOR.value)
            )
        ).first()
        return None if row is None else VisitorSeat(*tuple(row))

    async def people(self, room_id: uuid.UUID) -> list[tuple[Participant, Account | None]]:
        """The room's seats by key, each with the account bound to it (if any); one
        statement built once (``run_statements.people``)."""
        rows = await self.db.execute(q.people(), {"room_id": room_id})
        return [cast(tuple[Participant, Account | None], tuple(found)) for found in rows]

    async def home_pane(self, account_id: uuid.UUID) -> Participant | None:
        """The account's own pane in its home room."""
        return await self.db.scalar(
            select(Participant)
            .join(Room, Room.id == Participant.room_id)
            .where(
                Room.host_account_id == account_id,
                Room.kind == RoomKind.HOME.value,
                Participant.key == Seat.HOST.value,
            )
            .limit(1)
        )

    # --- a guest's seats and the claim -----------------------------------------------------

    async def guest_visits(self, guest_key_hash: str) -> list[Participant]:
        """The guest key's visitor seats in deal rooms, by room id: one lock order for every
        claim, so two claims never deadlock."""
        return list(
            await self.db.scalars(
                select(Participant)
                .join(Room, Room.id == Participant.room_id)
                .where(
                    Participant.guest_key_hash == guest_key_hash,
                    Participant.key == Seat.VISITOR.value,
                    Room.kind == RoomKind.DEAL.value,
                )
                .order_by(Participant.room_id)
            )
        )

    async def bind(self, participant_id: uuid.UUID, account_id: uuid.UUID) -> bool:
        """Bind the seat to ``account_id`` if it is bound to nobody yet; True when this call
        bound it (the write is conditional, so two racing claims bind once)."""
        result = await self.db.execute(
            update(Participant)
            .where(Participant.id == participant_id, Participant.account_id.is_(None))
            .values(account_id=account_id)
        )
        return int(getattr(result, "rowcount", 0) or 0) == 1
