"""Queries for dispatches: what one pane's agent sends to another (``dispatches``), as a turn
reads them (plain values) and as the gate, the Guard and the firewall's held sends read them.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import func, select

from dealroom.persistence import run_statements as q
from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch


class DispatchRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, dispatch_id: uuid.UUID) -> Dispatch | None:
        return await self.db.get(Dispatch, dispatch_id)

    async def recent(self, room_id: uuid.UUID, limit: int) -> list[DispatchLine]:
        """The room's newest dispatches, oldest first, as plain values (read, never
        changed: a run reads them every turn, and ORM rows cost twice the CPU)."""
        rows = await self.db.rows(q.recent_dispatches(), {"room_id": room_id, "limit": limit})
        return [DispatchLine._make(row) for row in reversed(rows)]

    async def held(self, room_id: uuid.UUID) -> list[Dispatch]:
        """The room's sends the firewall still holds for the principal (status ``held``),
        oldest first."""
        rows = await self.db.scalars(
            select(Dispatch)
            .where(Dispatch.room_id == room_id, Dispatch.status == "held")
            .order_by(Dispatch.created_at, Dispatch.position)
        )
        return list(rows)

    async def of_run(self, run_id: uuid.UUID) -> list[Dispatch]:
        """The sends a run made."""
        return list(await self.db.scalars(select(Dispatch).where(Dispatch.source_run_id == run_id)))

    async def by_ids(self, ids: Collection[uuid.UUID]) -> list[Dispatch]:
        return list(await self.db.scalars(select(Dispatch).where(Dispatch.id.in_(ids))))

    async def held_from(self, room_id: uuid.UUID, participant_id: uuid.UUID) -> list[Dispatch]:
        """The pane's sends the firewall holds for its principal (status ``held``), oldest
        first."""
        return list(
            await self.db.scalars(
                select(Dispatch)
                .where(
                    Dispatch.room_id == room_id,
                    Dispatch.from_participant_id == participant_id,
                    Dispatch.status == "held",
                )
                .order_by(Dispatch.created_at, Dispatch.position)
            )
        )

    async def sent_to_others(
        self,
        room_id: uuid.UUID,
        participant_id: uuid.UUID,
        *,
        since: datetime | None,
        excluding: str,
    ) -> list[Dispatch]:
        """The pane's sends to the room's other panes (after ``since``, if given), except
        those in status ``excluding``, oldest first."""
        statement = select(Dispatch).where(
            Dispatch.room_id == room_id,
            Dispatch.from_participant_id == participant_id,
            Dispatch.to_participant_id != participant_id,
            Dispatch.status != excluding,
        )
        if since is not None:
            statement = statement.where(Dispatch.created_at > since)
        return list(await self.db.scalars(statement.order_by(Dispatch.created_at)))

    async def rulings_on_the_way(self, to_participant_id: uuid.UUID) -> list[Dispatch]:
        """Sends to the pane carrying a ruling that are not delivered yet (status
        ``pending``: neither held by the firewall nor capped), oldest first."""
        rows = await self.db.scalars(
            select(Dispatch)
            .where(Dispatch.to_participant_id == to_participant_id, Dispatch.status == "pending")
            .order_by(Dispatch.created_at, Dispatch.position)
        )
        return [row for row in rows if isinstance((row.payload or {}).get("ruling"), dict)]

    async def held_payloads(self, room_id: uuid.UUID) -> list[dict[str, Any]]:
        """What the firewall's held sends carry (F6: their figures stay out of memory)."""
        rows = await self.db.rows(q.held_payloads(), {"room_id": room_id})
        return [dict(row[0] or {}) for row in rows]

    async def recent_between(self, from_id: uuid.UUID, to_id: uuid.UUID, since: datetime) -> int:
        return int(
            await self.db.scalar(
                select(func.count(Dispatch.id)).where(
                    Dispatch.from_participant_id == from_id,
                    Dispatch.to_participant_id == to_id,
                    Dispatch.created_at >= since,
                    Dispatch.status != "capped",
                )
            )
            or 0
        )


class DispatchLine(NamedTuple):
    """A dispatch as a turn reads it (``run_statements.DISPATCH_COLUMNS``): plain values,
    not an ORM row."""

    id: uuid.UUID
    room_id: uuid.UUID
    from_participant_id: uuid.UUID
    to_participant_id: uuid.UUID
    source_run_id: uuid.UUID
    position: int
    substance: str
    payload: dict[str, Any]
    status: str
    chain_depth: int
    delivered_message_id: uuid.UUID | None
    created_at: datetime
    delivered_at: datetime | None


# Rows are read into it by position (``_make``): two columns of one type could swap silently
# if the statement's columns and these fields ever differed in order.
if DispatchLine._fields != tuple(column.key for column in q.DISPATCH_COLUMNS):
    raise RuntimeError("DispatchLine's fields and its statement's columns differ")
