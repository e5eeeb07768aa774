"""Queries for durable account memory: the document under the account row lock, its leaf
dates, its change history, and the rooms whose merge is due. Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update

from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AccountMemory,
    AgentRun,
    MemoryChange,
    MemoryLeafDate,
    Participant,
    Room,
)


@dataclass(frozen=True, slots=True)
class StaleParticipant:
    """A bound participant whose account memory is newer than its last seed or merge."""

    participant_id: uuid.UUID
    room_id: uuid.UUID
    key: str
    account_id: uuid.UUID
    last_merged: int
    version: int
    kind: str
    mode: str


class DurableRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def lock_account(self, account_id: uuid.UUID) -> bool:
        """The account row lock every durable write takes first (PostgreSQL row lock; SQLite
        has one writer). False when the account is gone."""
        found = await self.db.scalar(
            select(Account.id).where(Account.id == account_id).with_for_update()
        )
        return found is not None

    async def locked_pane(self, participant_id: uuid.UUID) -> Participant | None:
        """The pane whose merge mark a durable write moves (:meth:`set_merged`), its row
        locked ``FOR NO KEY UPDATE``. Take it before :meth:`lock_account`: a persona applying
        in the pane holds its row (the append) and then waits on the account (the foreign-key
        check of its memory write on a room row it already changed), so a writer holding the
        account and then waiting on the pane deadlocked with it."""
        return await self.db.scalar(
            select(Participant)
            .where(Participant.id == participant_id)
            .with_for_update(key_share=True)
        )

    async def memory(self, account_id: uuid.UUID, *, fresh: bool = False) -> AccountMemory | None:
        statement = select(AccountMemory).where(AccountMemory.account_id == account_id)
        if fresh:
            statement = statement.execution_options(populate_existing=True)
        return await self.db.scalar(statement)

    async def bump(
        self, account_id: uuid.UUID, expected: int, document: dict[str, Any], now: datetime
    ) -> bool:
        """Optimistic versioning: write only if the version is still ``expected``."""
        result = await self.db.execute(
            update(AccountMemory)
            .where(AccountMemory.account_id == account_id, AccountMemory.version == expected)
            .values(document=document, version=expected + 1, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        return int(getattr(result, "rowcount", 0) or 0) == 1

    async def leaf_dates(self, account_id: uuid.UUID) -> dict[str, date]:
        rows = await self.db.execute(
            select(MemoryLeafDate.path, MemoryLeafDate.changed_on).where(
                MemoryLeafDate.account_id == account_id
            )
        )
        return {path: day for path, day in _tuples(rows)}

    async def stamp(
        self, account_id: uuid.UUID, changed: Sequence[tuple[str, bool]], today: date
    ) -> None:
        """Leaf dates for the leaves that changed: ``(path, present after)``. A removed leaf
        loses its date; a changed or new one is dated today."""
        paths = [path for path, _present in changed]
        if not paths:
            return
        await self.db.execute(
            delete(MemoryLeafDate).where(
                MemoryLeafDate.account_id == account_id, MemoryLeafDate.path.in_(paths)
            )
        )
        present = [path for path, kept in changed if kept]
        if present:
            await self.db.add(
                *[
                    MemoryLeafDate(account_id=account_id, path=path, changed_on=today)
                    for path in present
                ]
            )

    async def paths_changed_since(self, account_id: uuid.UUID, version: int) -> list[str]:
        """The leaves the account changed after ``version`` (history rows)."""
        rows = await self.db.scalars(
            select(MemoryChange.path)
            .where(MemoryChange.account_id == account_id, MemoryChange.version > version)
            .distinct()
        )
        return sorted(rows)

    async def change(self, change_id: uuid.UUID) -> MemoryChange | None:
        return await self.db.get(MemoryChange, change_id)

    async def history(
        self, account_id: uuid.UUID, *, limit: int, before: tuple[datetime, uuid.UUID] | None
    ) -> list[MemoryChange]:
        """Newest first, keyset-paged on (created_at, id)."""
        statement = select(MemoryChange).where(MemoryChange.account_id == account_id)
        if before is not None:
            at, ident = before
            statement = statement.where(
                or_(
                    MemoryChange.created_at < at,
                    and_(MemoryChange.created_at == at, MemoryChange.id < ident),
                )
            )
        statement = statement.order_by(MemoryChange.created_at.desc(), MemoryChange.id.desc())
        return list(await self.db.scalars(statement.limit(limit)))

    async def stale_in_room(self, room_id: uuid.UUID) -> list[StaleParticipant]:
        """The room's bound participants due a merge, in one statement (run before every
        turn, so a turn with nothing due pays one indexed read)."""
        rows = await self.db.execute(
            _stale().where(Participant.room_id == room_id).order_by(Participant.key)
        )
        return [StaleParticipant(*row) for row in _tuples(rows)]

    async def stale_batch(self, limit: int) -> list[StaleParticipant]:
        """Up to ``limit`` participants due a merge anywhere, skipping any with an AccUpdate
        run already queued or running (the sweep's batch)."""
        pending = (
            select(AgentRun.id)
            .where(
                AgentRun.participant_id == Participant.id,
                AgentRun.agent == "acc_update",
                AgentRun.status.in_(("queued", "running")),
            )
            .exists()
        )
        rows = await self.db.execute(
            _stale()
            .where(~pending, Room.mode != "scripted")
            .where(or_(Room.kind == "home", Participant.key == "host"))
            .order_by(Participant.id)
            .limit(limit)
        )
        return [StaleParticipant(*row) for row in _tuples(rows)]

    async def merges_waiting(self) -> int:
        """AccUpdate runs queued and not yet started."""
        return int(
            await self.db.scalar(
                select(func.count(AgentRun.id)).where(
                    AgentRun.agent == "acc_update", AgentRun.status == "queued"
                )
            )
            or 0
        )

    async def set_merged(self, participant_id: uuid.UUID, version: int) -> None:
        await self.db.execute(
            update(Participant)
            .where(
                Participant.id == participant_id,
                Participant.last_merged_memory_version < version,
            )
            .values(last_merged_memory_version=version)
            .execution_options(synchronize_session=False)
        )


def _tuples(result: Any) -> list[tuple[Any, ...]]:
    """Plain tuples of a multi-column result (Row typing stops at one column here)."""
    return [tuple(row) for row in result]


def _stale() -> Any:
    return (
        select(
            Participant.id,
            Participant.room_id,
            Participant.key,
            Participant.account_id,
            Participant.last_merged_memory_version,
            AccountMemory.version,
            Room.kind,
            Room.mode,
        )
        .join(AccountMemory, AccountMemory.account_id == Participant.account_id)
        .join(Room, Room.id == Participant.room_id)
        .where(AccountMemory.version > Participant.last_merged_memory_version)
    )
