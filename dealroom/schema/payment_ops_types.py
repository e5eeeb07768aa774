"""Operators' payment types, mapped from rows by ``from_row``."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dealroom.domain import money
from dealroom.persistence import models
from dealroom.schema.offer_types import Payment


@strawberry.type(description="A payment as operators see it: its offer and room included.")
class OpsPayment:
    payment: Payment = strawberry.field(description="The payment.")
    offer_id: strawberry.ID = strawberry.field(description="Its offer.")
    provider: str = strawberry.field(description="test or stripe.")
    provider_ref: str | None = strawberry.field(description="The provider's id (pi_...).")
    held_at: datetime | None = strawberry.field(description="When the funds were held (UTC).")
    released_at: datetime | None = strawberry.field(description="When they were released.")

    @classmethod
    def from_row(cls, row: models.Payment) -> OpsPayment:
        return cls(
            payment=Payment.from_row(row),
            offer_id=strawberry.ID(str(row.offer_id)),
            provider=row.provider,
            provider_ref=row.provider_ref,
            held_at=row.held_at,
            released_at=row.released_at,
        )


@strawberry.type(description="What a released payment owes its host, and what was sent.")
class OpsHostPayout:
    payment_id: strawberry.ID = strawberry.field(description="The payment.")
    host_account_id: strawberry.ID = strawberry.field(description="The host owed.")
    currency: str = strawberry.field(description="ISO 4217 code.")
    owed: str = strawberry.field(description="The due slice: captured less the platform fee.")
    sent: str = strawberry.field(description="What a transfer has sent so far.")
    transfer_ref: str | None = strawberry.field(description="The transfer's id, once sent.")

    @classmethod
    def from_row(cls, row: models.HostPayout) -> OpsHostPayout:
        return cls(
            payment_id=strawberry.ID(str(row.payment_id)),
            host_account_id=strawberry.ID(str(row.host_account_id)),
            currency=row.currency,
            owed=money.format_amount(row.owed, row.currency),
            sent=money.format_amount(row.sent, row.currency),
            transfer_ref=row.transfer_ref,
        )


@strawberry.type(description="A Stripe event the server recorded but refused to apply.")
class OpsStripeEvent:
    id: str = strawberry.field(description="Stripe's event id.")
    type: str = strawberry.field(description="Stripe's event type.")
    payment_ref: str | None = strawberry.field(description="The PaymentIntent it names.")
    outcome: str = strawberry.field(description="What applying it did.")
    detail: str | None = strawberry.field(description="Why, in words.")
    received_at: datetime = strawberry.field(description="When it arrived (UTC).")

    @classmethod
    def from_row(cls, row: models.StripeEvent) -> OpsStripeEvent:
        return cls(
            id=row.id,
            type=row.type,
            payment_ref=row.payment_ref,
            outcome=row.outcome,
            detail=row.detail,
            received_at=row.received_at,
        )


@strawberry.type(description="Operators' payments view (up to 50 of each, newest first).")
class PaymentsView:
    held: list[OpsPayment] = strawberry.field(description="Funds held, awaiting delivery.")
    due_for_release: list[OpsPayment] = strawberry.field(
        description="Held past DEALROOM_AUTO_RELEASE_DAYS after the last delivery date."
    )
    disputed: list[OpsPayment] = strawberry.field(description="Under a dispute.")
    refunded: list[OpsPayment] = strawberry.field(description="With money given back.")
    owed_to_hosts: list[OpsHostPayout] = strawberry.field(
        description="Released payments whose host has not been sent what it is owed."
    )
    refused_events: list[OpsStripeEvent] = strawberry.field(
        description="Stripe events refused because Stripe's amount or currency was not the "
        "payment's."
    )
