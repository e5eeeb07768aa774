"""After the brand pays: provider facts move the stage (PL1-PL4), the brand confirms delivery
(release, PL3), the talent cancels a held booking (the hold given back, PL5), and what a capture
owes the host goes into the payout ledger (PL7). Every move happens under the room's lock and is
recorded as a stage event (notices to both panes, the partner webhook outbox) in the same
transaction; provider calls carry an Idempotency-Key derived from the offer, so a retry of a
release or cancel never takes or returns money twice."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Final

from dealroom.domain import leaks, payment_life
from dealroom.domain import offers as rules
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.payment_life import Signal
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import Flag, HostPayout, Offer, Payment, Room
from dealroom.persistence.seats import SeatRepository
from dealroom.persistence.stripe_events import StripeEventRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.live.publish import Publish, publish_after_commit
from dealroom.services.offers.events import record_stage
from dealroom.services.offers.provider import Charge, ChargeStatus, PaymentProvider, holding
from dealroom.services.offers.reads import OfferAccess, locked_offer, offer_for_reader, state_of

PAYMENT_FLAG: Final = "payment"
"""The flag level operators see for a payment the provider contradicts (PL6)."""

SCREENED_DECLINE: Final = "The payment was declined."
"""What a payer and partners read when the provider's own words state a private value."""


_MOVES_FROM: Final[dict[Signal, frozenset[str]]] = {
    Signal.AUTHORIZED: frozenset({ChargeStatus.PENDING.value}),
    Signal.FAILED: frozenset({ChargeStatus.PENDING.value}),
    Signal.CAPTURED: frozenset({ChargeStatus.CAPTURED.value}),
    Signal.DISPUTED: frozenset({ChargeStatus.CAPTURED.value, "released"}),
}
"""The payment statuses each provider fact applies to (with the offer's, PL1-PL4)."""


@dataclass(frozen=True, slots=True)
class Applied:
    """What a provider fact did: the outcome word recorded with the event, and what to
    publish after commit."""

    outcome: str
    published: list[Publish]


async def screened_message(
    db: Db, offer: Offer, message: str | None, *, band_percent: Decimal | None = None
) -> str:
    """A provider's free text (a decline reason) is outside text about to reach the brand and
    partners: it passes the private-value screen like every host→visitor flow (``leaks.screen``
    with the deployment's band ``band_percent``), and a text that states a host's private value,
    or a figure close to a limit, is replaced by plain words."""
    if not message:
        return SCREENED_DECLINE
    room = await db.get(Room, offer.room_id)
    memory = dict(room.memory or {}) if room is not None else {}
    matches = leaks.screen(memory, message, band_percent=band_percent)
    return SCREENED_DECLINE if matches else message[:200]


async def apply_signal(
    db: Db,
    offer: Offer,
    payment: Payment,
    signal: Signal,
    now: datetime,
    *,
    message: str | None = None,
    band_percent: Decimal | None = None,
) -> Applied:
    """Apply one provider fact to a payment and its offer, already locked (PL1-PL4). A fact
    that moves nothing (late, repeated, about another stage) writes nothing."""
    target = payment_life.on_signal(OfferStatus(offer.status), signal)
    if target is None or payment.status not in _MOVES_FROM[signal]:
        # Late, repeated, or about an earlier payment of this offer (a declined one the brand
        # has since paid again): nothing moves.
        return Applied("unchanged", [])
    published: list[Publish] = []
    match signal:
        case Signal.AUTHORIZED:
            payment.status = ChargeStatus.CAPTURED.value
            payment.held_at = now
            payment.error = None
        case Signal.FAILED:
            payment.status = ChargeStatus.DECLINED.value
            # Partners hear of it from the stage change (payment.declined, W1); the provider's
            # words reach only the brand, screened.
            payment.error = await screened_message(db, offer, message, band_percent=band_percent)
        case Signal.CAPTURED:
            payment.status = "released"
            payment.released_at = now
            await _owe_host(db, offer, payment, now)
        case Signal.DISPUTED:
            payment.status = "disputed"
    payment.updated_at = now
    offer.status = target.value
    offer.updated_at = now
    await db.flush()
    published += await record_stage(db, offer, actor="payment", now=now, band_percent=band_percent)
    return Applied("applied", published)


async def _owe_host(db: Db, offer: Offer, payment: Payment, now: datetime) -> None:
    """PL7: the ledger row of what this capture owes the host, written once."""
    repo = StripeEventRepository(db)
    if await repo.payout(payment.id) is not None:
        return
    await db.add(
        HostPayout(
            payment_id=payment.id,
            host_account_id=offer.seller_account_id,
            offer_id=offer.id,
            currency=payment.currency,
            owed=payment.due,
            sent=Decimal(0),
            created_at=now,
        )
    )


async def flag_mismatch(db: Db, offer: Offer, detail: str, now: datetime) -> None:
    """PL6: operators see a payment the provider contradicts (the host's pane row carries the
    flag, as every operator flag does)."""
    host = await SeatRepository(db).id_by_key(offer.room_id, Seat.HOST.value)
    if host is None:
        return
    await db.add(
        Flag(
            room_id=offer.room_id,
            participant_id=host,
            level=PAYMENT_FLAG,
            evidence=f"payment for offer {offer.id} refused: {detail}",
            created_at=now,
        )
    )


