"""The workers' payment sweeps for a provider that reports by webhook (Stripe):

- reconciliation: a payment still pending ``overdue`` after it was made (its webhook is late or
  was lost) is re-read from the provider, and what the provider says is applied exactly as the
  webhook would have applied it (PL1, PL2);
- auto-release: a hold whose release time has come (``auto_release_days`` after the offer's
  last delivery date, PL3) is released as if the brand had confirmed delivery.

The provider is asked with no session open; each answer is applied in a unit of its own under
the room's lock, so a webhook arriving meanwhile and the sweep never both move a stage.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.domain import payment_life
from dealroom.domain.errors import DomainError
from dealroom.persistence.models import Offer
from dealroom.persistence.stripe_events import StripeEventRepository
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.offers.payment_life import apply_signal, confirm_delivery, signal_of
from dealroom.services.offers.provider import PaymentProvider
from dealroom.services.offers.reads import locked_offer
from dealroom.services.unit_of_work import UnitOfWork, reading

log = structlog.get_logger(__name__)


async def reconcile(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    *,
    overdue: timedelta,
    limit: int = 50,
    band_percent: Decimal | None = None,
) -> int:
    """Re-read up to ``limit`` overdue pending payments; returns how many offers moved."""
    async with reading(sessionmaker) as db:
        rows = await StripeEventRepository(db).overdue_pending(
            provider.name, clock.now() - overdue, limit
        )
        pending = [(p.offer_id, p.provider_ref) for p in rows if p.provider_ref]
    moved = 0
    for offer_id, reference in pending:
        assert reference is not None
        try:
            charge = await provider.status(reference)
        except DomainError:
            log.warning("reconcile_unreachable", reference=reference)
            continue
        signal = signal_of(charge)
        if signal is None:
            continue
        async with UnitOfWork(sessionmaker, broker) as unit:
            db = unit.db
            found = await db.get(Offer, offer_id)
            if found is None:
                unit.discard()
                continue
            offer = await locked_offer(db, offer_id, found.room_id)
            payment = await StripeEventRepository(db).payment_by_ref(
                provider.name, reference, fresh=True
            )
            if payment is None:
                unit.discard()
                continue
            applied = await apply_signal(
                db,
                offer,
                payment,
                signal,
                clock.now(),
                message=charge.message,
                band_percent=band_percent,
            )
            unit.publish(*applied.published)
            moved += applied.outcome == "applied"
    return moved


async def auto_release(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    *,
    days: int,
    limit: int = 50,
    band_percent: Decimal | None = None,
) -> int:
    """Release up to ``limit`` holds whose time has come (PL3); returns how many were."""
    now = clock.now()
    async with reading(sessionmaker) as db:
        held = await StripeEventRepository(db).held(limit)
        due = [
            offer.id
            for payment, offer in held
            if payment_life.release_due(
                dict(offer.terms or {}), payment.held_at or payment.created_at, days, now
            )
        ]
    released = 0
    for offer_id in due:
        try:
            async with UnitOfWork(sessionmaker, broker) as unit:
                await confirm_delivery(
                    unit.db,
                    broker,
                    clock,
                    provider,
                    None,
                    offer_id=offer_id,
                    band_percent=band_percent,
                )
            released += 1
        except DomainError as exc:
            log.warning("auto_release_refused", offer_id=str(offer_id), code=str(exc.code))
    return released
