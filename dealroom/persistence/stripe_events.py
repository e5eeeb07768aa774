"""Queries for the payment provider's edge: Stripe events recorded once, payments found by the
provider's reference, the payments a sweep must re-read or release, and the payout ledger.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dealroom.persistence.db import Db
from dealroom.persistence.models import HostPayout, Offer, Payment, StripeEvent


class StripeEventRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def record(
        self,
        event_id: str,
        event_type: str,
        payment_ref: str | None,
        created_at: datetime,
        now: datetime,
    ) -> bool:
        """Record the event as received; False when its id is already recorded (a redelivery:
        the primary key decides, so two processes receiving it at once record it once)."""
        values: dict[str, Any] = {
            "id": event_id,
            "type": event_type,
            "payment_ref": payment_ref,
            "outcome": "received",
            "created_at": created_at,
            "received_at": now,
        }
        insert = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        result = await self.db.execute(
            insert(StripeEvent)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(StripeEvent.id)
        )
        return result.first() is not None

    async def event(self, event_id: str) -> StripeEvent | None:
        return await self.db.get(StripeEvent, event_id)

    async def events(self, limit: int = 100) -> list[StripeEvent]:
        """The newest recorded events first."""
        return list(
            await self.db.scalars(
                select(StripeEvent).order_by(StripeEvent.received_at.desc()).limit(limit)
            )
        )

    async def payment_by_ref(
        self, provider: str, reference: str, *, fresh: bool = False
    ) -> Payment | None:
        """``fresh``: re-read the row even if this unit holds it (after taking the room's
        lock, to decide on committed state)."""
        statement = select(Payment).where(
            Payment.provider == provider, Payment.provider_ref == reference
        )
        if fresh:
            statement = statement.execution_options(populate_existing=True)
        return await self.db.scalar(statement)

    async def overdue_pending(self, provider: str, before: datetime, limit: int) -> list[Payment]:
        """Payments still pending at ``provider`` since before ``before``: their webhook is
        late or lost, so the reconciliation sweep asks the provider."""
        return list(
            await self.db.scalars(
                select(Payment)
                .where(
                    Payment.provider == provider,
                    Payment.status == "pending",
                    Payment.updated_at < before,
                )
                .order_by(Payment.updated_at)
                .limit(limit)
            )
        )

    async def held(self, limit: int) -> list[tuple[Payment, Offer]]:
        """Held payments of offers still at PAYMENT_HELD, oldest hold first (the release
        sweep reads their delivery dates)."""
        rows = await self.db.execute(
            select(Payment, Offer)
            .join(Offer, Offer.id == Payment.offer_id)
            .where(Payment.status == "captured", Offer.status == "PAYMENT_HELD")
            .order_by(Payment.held_at)
            .limit(limit)
        )
        return [cast(tuple[Payment, Offer], tuple(row)) for row in rows.all()]

    async def held_payment(self, offer_id: uuid.UUID) -> Payment | None:
        """The offer's payment whose funds are held or were released (at most one)."""
        return await self.db.scalar(
            select(Payment)
            .where(
                Payment.offer_id == offer_id,
                Payment.status.in_(("captured", "released", "disputed")),
            )
            .order_by(Payment.created_at.desc())
            .limit(1)
        )

    async def payments_by_status(self, statuses: tuple[str, ...], limit: int) -> list[Payment]:
        return list(
            await self.db.scalars(
                select(Payment)
                .where(Payment.status.in_(statuses))
                .order_by(Payment.updated_at.desc())
                .limit(limit)
            )
        )

    async def payout(self, payment_id: uuid.UUID) -> HostPayout | None:
        return await self.db.get(HostPayout, payment_id)

    async def payouts(self, host_account_id: uuid.UUID | None, limit: int) -> list[HostPayout]:
        """The payout ledger, newest first; one host's rows when ``host_account_id`` is set."""
        statement = select(HostPayout).order_by(HostPayout.created_at.desc()).limit(limit)
        if host_account_id is not None:
            statement = statement.where(HostPayout.host_account_id == host_account_id)
        return list(await self.db.scalars(statement))
