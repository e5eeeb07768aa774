"""Queries for the services an account offers and the service a room is about.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update

from dealroom.domain.seats import Seat
from dealroom.domain.service_parts import service_key
from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant, Room, Service


class ServiceRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def of_account(self, account_id: uuid.UUID) -> list[Service]:
        """The account's services, oldest first (the order the host listed them in)."""
        return list(
            await self.db.scalars(
                select(Service)
                .where(Service.account_id == account_id)
                .order_by(Service.created_at, Service.id)
            )
        )

    async def keys_of(self, account_id: uuid.UUID) -> frozenset[str]:
        """The keys (S4) of every service the account offers (S5 reads them)."""
        return frozenset(service_key(s.name) for s in await self.of_account(account_id))

    async def scope(
        self, host_id: uuid.UUID, service_id: uuid.UUID | None
    ) -> tuple[str | None, frozenset[str]]:
        """A room's service key (None: about no service) and, for a room about one, the keys of
        every service its host offers (S1, S5): one read of the host's list."""
        if service_id is None:
            return None, frozenset()
        offered = await self.of_account(host_id)
        key = next((service_key(s.name) for s in offered if s.id == service_id), None)
        return key, frozenset(service_key(s.name) for s in offered) if key else frozenset()

    async def by_key(self, account_id: uuid.UUID, key: str) -> Service | None:
        """The account's service whose key (S4) is ``key``."""
        for service in await self.of_account(account_id):
            if service_key(service.name) == key:
                return service
        return None

    async def by_ids(self, ids: Sequence[uuid.UUID]) -> list[Service]:
        if not ids:
            return []
        return list(await self.db.scalars(select(Service).where(Service.id.in_(ids))))

    async def key_of(self, service_id: uuid.UUID | None) -> str | None:
        """The key (S4) of a room's service; None for a room about no service."""
        if service_id is None:
            return None
        name = await self.db.scalar(select(Service.name).where(Service.id == service_id))
        return service_key(name) if name is not None else None

    async def rooms_using(self, ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        """Which of the services ``ids`` some room is about."""
        if not ids:
            return set()
        rows = await self.db.scalars(
            select(Room.service_id).where(Room.service_id.in_(ids)).distinct()
        )
        return {row for row in rows if row is not None}

    async def choose(self, room_id: uuid.UUID, service_id: uuid.UUID) -> bool:
        """Make a room about no service about ``service_id``; False when it is about one."""
        result = await self.db.execute(
            update(Room)
            .where(Room.id == room_id, Room.service_id.is_(None))
            .values(service_id=service_id)
            .execution_options(synchronize_session=False)
        )
        return int(getattr(result, "rowcount", 0) or 0) == 1

    async def merge_host_afresh(self, room_id: uuid.UUID) -> None:
        """The room's host seat is due a merge of its whole view at its next turn."""
        await self.db.execute(
            update(Participant)
            .where(Participant.room_id == room_id, Participant.key == Seat.HOST.value)
            .values(last_merged_memory_version=0)
            .execution_options(synchronize_session=False)
        )

    async def remove(self, ids: Sequence[uuid.UUID]) -> None:
        if ids:
            await self.db.execute(delete(Service).where(Service.id.in_(ids)))

    async def add(
        self, account_id: uuid.UUID, names: Sequence[str], now: datetime
    ) -> list[Service]:
        rows = [
            # a microsecond apart, so the list reads back in the order it was given
            Service(
                id=uuid.uuid4(),
                account_id=account_id,
                name=name,
                created_at=now + timedelta(microseconds=n),
            )
            for n, name in enumerate(names)
        ]
        await self.db.add(*rows)
        return rows
