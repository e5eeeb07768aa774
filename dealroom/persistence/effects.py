"""Queries for the effects the login gate holds (``pending_effects``): numbered per room in
``seq`` order, held until the guest signs in, then performed by the replay. Statuses are the
gate's (``services/gate/effects.py``); callers name the ones they mean. Repositories flush,
never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, exists, func, select

from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Participant, PendingEffect


class PendingEffectRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def last_seq(self, room_id: uuid.UUID) -> int | None:
        """The room's highest ``seq`` (None before its first held effect)."""
        return await self.db.scalar(
            select(func.max(PendingEffect.seq)).where(PendingEffect.room_id == room_id)
        )

    async def count(self, room_id: uuid.UUID, status: str) -> int:
        """How many of the room's effects are in ``status``."""
        return int(
            await self.db.scalar(
                select(func.count(PendingEffect.id)).where(
                    PendingEffect.room_id == room_id, PendingEffect.status == status
                )
            )
            or 0
        )

    async def any_in(self, room_id: uuid.UUID, statuses: Sequence[str]) -> bool:
        """Whether any of the room's effects is in one of ``statuses``."""
        found = await self.db.scalar(
            select(PendingEffect.id)
            .where(PendingEffect.room_id == room_id, PendingEffect.status.in_(statuses))
            .limit(1)
        )
        return found is not None

    async def first_in(self, room_id: uuid.UUID, statuses: Sequence[str]) -> PendingEffect | None:
        """The room's lowest-``seq`` effect in one of ``statuses``."""
        return await self.db.scalar(
            select(PendingEffect)
            .where(PendingEffect.room_id == room_id, PendingEffect.status.in_(statuses))
            .order_by(PendingEffect.seq)
            .limit(1)
        )

    async def all_in(self, room_id: uuid.UUID, statuses: Sequence[str]) -> list[PendingEffect]:
        """The room's effects in one of ``statuses``, in ``seq`` order (locked rows: the
        caller holds the room's lock)."""
        rows = await self.db.scalars(
            select(PendingEffect)
            .where(PendingEffect.room_id == room_id, PendingEffect.status.in_(statuses))
            .order_by(PendingEffect.seq)
        )
        return list(rows)

    async def kinds_in(self, room_id: uuid.UUID, status: str) -> list[tuple[str, dict[str, Any]]]:
        """The kind and payload of each of the room's effects in ``status``, in ``seq`` order."""
        rows = await self.db.execute(
            select(PendingEffect.kind, PendingEffect.payload)
            .where(PendingEffect.room_id == room_id, PendingEffect.status == status)
            .order_by(PendingEffect.seq)
        )
        return [(kind, payload) for kind, payload in (tuple(r) for r in rows)]

    async def claimed_rooms_without_run(
        self, statuses: Sequence[str], agent: str, running: Sequence[str]
    ) -> list[tuple[uuid.UUID, uuid.UUID]]:
        """``(room id, visitor seat id)`` of each room whose visitor is bound to an account,
        with effects in ``statuses`` and no run of ``agent`` in ``running``."""
        visitor = Participant
        active = exists().where(
            AgentRun.room_id == PendingEffect.room_id,
            AgentRun.agent == agent,
            AgentRun.status.in_(running),
        )
        rows = (
            await self.db.execute(
                select(PendingEffect.room_id, visitor.id)
                .join(
                    visitor,
                    and_(
                        visitor.room_id == PendingEffect.room_id,
                        visitor.key == Seat.VISITOR.value,
                    ),
                )
                .where(
                    PendingEffect.status.in_(statuses),
                    visitor.account_id.is_not(None),
                    ~active,
                )
                .distinct()
            )
        ).all()
        return [(room_id, visitor_id) for room_id, visitor_id in (tuple(r) for r in rows)]
