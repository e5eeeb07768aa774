"""The workers' sweep that settles pending captures: the provider is asked about each
payment still pending; a captured one moves its offer to PAYMENT_HELD, a declined one back to
ACCEPTED (BOOKED_AWAITING_PAYMENT), under the room's lock, recorded as a stage event (O8)."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.domain.offer_stage import OfferStatus
from dealroom.persistence.models import Payment
from dealroom.persistence.offers import OfferRepository
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.offers.events import record_stage
from dealroom.services.offers.provider import ChargeStatus, PaymentProvider
from dealroom.services.offers.reads import locked_offer
from dealroom.services.unit_of_work import UnitOfWork, reading


async def capture_pending(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    *,
    limit: int = 50,
    band_percent: Decimal | None = None,
) -> int:
    """Settle up to ``limit`` pending captures; returns how many offers moved. The provider
    is asked with no session open; each answer is applied in a unit of its own."""
    moved = 0
    async with reading(sessionmaker) as db:
        pending = [
            (p.id, p.offer_id, p.provider_ref)
            for p in await OfferRepository(db).pending_payments(limit)
        ]
    for payment_id, offer_id, reference in pending:
        if reference is None:
            continue
        charge = await provider.status(reference)
        if charge.status is ChargeStatus.PENDING:
            continue
        async with UnitOfWork(sessionmaker, broker) as unit:
            db = unit.db
            offer = await OfferRepository(db).by_id(offer_id)
            if offer is None:
                unit.discard()
                continue
            offer = await locked_offer(db, offer_id, offer.room_id)
            payment = await db.get(Payment, payment_id)
            if payment is None or payment.status != "pending":
                unit.discard()
                continue
            now = clock.now()
            payment.status = charge.status.value
            payment.error = charge.message if charge.status is ChargeStatus.DECLINED else None
            payment.updated_at = now
            if offer.status == OfferStatus.PENDING_PAY_CAPTURE.value:
                offer.status = (
                    OfferStatus.PAYMENT_HELD.value
                    if charge.status is ChargeStatus.CAPTURED
                    else OfferStatus.ACCEPTED.value
                )
                offer.updated_at = now
                await db.flush()
                unit.publish(
                    *await record_stage(
                        db, offer, actor="payment", now=now, band_percent=band_percent
                    )
                )
                moved += 1
    return moved
