"""Queries for partner webhooks: endpoints, the outbox's events and deliveries, and the
delivery log. Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import cast

from sqlalchemy import func, or_, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Webhook, WebhookAttempt, WebhookDelivery, WebhookEvent
from dealroom.persistence.paging import After, after

Due = tuple[WebhookDelivery, Webhook, WebhookEvent]
"""A delivery due now, with its endpoint and its event."""


class WebhookRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    # --- endpoints ------------------------------------------------------------------------

    async def of_account(self, account_id: uuid.UUID) -> list[Webhook]:
        """The account's endpoints, newest first."""
        return list(
            await self.db.scalars(
                select(Webhook)
                .where(Webhook.account_id == account_id)
                .order_by(Webhook.created_at.desc(), Webhook.id)
            )
        )

    async def active_of(self, account_ids: Sequence[uuid.UUID]) -> list[Webhook]:
        """The active endpoints of these accounts (one indexed query)."""
        return list(
            await self.db.scalars(
                select(Webhook).where(
                    Webhook.account_id.in_(account_ids), Webhook.status == "active"
                )
            )
        )

    async def by_ids(self, ids: Iterable[uuid.UUID]) -> list[Webhook]:
        return list(await self.db.scalars(select(Webhook).where(Webhook.id.in_(ids))))

    async def remove(self, row: Webhook) -> None:
        """Delete the endpoint (its deliveries and their attempts go with it)."""
        await self.db.session.delete(row)
        await self.db.flush()

    # --- the outbox -----------------------------------------------------------------------

    async def event_written(self, source: str) -> bool:
        """Whether the logical event of ``source`` was written already (W1: once)."""
        found = await self.db.scalar(select(WebhookEvent.id).where(WebhookEvent.source == source))
        return bool(found)

    async def pending_deliveries(self) -> int:
        """The outbox's backlog: deliveries not yet delivered or given up."""
        return int(
            await self.db.scalar(
                select(func.count(WebhookDelivery.id)).where(WebhookDelivery.status == "pending")
            )
            or 0
        )

    async def due(self, now: datetime, limit: int) -> list[Due]:
        """Up to ``limit`` pending deliveries due at ``now`` to active endpoints and leased to
        nobody, oldest due first. On PostgreSQL their rows are locked, skipping rows another
        worker is claiming."""
        statement = (
            select(WebhookDelivery, Webhook, WebhookEvent)
            .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
            .join(WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id)
            .where(
                WebhookDelivery.status == "pending",
                WebhookDelivery.next_attempt_at <= now,
                or_(WebhookDelivery.lease_until.is_(None), WebhookDelivery.lease_until < now),
                Webhook.status == "active",
            )
            .order_by(WebhookDelivery.next_attempt_at)
            .limit(limit)
        )
        if self.db.dialect == "postgresql":
            statement = statement.with_for_update(of=WebhookDelivery, skip_locked=True)
        return [
            cast(Due, tuple(row))  # the statement selects these three
            for row in (await self.db.execute(statement)).all()
        ]

    async def deliveries(self, ids: Sequence[uuid.UUID]) -> list[WebhookDelivery]:
        return list(
            await self.db.scalars(select(WebhookDelivery).where(WebhookDelivery.id.in_(ids)))
        )

    # --- the delivery log -----------------------------------------------------------------

    async def deliveries_page(
        self, webhook_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[tuple[WebhookDelivery, WebhookEvent]]:
        """The endpoint's deliveries with their events, newest first."""
        statement = (
            select(WebhookDelivery, WebhookEvent)
            .join(WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id)
            .where(WebhookDelivery.webhook_id == webhook_id)
            .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
            .limit(limit)
        )
        statement = after(statement, WebhookDelivery.created_at, WebhookDelivery.id, after_row)
        return [
            # The statement selects exactly these two entities.
            cast(tuple[WebhookDelivery, WebhookEvent], tuple(row))
            for row in (await self.db.execute(statement)).all()
        ]

    async def attempts(self, delivery_id: uuid.UUID) -> list[WebhookAttempt]:
        """A delivery's attempts, in order."""
        return list(
            await self.db.scalars(
                select(WebhookAttempt)
                .where(WebhookAttempt.delivery_id == delivery_id)
                .order_by(WebhookAttempt.attempt, WebhookAttempt.created_at)
            )
        )
