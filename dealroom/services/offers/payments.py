"""Paying for a written offer (O8): the quote (the due slice of the fee plus the platform
fee), the brand's payment through the provider (the workers' sweep that settles pending captures is
``jobs/payment_capture.py``). Each moves the offer's stage under the room's lock and records
it."""

from __future__ import annotations

import uuid
from decimal import Decimal

from dealroom.domain import offers as rules
from dealroom.domain.errors import DomainError, ErrorCode, forbidden
from dealroom.domain.offer_stage import OfferStatus
from dealroom.persistence.db import Db
from dealroom.persistence.models import Payment
from dealroom.persistence.offers import OfferRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.live.publish import publish_after_commit
from dealroom.services.offers.events import record_stage
from dealroom.services.offers.provider import ChargeStatus, PaymentProvider
from dealroom.services.offers.quotes import quote_for as quote_for
from dealroom.services.offers.reads import (
    OfferAccess,
    locked_offer,
    offer_for_reader,
    signed_in_buyer,
    stage_of,
    state_of,
)


async def pay_offer(
    db: Db,
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    payment_method: str,
    idempotency_key: str,
    band_percent: Decimal | None = None,
) -> tuple[Payment, OfferAccess, str | None]:
    """O8: the brand pays the quoted amount. Captured → PAYMENT_HELD; capture pending →
    PENDING_PAY_CAPTURE; declined → the stage stays BOOKED_AWAITING_PAYMENT and the error
    says so. Idempotent on ``idempotency_key`` (here and at the provider). Also returns what
    the payer's browser confirms the charge with (a provider's client secret), if anything:
    a pending Stripe payment moves on Stripe's webhook, never on the browser's word."""
    key = idempotency_key.strip()
    if not 0 < len(key) <= 64:
        raise DomainError(
            ErrorCode.BAD_USER_INPUT,
            "idempotencyKey must be 1-64 characters.",
            field="idempotencyKey",
        )
    found = await offer_for_reader(db, identity, offer_id)
    seat = found.room.reader_seat
    if rules.role_of(seat) is not rules.Role.BRAND:
        raise forbidden("Only the brand pays a written offer.")  # before any idempotent replay
    signed_in_buyer(found.room, seat, "pay")
    offer = await locked_offer(db, offer_id, found.offer.room_id)
    offers = OfferRepository(db)
    existing = await offers.payment(offer.id, key)
    if existing is not None:
        if existing.method != payment_method:
            raise DomainError(
                ErrorCode.CONFLICT,
                "That idempotencyKey was used with another payment method.",
                field="idempotencyKey",
            )
        secret = None
        if existing.status == ChargeStatus.PENDING.value and existing.provider_ref:
            # A retry while the payer still has to confirm: the same intent's secret again.
            secret = (await provider.status(existing.provider_ref)).client_secret
        return existing, OfferAccess(offer, found.room), secret
    rules.check_pay(state_of(offer), seat)
    quote = quote_for(offer)
    if quote is None:
        raise rules.conflict("The written offer holds no fee that can be paid.", state_of(offer))
    # The provider is idempotent on the key too: a crash after charging but before commit is
    # retried with the same key and charges nothing twice. The offer's version is in it, so
    # a key reused after a rewrite can never replay a charge for other terms.
    charge = await provider.charge(
        amount=quote.total,
        currency=quote.currency,
        payment_method=payment_method,
        idempotency_key=f"{offer.id}:v{offer.version}:{key}",
    )
    if charge.status is ChargeStatus.DECLINED:
        raise DomainError(
            ErrorCode.PAYMENT_DECLINED,
            charge.message or "The payment was declined.",
            stage=stage_of(offer).value,
        )
    now = clock.now()
    payment = Payment(
        id=uuid.uuid4(),
        offer_id=offer.id,
        idempotency_key=key,
        payer_account_id=identity.account.id if identity.account else None,
        method=payment_method,
        provider=provider.name,
        provider_ref=charge.reference,
        status=charge.status.value,
        currency=quote.currency,
        due=quote.due,
        platform_fee=quote.platform_fee,
        total=quote.total,
        offer_version=offer.version,
        created_at=now,
        updated_at=now,
    )
    offer.status = (
        OfferStatus.PAYMENT_HELD.value
        if charge.status is ChargeStatus.CAPTURED
        else OfferStatus.PENDING_PAY_CAPTURE.value
    )
    offer.updated_at = now
    await db.add(payment)
    published = await record_stage(db, offer, actor="payment", now=now, band_percent=band_percent)
    publish_after_commit(db, broker, published)
    return payment, OfferAccess(offer, found.room), charge.client_secret
