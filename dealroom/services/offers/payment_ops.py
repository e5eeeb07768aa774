"""What operators do with payments: release a hold, refund released funds (each an audited
``ops_actions`` row), and the payments view (held, due for release, disputed, refunded, owed to
hosts, refused by the amount check)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal

from dealroom.domain import payment_life
from dealroom.domain.errors import not_found, unauthenticated
from dealroom.persistence.db import Db
from dealroom.persistence.models import HostPayout, Offer, Payment, StripeEvent
from dealroom.persistence.stripe_events import StripeEventRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.offers import payment_life as life
from dealroom.services.offers.provider import PaymentProvider
from dealroom.services.ops.actions import audit
from dealroom.services.ops.reads import require_operator


@dataclass(frozen=True, slots=True)
class PaymentsView:
    held: list[Payment]
    due_for_release: list[Payment]
    disputed: list[Payment]
    refunded: list[Payment]
    owed_to_hosts: list[HostPayout]
    refused_events: list[StripeEvent]


async def release(
    db: Db,
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    band_percent: Decimal | None = None,
) -> Offer:
    """PL3 on the brand's behalf (a delivery confirmed outside the product). Audited."""
    operator = require_operator(identity)
    found = await life.confirm_delivery(
        db, broker, clock, provider, None, offer_id=offer_id, band_percent=band_percent
    )
    offer = found if isinstance(found, Offer) else found.offer
    await audit(
        db, operator, "release_payment", offer.room_id, {"offerId": str(offer.id)}, clock.now()
    )
    return offer


async def refund(
    db: Db,
    clock: Clock,
    provider: PaymentProvider,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    amount: Decimal,
    idempotency_key: str,
) -> Payment:
    """PL5 after release: part or all of what remains captured. Audited."""
    operator = require_operator(identity)
    payment = await life.refund(
        db, clock, provider, offer_id=offer_id, amount=amount, idempotency_key=idempotency_key
    )
    offer = await db.get(Offer, offer_id)
    if offer is None:
        raise not_found("Offer")
    await audit(
        db,
        operator,
        "refund_payment",
        offer.room_id,
        {"offerId": str(offer_id), "amount": format(amount, "f"), "key": idempotency_key},
        clock.now(),
    )
    return payment


async def payments_view(
    db: Db, clock: Clock, identity: Identity, *, days: int, limit: int = 50
) -> PaymentsView:
    require_operator(identity)
    repo = StripeEventRepository(db)
    now = clock.now()
    held_pairs = await repo.held(limit)
    due = [
        payment
        for payment, offer in held_pairs
        if payment_life.release_due(
            dict(offer.terms or {}), payment.held_at or payment.created_at, days, now
        )
    ]
    refunded = [
        p
        for p in await repo.payments_by_status(("cancelled", "released", "disputed"), limit)
        if p.refunded
    ]
    return PaymentsView(
        held=[payment for payment, _ in held_pairs],
        due_for_release=due,
        disputed=await repo.payments_by_status(("disputed",), limit),
        refunded=refunded,
        owed_to_hosts=[p for p in await repo.payouts(None, limit) if p.sent < p.owed],
        refused_events=[e for e in await repo.events(limit) if e.outcome == "amount_mismatch"],
    )


async def held_payment(db: Db, offer_id: uuid.UUID) -> Payment:
    """The offer's held, released or disputed payment (NOT_FOUND when none)."""
    payment = await StripeEventRepository(db).held_payment(offer_id)
    if payment is None:
        raise not_found("Payment")
    return payment


async def payouts_of(db: Db, identity: Identity, limit: int = 100) -> list[HostPayout]:
    """The signed-in host's payout ledger: what each released payment owes it and what was
    sent (PL7), newest first."""
    if identity.account is None:
        raise unauthenticated()
    return await StripeEventRepository(db).payouts(identity.account.id, limit)
