"""Resolvers for the payment's life after the hold (confirm delivery, cancel a paid booking)
and Stripe's webhook endpoint. Thin: parse, call the service, map the result."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import strawberry
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from dealroom.domain.errors import DomainError, ErrorCode, bad_input
from dealroom.schema.context import Info
from dealroom.schema.payment_ops_types import (
    OpsHostPayout,
    OpsPayment,
    OpsStripeEvent,
    PaymentsView,
)
from dealroom.schema.room_types import Offer
from dealroom.schema.types import PaymentLifePayload
from dealroom.services.offers import payment_life, payment_ops, stripe_webhooks
from dealroom.services.offers import reads as offers
from dealroom.services.offers.reads import OfferAccess
from dealroom.services.offers.stripe_provider import StripeProvider


async def confirm_delivery(info: Info, offer_id: strawberry.ID) -> PaymentLifePayload:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        found = await payment_life.confirm_delivery(
            db,
            ctx.app.broker,
            ctx.app.clock,
            ctx.app.payments,
            identity,
            offer_id=offers.parse_offer_id(offer_id),
            band_percent=ctx.app.settings.firewall_band_percent,
        )
    assert isinstance(found, OfferAccess)  # a reader's confirmation returns its access
    return PaymentLifePayload(offer=Offer.for_reader(found.offer, found.room.reader_seat))


async def cancel_paid_booking(info: Info, offer_id: strawberry.ID) -> PaymentLifePayload:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        found = await payment_life.cancel_booking(
            db,
            ctx.app.broker,
            ctx.app.clock,
            ctx.app.payments,
            identity,
            offer_id=offers.parse_offer_id(offer_id),
            band_percent=ctx.app.settings.firewall_band_percent,
        )
    return PaymentLifePayload(offer=Offer.for_reader(found.offer, found.room.reader_seat))


async def ops_payments(info: Info) -> PaymentsView:
    ctx = info.context
    view = await payment_ops.payments_view(
        ctx.db, ctx.app.clock, await ctx.identity(), days=ctx.app.settings.auto_release_days
    )
    return PaymentsView(
        held=[OpsPayment.from_row(p) for p in view.held],
        due_for_release=[OpsPayment.from_row(p) for p in view.due_for_release],
        disputed=[OpsPayment.from_row(p) for p in view.disputed],
        refunded=[OpsPayment.from_row(p) for p in view.refunded],
        owed_to_hosts=[OpsHostPayout.from_row(p) for p in view.owed_to_hosts],
        refused_events=[OpsStripeEvent.from_row(e) for e in view.refused_events],
    )


async def payouts(info: Info) -> list[OpsHostPayout]:
    ctx = info.context
    rows = await payment_ops.payouts_of(ctx.db, await ctx.identity())
    return [OpsHostPayout.from_row(row) for row in rows]


async def ops_release(info: Info, offer_id: strawberry.ID) -> OpsPayment:
    ctx = info.context
    identity = await ctx.identity()
    parsed = offers.parse_offer_id(offer_id)
    async with ctx.transaction() as db:
        await payment_ops.release(
            db,
            ctx.app.broker,
            ctx.app.clock,
            ctx.app.payments,
            identity,
            offer_id=parsed,
            band_percent=ctx.app.settings.firewall_band_percent,
        )
        payment = await payment_ops.held_payment(db, parsed)
    return OpsPayment.from_row(payment)


async def ops_refund(
    info: Info, offer_id: strawberry.ID, amount: str, idempotency_key: str
) -> OpsPayment:
    ctx = info.context
    identity = await ctx.identity()
    try:
        value = Decimal(amount.strip())
    except InvalidOperation:
        raise bad_input("amount must be a decimal number.", "amount") from None
    key = idempotency_key.strip()
    if not 0 < len(key) <= 64:
        raise bad_input("idempotencyKey must be 1-64 characters.", "idempotencyKey")
    async with ctx.transaction() as db:
        payment = await payment_ops.refund(
            db,
            ctx.app.clock,
            ctx.app.payments,
            identity,
            offer_id=offers.parse_offer_id(offer_id),
            amount=value,
            idempotency_key=key,
        )
    return OpsPayment.from_row(payment)


async def stripe_webhook(request: Request) -> Response:
    """``POST /webhooks/stripe``: 400 for a bad signature, 2xx for everything verified
    (duplicates included), 404 when the Stripe provider is not the one running."""
    state = request.app.state.dealroom
    provider = state.payments
    if not isinstance(provider, StripeProvider):
        error = DomainError(ErrorCode.NOT_FOUND, "The Stripe provider is not configured.")
        return JSONResponse({"error": str(error.code)}, status_code=404)
    answer = await stripe_webhooks.receive(
        state.sessionmaker,
        state.broker,
        state.clock,
        provider,
        await request.body(),
        request.headers.get("stripe-signature"),
        band_percent=state.settings.firewall_band_percent,
    )
    return JSONResponse(answer.body, status_code=answer.status)
