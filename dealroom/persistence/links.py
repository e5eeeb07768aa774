"""Queries for perceived links: a pane's links by message, the room's recent read of a URL
(the cache), and storing new ones. Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import select

from dealroom.domain.links import LinkStatus
from dealroom.persistence.db import Db
from dealroom.persistence.models import PerceivedLink


class LinkRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def of_messages(
        self, participant_id: uuid.UUID, message_ids: Collection[uuid.UUID]
    ) -> list[PerceivedLink]:
        """The links of these messages posted in this pane (never another pane's), in message
        order as given, then position."""
        if not message_ids:
            return []
        rows = await self.db.scalars(
            select(PerceivedLink).where(
                PerceivedLink.participant_id == participant_id,
                PerceivedLink.message_id.in_(list(message_ids)),
            )
        )
        order = {mid: index for index, mid in enumerate(message_ids)}
        return sorted(rows, key=lambda r: (order.get(r.message_id, 0), r.position))

    async def recent_reads(
        self, room_id: uuid.UUID, urls: Collection[str], since: datetime
    ) -> dict[str, PerceivedLink]:
        """The newest successful read of each URL in this room since ``since`` (the cache)."""
        if not urls:
            return {}
        rows = await self.db.scalars(
            select(PerceivedLink)
            .where(
                PerceivedLink.room_id == room_id,
                PerceivedLink.url.in_(list(urls)),
                PerceivedLink.status == LinkStatus.READ.value,
                PerceivedLink.fetched_at >= since,
            )
            .order_by(PerceivedLink.fetched_at)
        )
        return {row.url: row for row in rows}  # newest last, so it wins

    async def add(self, rows: Sequence[PerceivedLink]) -> None:
        await self.db.add(*rows)

    async def by_messages(self, message_ids: Collection[uuid.UUID]) -> list[PerceivedLink]:
        """The links of these messages (each is in one pane), by message then position."""
        if not message_ids:
            return []
        rows = await self.db.scalars(
            select(PerceivedLink)
            .where(PerceivedLink.message_id.in_(list(message_ids)))
            .order_by(PerceivedLink.message_id, PerceivedLink.position)
        )
        return list(rows)

    async def of_room(self, room_id: uuid.UUID, *, limit: int) -> list[PerceivedLink]:
        """The room's links, newest read first (operators' view)."""
        rows = await self.db.scalars(
            select(PerceivedLink)
            .where(PerceivedLink.room_id == room_id)
            .order_by(PerceivedLink.fetched_at.desc(), PerceivedLink.position)
            .limit(limit)
        )
        return list(rows)