def signal_of(charge: Charge) -> Signal | None:
    """A re-read charge as a provider fact (the reconciliation sweep): held, failed or nothing
    yet."""
    if charge.status is ChargeStatus.CAPTURED:
        return Signal.AUTHORIZED
    if charge.status is ChargeStatus.DECLINED:
        return Signal.FAILED
    return None


async def confirm_delivery(
    db: Db,
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    identity: Identity | None,
    *,
    offer_id: uuid.UUID,
    band_percent: Decimal | None = None,
) -> OfferAccess | Offer:
    """PL3: the brand confirms delivery (``identity``; None is the release sweep): the held
    funds are captured and the offer is COMPLETED on the provider's answer. Repeating it after
    completion is a no-op."""
    found: OfferAccess | None = None
    if identity is not None:
        found = await offer_for_reader(db, identity, offer_id)
        room_id = found.offer.room_id
        seat: Seat | None = found.room.reader_seat
    else:
        offer_row = await db.get(Offer, offer_id)
        if offer_row is None:
            raise DomainError(ErrorCode.NOT_FOUND, "Offer not found.")
        room_id, seat = offer_row.room_id, None
    offer = await locked_offer(db, offer_id, room_id)
    if offer.status == OfferStatus.COMPLETED.value:
        if seat is not None and rules.role_of(seat) is not rules.Role.BRAND:
            raise DomainError(ErrorCode.FORBIDDEN, "Only the brand confirms delivery.")
        return _access(found, offer)  # a retry after the release committed
    payment_life.check_release(state_of(offer), seat)
    payment = await StripeEventRepository(db).held_payment(offer.id)
    if payment is None or payment.provider_ref is None:
        raise DomainError(ErrorCode.CONFLICT, "The offer holds no payment to release.")
    charge = await holding(provider).release(
        payment.provider_ref, idempotency_key=f"{offer.id}:v{offer.version}:release"
    )
    if charge.status is not ChargeStatus.CAPTURED:
        raise DomainError(
            ErrorCode.CONFLICT, "The payment provider did not release the funds.", reason="PROVIDER"
        )
    applied = await apply_signal(
        db, offer, payment, Signal.CAPTURED, clock.now(), band_percent=band_percent
    )
    publish_after_commit(db, broker, applied.published)
    return _access(found, offer)


async def cancel_booking(
    db: Db,
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    band_percent: Decimal | None = None,
) -> OfferAccess:
    """PL5: the talent cancels a held booking before delivery: the whole hold goes back to the
    brand, the refund is recorded and the offer is WITHDRAWN."""
    found = await offer_for_reader(db, identity, offer_id)
    offer = await locked_offer(db, offer_id, found.offer.room_id)
    if offer.status == OfferStatus.WITHDRAWN.value:
        return OfferAccess(offer, found.room)  # a retry after the cancel committed
    payment_life.check_cancel(state_of(offer), found.room.reader_seat)
    payment = await StripeEventRepository(db).held_payment(offer.id)
    if payment is None or payment.provider_ref is None:
        raise DomainError(ErrorCode.CONFLICT, "The offer holds no payment to give back.")
    charge = await holding(provider).cancel(
        payment.provider_ref, idempotency_key=f"{offer.id}:v{offer.version}:cancel"
    )
    if charge.status is not ChargeStatus.DECLINED:
        raise DomainError(
            ErrorCode.CONFLICT, "The payment provider did not cancel the hold.", reason="PROVIDER"
        )
    now = clock.now()
    payment.status = "cancelled"
    payment.refunded = payment.total
    payment.updated_at = now
    offer.status = OfferStatus.WITHDRAWN.value
    offer.updated_at = now
    await db.flush()
    published = await record_stage(
        db, offer, actor=Seat.HOST.value, now=now, band_percent=band_percent
    )
    publish_after_commit(db, broker, published)
    return OfferAccess(offer, found.room)


async def refund(
    db: Db,
    clock: Clock,
    provider: PaymentProvider,
    *,
    offer_id: uuid.UUID,
    amount: Decimal,
    idempotency_key: str,
) -> Payment:
    """PL5: give back ``amount`` of released funds (an operator's action; the caller audits
    it). Never more than captured less refunded; the stage stays."""
    offer = await db.get(Offer, offer_id)
    if offer is None:
        raise DomainError(ErrorCode.NOT_FOUND, "Offer not found.")
    offer = await locked_offer(db, offer_id, offer.room_id)
    payment = await StripeEventRepository(db).held_payment(offer.id)
    if payment is None or payment.released_at is None or payment.provider_ref is None:
        raise DomainError(ErrorCode.CONFLICT, "Only released funds are refunded.")
    exact = payment_life.check_refund(amount, payment.currency, payment.total, payment.refunded)
    refund_ref = await holding(provider).refund(
        payment.provider_ref,
        amount=exact,
        currency=payment.currency,
        idempotency_key=f"{offer.id}:refund:{idempotency_key}",
    )
    now = clock.now()
    # The provider answers a retried key with the same refund; recording its reference once
    # keeps the ledger from counting it twice.
    first = await StripeEventRepository(db).record(
        f"refund:{refund_ref}", "dealroom.refund", payment.provider_ref, now, now
    )
    if not first:
        return payment
    payment.refunded = payment.refunded + exact
    payment.updated_at = now
    await db.flush()
    return payment


def _access(found: OfferAccess | None, offer: Offer) -> OfferAccess | Offer:
    return offer if found is None else OfferAccess(offer, found.room)
