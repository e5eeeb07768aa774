"""Stripe's webhooks: verified, recorded once, applied in one unit of work.

The SDK verifies ``Stripe-Signature`` (HMAC-SHA256, within the tolerance window); a forged,
stale or unsigned body is refused with 400 before anything is read from it. A verified event
is recorded by its id (the ``stripe_events`` primary key) in the same transaction that applies
it, so a redelivery, or the same event reaching two processes at once, is applied once and
answered 2xx. The payment and offer are changed under the room's lock by the rules of
``domain/payment_life.py``, which never move a stage backwards, so events out of order are
harmless. An event about a PaymentIntent we never made, or one whose amount is not the
payment's (PL6), is recorded and answered 2xx (Stripe's retrying it would change nothing); the
mismatch is flagged to operators.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import stripe
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.domain import payment_life
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.payment_life import Signal
from dealroom.persistence.models import Offer, Payment
from dealroom.persistence.stripe_events import StripeEventRepository
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.offers.payment_life import Applied, apply_signal, flag_mismatch
from dealroom.services.offers.reads import locked_offer
from dealroom.services.offers.stripe_provider import StripeProvider
from dealroom.services.unit_of_work import UnitOfWork

AUTHORIZED_EVENTS = frozenset({"payment_intent.amount_capturable_updated"})
FAILED_EVENTS = frozenset({"payment_intent.payment_failed", "payment_intent.canceled"})
SUCCEEDED = "payment_intent.succeeded"
DISPUTE_CREATED = "charge.dispute.created"


@dataclass(frozen=True, slots=True)
class Answer:
    """The HTTP answer to Stripe: 400 only for what Stripe should not retry as is."""

    status: int
    body: dict[str, str]


async def receive(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    provider: StripeProvider,
    payload: bytes,
    signature: str | None,
    *,
    band_percent: Decimal | None = None,
) -> Answer:
    """Verify, record and apply one webhook delivery."""
    try:
        event = provider.verify_event(payload, signature)
    except (stripe.SignatureVerificationError, ValueError, UnicodeDecodeError):
        return Answer(400, {"error": "BAD_SIGNATURE"})
    event_id = event.get("id")
    event_type = event.get("type")
    data = event.get("data")
    obj = data.get("object") if isinstance(data, dict) else None
    if (
        not isinstance(event_id, str)
        or not isinstance(event_type, str)
        or not isinstance(obj, dict)
    ):
        return Answer(400, {"error": "BAD_EVENT"})
    created = _when(event.get("created"), clock)
    reference = _intent_of(event_type, obj)
    async with UnitOfWork(sessionmaker, broker) as unit:
        db = unit.db
        events = StripeEventRepository(db)
        now = clock.now()
        if not await events.record(event_id, event_type, reference, created, now):
            unit.discard()
            return Answer(200, {"status": "duplicate"})
        outcome, detail, published = await _apply(
            unit, event_type, obj, reference, now, band_percent
        )
        row = await events.event(event_id)
        assert row is not None  # recorded above, in this transaction
        row.outcome = outcome
        row.detail = detail
        await db.flush()
        unit.publish(*published)
    return Answer(200, {"status": outcome})


async def _apply(
    unit: UnitOfWork,
    event_type: str,
    obj: dict[str, Any],
    reference: str | None,
    now: datetime,
    band_percent: Decimal | None,
) -> tuple[str, str | None, list[Any]]:
    signal = _signal(event_type)
    if signal is None and event_type != SUCCEEDED:
        return "ignored", None, []
    if reference is None:
        return "ignored", "the event names no PaymentIntent", []
    db = unit.db
    payment = await StripeEventRepository(db).payment_by_ref(StripeProvider.name, reference)
    if payment is None:
        return "unknown_payment", reference, []
    found = await db.get(Offer, payment.offer_id)
    if found is None:
        return "unknown_payment", reference, []
    offer = await locked_offer(db, found.id, found.room_id)
    # Read again under the lock: another event or the sweep may have moved it meanwhile.
    payment = await StripeEventRepository(db).payment_by_ref(
        StripeProvider.name, reference, fresh=True
    )
    assert payment is not None  # payments are never deleted while their offer lives
    if event_type.startswith("payment_intent."):
        mismatch = _mismatch(payment, obj)
        if mismatch is not None:  # PL6
            await flag_mismatch(db, offer, mismatch, now)
            return "amount_mismatch", mismatch, []
    if signal is None:  # succeeded: a hold taken at once, or the capture of a release
        pending = offer.status == OfferStatus.PENDING_PAY_CAPTURE.value
        signal = Signal.AUTHORIZED if pending else Signal.CAPTURED
    message = _failure(obj) if signal is Signal.FAILED else None
    applied: Applied = await apply_signal(
        db, offer, payment, signal, now, message=message, band_percent=band_percent
    )
    return applied.outcome, None, applied.published


def _signal(event_type: str) -> Signal | None:
    if event_type in AUTHORIZED_EVENTS:
        return Signal.AUTHORIZED
    if event_type in FAILED_EVENTS:
        return Signal.FAILED
    if event_type == DISPUTE_CREATED:
        return Signal.DISPUTED
    return None


def _intent_of(event_type: str, obj: dict[str, Any]) -> str | None:
    """The PaymentIntent an event is about: the object itself, or the one a charge or dispute
    names."""
    key = "id" if event_type.startswith("payment_intent.") else "payment_intent"
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _mismatch(payment: Payment, obj: dict[str, Any]) -> str | None:
    units, currency = obj.get("amount"), obj.get("currency")
    if not isinstance(units, int) or not isinstance(currency, str):
        return "the event states no amount"
    found = payment_life.amount_mismatch(payment.total, payment.currency, units, currency)
    return None if found is None else f"expected {found.expected}, Stripe states {found.stated}"


def _failure(obj: dict[str, Any]) -> str | None:
    error = obj.get("last_payment_error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return None


def _when(created: object, clock: Clock) -> datetime:
    if isinstance(created, int):
        return datetime.fromtimestamp(created, tz=UTC)
    return clock.now()
