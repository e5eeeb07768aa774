"""Queries for written offers, their stage events, agreements, payments and goal events.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import cast

from sqlalchemy import func, select, update

from dealroom.persistence.db import Db
from dealroom.persistence.messages import MessageRepository
from dealroom.persistence.models import (
    Agreement,
    GoalEvent,
    Message,
    Offer,
    OfferEvent,
    Participant,
    Payment,
)


class OfferRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, offer_id: uuid.UUID, *, fresh: bool = False) -> Offer | None:
        """``fresh`` re-reads the row over whatever this session holds: call it after taking
        the room's lock, so the decision is made on the committed state."""
        statement = select(Offer).where(Offer.id == offer_id)
        if fresh:
            statement = statement.execution_options(populate_existing=True)
        return await self.db.scalar(statement)

    async def by_source_run(self, run_id: uuid.UUID) -> Offer | None:
        return await self.db.scalar(select(Offer).where(Offer.source_run_id == run_id))

    async def current(self, room_id: uuid.UUID, *, fresh: bool = False) -> Offer | None:
        """The room's current written offer: the newest one (closed ones included, so the
        stage reads DECLINED after a rejection until a new offer is drawn)."""
        statement = (
            select(Offer)
            .where(Offer.room_id == room_id)
            .order_by(Offer.created_at.desc(), Offer.id.desc())
            .limit(1)
        )
        if fresh:
            statement = statement.execution_options(populate_existing=True)
        return await self.db.scalar(statement)

    async def current_for_rooms(self, room_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Offer]:
        """The current offer of each room, in one statement (for the rooms page)."""
        if not room_ids:
            return {}
        newest = (
            select(Offer.room_id, func.max(Offer.created_at).label("at"))
            .where(Offer.room_id.in_(room_ids))
            .group_by(Offer.room_id)
            .subquery()
        )
        rows = await self.db.scalars(
            select(Offer).join(
                newest, (Offer.room_id == newest.c.room_id) & (Offer.created_at == newest.c.at)
            )
        )
        return {row.room_id: row for row in rows}

    async def page(
        self, room_id: uuid.UUID, *, before: tuple[datetime, uuid.UUID] | None, limit: int
    ) -> list[Offer]:
        """A room's offers, newest first."""
        statement = select(Offer).where(Offer.room_id == room_id)
        if before is not None:
            at, offer_id = before
            statement = statement.where(
                (Offer.created_at < at) | ((Offer.created_at == at) & (Offer.id < offer_id))
            )
        return list(
            await self.db.scalars(
                statement.order_by(Offer.created_at.desc(), Offer.id.desc()).limit(limit)
            )
        )

    # --- stage events ---------------------------------------------------------------------

    async def last_offer_event_seq(self, offer_id: uuid.UUID) -> int:
        seq = await self.db.scalar(
            select(func.max(OfferEvent.seq)).where(OfferEvent.offer_id == offer_id)
        )
        return int(seq or 0)

    async def room_events_after(
        self, room_id: uuid.UUID, after: int, limit: int
    ) -> list[OfferEvent]:
        return list(
            await self.db.scalars(
                select(OfferEvent)
                .where(OfferEvent.room_id == room_id, OfferEvent.seq > after)
                .order_by(OfferEvent.seq)
                .limit(limit)
            )
        )

    async def offer_events_after(
        self, offer_id: uuid.UUID, after: int, limit: int
    ) -> list[OfferEvent]:
        return list(
            await self.db.scalars(
                select(OfferEvent)
                .where(OfferEvent.offer_id == offer_id, OfferEvent.seq > after)
                .order_by(OfferEvent.seq)
                .limit(limit)
            )
        )

    async def latest_stage(
        self, offer_id: uuid.UUID, *, before_seq: int | None = None
    ) -> str | None:
        """The offer's newest recorded stage (of the changes before ``before_seq``, if given);
        None when it has none."""
        statement = select(OfferEvent.stage).where(OfferEvent.offer_id == offer_id)
        if before_seq is not None:
            statement = statement.where(OfferEvent.seq < before_seq)
        return await self.db.scalar(statement.order_by(OfferEvent.seq.desc()).limit(1))

    async def ever_ruled(self, room_id: uuid.UUID, goal_key: str, status: str) -> bool:
        """Whether the room's ``goal_key`` was ever ruled ``status`` (its ``goal_events``)."""
        found = await self.db.scalar(
            select(GoalEvent.id)
            .where(
                GoalEvent.room_id == room_id,
                GoalEvent.goal_key == goal_key,
                GoalEvent.to_status == status,
            )
            .limit(1)
        )
        return found is not None

    async def in_statuses(self, room_id: uuid.UUID, statuses: Sequence[str]) -> list[Offer]:
        """The room's offers in one of ``statuses``, oldest first."""
        return list(
            await self.db.scalars(
                select(Offer)
                .where(Offer.room_id == room_id, Offer.status.in_(statuses))
                .order_by(Offer.created_at)
            )
        )

    async def set_missing_buyer(
        self, room_id: uuid.UUID, buyer_id: uuid.UUID, now: datetime
    ) -> None:
        """Make ``buyer_id`` the buyer of the room's offers that have none."""
        await self.db.execute(
            update(Offer)
            .where(Offer.room_id == room_id, Offer.buyer_account_id.is_(None))
            .values(buyer_account_id=buyer_id, updated_at=now)
        )

    # --- agreements and payments ----------------------------------------------------------

    async def agreement(self, offer_id: uuid.UUID, fingerprint: str) -> Agreement | None:
        return await self.db.scalar(
            select(Agreement).where(
                Agreement.offer_id == offer_id, Agreement.fingerprint == fingerprint
            )
        )

    async def latest_agreement(self, offer_id: uuid.UUID) -> Agreement | None:
        return await self.db.scalar(
            select(Agreement)
            .where(Agreement.offer_id == offer_id)
            .order_by(Agreement.created_at.desc())
            .limit(1)
        )

    async def payment(self, offer_id: uuid.UUID, idempotency_key: str) -> Payment | None:
        return await self.db.scalar(
            select(Payment).where(
                Payment.offer_id == offer_id, Payment.idempotency_key == idempotency_key
            )
        )

    async def payments(self, offer_id: uuid.UUID) -> list[Payment]:
        return list(
            await self.db.scalars(
                select(Payment).where(Payment.offer_id == offer_id).order_by(Payment.created_at)
            )
        )

    async def pending_payments(self, limit: int) -> list[Payment]:
        return list(
            await self.db.scalars(
                select(Payment)
                .where(Payment.status == "pending")
                .order_by(Payment.created_at)
                .limit(limit)
            )
        )


