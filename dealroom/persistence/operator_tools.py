"""What operators read of a room beyond its runs (its dispatch record), the record of their
reads, and room memory's change history. Pages are newest first and hold up to ``limit`` rows
(a caller asks for one more than it shows). Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch, OperatorRead, RoomMemoryChange
from dealroom.persistence.paging import After, after


class Leaf(Protocol):
    """One changed leaf (``domain.durable.LeafChange``)."""

    @property
    def path(self) -> str: ...
    @property
    def old(self) -> Any: ...
    @property
    def new(self) -> Any: ...


class OperatorToolsRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def record_read(
        self, operator_id: uuid.UUID, room_id: uuid.UUID, what: Sequence[str], now: datetime
    ) -> None:
        await self.db.add(
            OperatorRead(
                id=uuid.uuid4(),
                operator_account_id=operator_id,
                room_id=room_id,
                what=list(what),
                created_at=now,
            )
        )

    async def reads_page(
        self, room_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[OperatorRead]:
        statement = (
            select(OperatorRead)
            .where(OperatorRead.room_id == room_id)
            .order_by(OperatorRead.created_at.desc(), OperatorRead.id.desc())
            .limit(limit)
        )
        statement = after(statement, OperatorRead.created_at, OperatorRead.id, after_row)
        return list(await self.db.scalars(statement))

    async def dispatches_page(
        self, room_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[Dispatch]:
        """The room's dispatch record, newest first."""
        statement = (
            select(Dispatch)
            .where(Dispatch.room_id == room_id)
            .order_by(Dispatch.created_at.desc(), Dispatch.id.desc())
            .limit(limit)
        )
        statement = after(statement, Dispatch.created_at, Dispatch.id, after_row)
        return list(await self.db.scalars(statement))

    async def memory_history(
        self,
        room_id: uuid.UUID,
        *,
        limit: int,
        after_row: After | None,
        under: str | None = None,
    ) -> list[RoomMemoryChange]:
        """The room memory's changed leaves, newest first (only those under ``under``, a
        top-level branch, when given)."""
        statement = (
            select(RoomMemoryChange)
            .where(RoomMemoryChange.room_id == room_id)
            .order_by(RoomMemoryChange.created_at.desc(), RoomMemoryChange.id.desc())
            .limit(limit)
        )
        if under is not None:
            branch = RoomMemoryChange.path.startswith(f"{under}.", autoescape=True)
            statement = statement.where(branch)
        statement = after(statement, RoomMemoryChange.created_at, RoomMemoryChange.id, after_row)
        return list(await self.db.scalars(statement))

    async def memory_change(self, change_id: uuid.UUID) -> RoomMemoryChange | None:
        return await self.db.get(RoomMemoryChange, change_id)

    async def record_changes(
        self,
        room_id: uuid.UUID,
        version: int,
        leaves: Sequence[Leaf],
        *,
        agent: str,
        run_id: uuid.UUID | None,
        actor_account_id: uuid.UUID | None = None,
        reason: str | None = None,
        reverts_id: uuid.UUID | None = None,
        now: datetime,
    ) -> list[RoomMemoryChange]:
        """One history row per changed leaf of a room memory write (memory_edits ME3)."""
        rows = change_rows(
            room_id,
            version,
            leaves,
            agent=agent,
            run_id=run_id,
            actor_account_id=actor_account_id,
            reason=reason,
            reverts_id=reverts_id,
            now=now,
        )
        if rows:
            await self.db.add(*rows)
        return rows


def change_rows(
    room_id: uuid.UUID,
    version: int,
    leaves: Sequence[Leaf],
    *,
    agent: str,
    run_id: uuid.UUID | None,
    actor_account_id: uuid.UUID | None = None,
    reason: str | None = None,
    reverts_id: uuid.UUID | None = None,
    now: datetime,
) -> list[RoomMemoryChange]:
    """The history rows of one write, for a caller that inserts them with its other rows."""
    return [
        RoomMemoryChange(
            id=uuid.uuid4(),
            room_id=room_id,
            version=version,
            path=leaf.path[:600],
            old_value=leaf.old,
            new_value=leaf.new,
            run_id=run_id,
            agent=agent,
            actor_account_id=actor_account_id,
            reason=reason,
            reverts_id=reverts_id,
            created_at=now,
        )
        for leaf in leaves
    ]
