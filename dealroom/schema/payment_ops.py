"""Operators' payment tools: the payments view, releasing a hold and refunding released funds
(both audited)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import payments
from dealroom.schema.context import Info
from dealroom.schema.payment_ops_types import OpsHostPayout, OpsPayment, PaymentsView


@strawberry.type
class PaymentOpsQuery:
    @strawberry.field(
        description="The signed-in host's payouts: what each released payment owes it (the due "
        "slice) and what was sent. Sending needs Stripe Connect, which is not configured, so "
        "`sent` stays 0 and the amount stays owed. UNAUTHENTICATED when anonymous."
    )
    async def payouts(self, info: Info) -> list[OpsHostPayout]:
        return await payments.payouts(info)

    @strawberry.field(description="Operators only: held, due, disputed, refunded, owed.")
    async def ops_payments(self, info: Info) -> PaymentsView:
        return await payments.ops_payments(info)


@strawberry.type
class PaymentOpsMutation:
    @strawberry.mutation(
        description="Operators only: release an offer's held payment (as if the brand had "
        "confirmed delivery): COMPLETED. CONFLICT unless BOOKED_PAYMENT_HELD. Audited."
    )
    async def ops_release_payment(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
    ) -> OpsPayment:
        return await payments.ops_release(info, offer_id)

    @strawberry.mutation(
        description="Operators only: refund part or all of a released payment. BAD_USER_INPUT "
        "(reason REFUND_EXCEEDS_CAPTURED) above what remains captured; idempotent on "
        "idempotencyKey. Audited."
    )
    async def ops_refund_payment(
        self,
        info: Info,
        offer_id: Annotated[strawberry.ID, strawberry.argument(description="The offer.")],
        amount: Annotated[
            str, strawberry.argument(description="A decimal in the payment's currency.")
        ],
        idempotency_key: Annotated[
            str, strawberry.argument(description="1-64 characters; a retry reuses it.")
        ],
    ) -> OpsPayment:
        return await payments.ops_refund(info, offer_id, amount, idempotency_key)