async def pane_end(db: Db, room_id: uuid.UUID, participant_id: uuid.UUID) -> int:
    """The cursor of a pane's last stored event: its newest message or the room's newest
    stage change, whichever is later (both panes see every stage change). Kept on the
    participant and room rows (``persistence.messages``)."""
    return await MessageRepository(db).pane_end(room_id, participant_id)


async def stage_prevs(
    db: Db, room_id: uuid.UUID, offer_id: uuid.UUID
) -> tuple[list[tuple[str, int]], int]:
    """In one statement, before a stage change is stored: each pane's key and the cursor of
    its last event (``pane_end``), and the cursor of the offer's last stage change."""
    last_message = (
        select(func.max(Message.seq))
        .where(Message.participant_id == Participant.id)
        .correlate(Participant)
        .scalar_subquery()
    )
    last_room_stage = (
        select(func.max(OfferEvent.seq)).where(OfferEvent.room_id == room_id).scalar_subquery()
    )
    last_offer_stage = (
        select(func.max(OfferEvent.seq)).where(OfferEvent.offer_id == offer_id).scalar_subquery()
    )
    result = await db.execute(
        select(Participant.key, last_message, last_room_stage, last_offer_stage)
        .where(Participant.room_id == room_id)
        .order_by(Participant.key)
    )
    panes: list[tuple[str, int]] = []
    offer_prev = 0
    for row in result.all():
        key, message, room_stage, offer_stage = cast(
            tuple[str, int | None, int | None, int | None], tuple(row)
        )
        panes.append((key, max(message or 0, room_stage or 0)))
        offer_prev = offer_stage or 0
    return panes, offer_prev
