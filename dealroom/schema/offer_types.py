"""GraphQL types of a written offer's parts: the stage and action enums, its terms and money,
what the brand pays now, payments, the agreement draft and stage changes. The ``Offer`` itself
is in ``room_types`` (an offer and its room name each other). Built from rows; the stage is
derived, never stored."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import strawberry

from dealroom.domain import money
from dealroom.domain import offers as rules
from dealroom.domain.cursors import event_cursor
from dealroom.domain.offer_stage import GLOSSES, Stage
from dealroom.persistence import models
from dealroom.schema.account_types import Account
from dealroom.schema.context import Info
from dealroom.services.live.events import StageChangedEvent

strawberry.enum(
    Stage,
    name="OfferStage",
    description="Where a deal stands, derived by code from the written offer: the one stage "
    "vocabulary. Only BOOKED_AWAITING_PAYMENT, PENDING_PAY_CAPTURE, BOOKED_PAYMENT_HELD, "
    "COMPLETED and DISPUTED are a booking.",
)


strawberry.enum(
    rules.Action,
    name="OfferAction",
    description="What the reader may do with a written offer now.",
)


@strawberry.type(description="An amount of money: a decimal string and an ISO 4217 currency.")
class Money:
    amount: str = strawberry.field(description="Decimal amount, e.g. '8000.00'.")
    currency: str = strawberry.field(description="ISO 4217 code, e.g. 'USD'.")

    @strawberry.field(
        description="The amount as people read it ('$8,000'): the same text chat and every "
        "other page writes for it."
    )
    async def display(self, info: Info) -> str:
        return _shown(self.amount, self.currency, await info.context.locale())


def _shown(amount: str, currency: str, locale: str) -> str:
    """P10: a decimal string as people read it in the reader's ``locale`` (L3 in
    ``domain/locale.py``); the raw text when it is not a number."""
    try:
        return money.display(Decimal(amount), currency, locale)
    except (InvalidOperation, ValueError):
        return f"{amount} {currency}"


@strawberry.type(description="A button on the written offer, as the card shows it.")
class OfferButton:
    action: rules.Action = strawberry.field(description="What pressing it does.")
    label: str = strawberry.field(
        description="Its label: the one text the card shows and agents name it by."
    )


@strawberry.type(description="The commercial terms of a written offer.")
class OfferTerms:
    deliverables: list[str] = strawberry.field(description="What the talent delivers.")
    fee: Money | None = strawberry.field(description="The whole fee.")
    dates: list[str] = strawberry.field(description="Agreed dates (ISO when known).")
    usage_rights: str | None = strawberry.field(description="Usage rights, if agreed.")
    exclusivity: str | None = strawberry.field(description="Exclusivity, if agreed.")
    due_slice_percent: str | None = strawberry.field(
        description="Percent of the fee due at booking; null when the offer names no "
        "schedule (the platform default, 100%, applies)."
    )
    open_questions: list[str] = strawberry.field(
        description="Terms the conversation did not settle: named, never invented."
    )
    _seller_id: strawberry.Private[uuid.UUID]
    _buyer_id: strawberry.Private[uuid.UUID | None]

    @strawberry.field(description="The seller: the host (talent).")
    async def seller(self, info: Info) -> Account:
        row = await info.context.loaders.accounts.load(self._seller_id)
        assert row is not None
        return Account.from_row(row)

    @strawberry.field(description="The buyer: the visitor (brand); null for a guest.")
    async def buyer(self, info: Info) -> Account | None:
        if self._buyer_id is None:
            return None
        row = await info.context.loaders.accounts.load(self._buyer_id)
        return Account.from_row(row) if row is not None else None

    @classmethod
    def from_row(cls, row: models.Offer) -> OfferTerms:
        terms: dict[str, Any] = row.terms or {}
        fee = terms.get("fee")
        return cls(
            deliverables=[str(d) for d in terms.get("deliverables") or []],
            fee=Money(amount=str(fee.get("amount")), currency=str(fee.get("currency")))
            if isinstance(fee, dict)
            else None,
            dates=[str(d) for d in terms.get("dates") or []],
            usage_rights=terms.get("usageRights"),
            exclusivity=terms.get("exclusivity"),
            due_slice_percent=terms.get("dueSlicePercent"),
            open_questions=[str(q) for q in row.open_questions or []],
            _seller_id=row.seller_account_id,
            _buyer_id=row.buyer_account_id,
        )


@strawberry.type(
    description="What the brand pays, shown before paying: the due slice of the fee plus the "
    "platform fee (20% of the due slice)."
)
class PaymentQuote:
    currency: str = strawberry.field(description="ISO 4217 code.")
    fee: str = strawberry.field(description="The offer's whole fee.")
    due_percent: str = strawberry.field(description="Percent of the fee due now.")
    due: str = strawberry.field(description="The due slice of the fee.")
    platform_fee: str = strawberry.field(description="The platform fee on the due slice.")
    total: str = strawberry.field(description="What the brand pays now: due + platformFee.")
    remaining: str = strawberry.field(description="The rest of the fee, due later.")
    default_schedule: bool = strawberry.field(
        description="True when the offer names no payment schedule and the whole fee is due."
    )

    @strawberry.field(description="The whole fee as people read it ('$7,350').")
    async def fee_display(self, info: Info) -> str:
        return _shown(self.fee, self.currency, await info.context.locale())

    @strawberry.field(description="The due slice as people read it.")
    async def due_display(self, info: Info) -> str:
        return _shown(self.due, self.currency, await info.context.locale())

    @strawberry.field(description="The platform fee as people read it ('$1,470').")
    async def platform_fee_display(self, info: Info) -> str:
        return _shown(self.platform_fee, self.currency, await info.context.locale())

    @strawberry.field(description="What the brand pays now as people read it ('$8,820').")
    async def total_display(self, info: Info) -> str:
        return _shown(self.total, self.currency, await info.context.locale())

    @strawberry.field(description="The rest of the fee, due later, as people read it.")
    async def remaining_display(self, info: Info) -> str:
        return _shown(self.remaining, self.currency, await info.context.locale())

    @classmethod
    def from_quote(cls, quote: money.Quote, default_schedule: bool) -> PaymentQuote:
        data = quote.to_json()
        return cls(
            currency=data["currency"],
            fee=data["fee"],
            due_percent=data["duePercent"],
            due=data["due"],
            platform_fee=data["platformFee"],
            total=data["total"],
            remaining=data["remaining"],
            default_schedule=default_schedule,
        )


@strawberry.type(description="A payment of a written offer.")
class Payment:
    id: strawberry.ID = strawberry.field(description="The payment id.")
    status: str = strawberry.field(
        description="pending (awaiting the provider's word), captured (held), declined, "
        "released (taken after delivery), cancelled (the hold given back) or disputed."
    )
    method: str = strawberry.field(description="The payment method used.")
    currency: str = strawberry.field(description="ISO 4217 code.")
    due: str = strawberry.field(description="The due slice paid.")
    platform_fee: str = strawberry.field(description="The platform fee paid.")
    total: str = strawberry.field(description="The amount charged.")
    offer_version: int = strawberry.field(description="The offer version paid.")
    created_at: datetime = strawberry.field(description="When it was submitted (UTC).")
    refunded: str = strawberry.field(description="What was given back to the payer.")
    error: str | None = strawberry.field(
        description="Why the provider declined it, screened like every text a visitor reads."
    )

    @strawberry.field(description="The amount charged as people read it ('$8,820').")
    async def total_display(self, info: Info) -> str:
        return _shown(self.total, self.currency, await info.context.locale())

    @classmethod
    def from_row(cls, row: models.Payment) -> Payment:
        currency = row.currency
        return cls(
            id=strawberry.ID(str(row.id)),
            status=row.status,
            method=row.method,
            currency=currency,
            due=money.format_amount(row.due, currency),
            platform_fee=money.format_amount(row.platform_fee, currency),
            total=money.format_amount(row.total, currency),
            offer_version=row.offer_version,
            created_at=row.created_at,
            refunded=money.format_amount(Decimal(row.refunded or 0), currency),
            error=row.error,
        )


@strawberry.type(
    description="A lawyer-reviewable English draft of the offer, drawn from its commercial "
    "fields only. A draft, not legal advice."
)
class Agreement:
    text: str = strawberry.field(description="The draft.")
    version: int = strawberry.field(description="The offer version it was drawn from.")
    fingerprint: str = strawberry.field(description="Digest of the fields it was drawn from.")
    current: bool = strawberry.field(
        description="False while the offer's fields have changed and a new draft is drawn."
    )
    created_at: datetime = strawberry.field(description="When it was drawn (UTC).")


@strawberry.type(
    description="A written offer's stage changed: in both panes' paneEvents, and on offerStage."
)
class StageChanged:
    cursor: str = strawberry.field(description="Resume after this cursor (`after:`).")
    offer_id: strawberry.ID = strawberry.field(description="The offer.")
    stage: Stage = strawberry.field(description="The new stage.")
    stage_gloss: str = strawberry.field(description="What it means.")
    version: int = strawberry.field(description="The offer's version.")
    at: datetime = strawberry.field(description="When it changed (UTC).")

    @classmethod
    def from_event(cls, event: StageChangedEvent) -> StageChanged:
        stage = Stage(event.stage)
        return cls(
            cursor=event_cursor(event.cursor),
            offer_id=strawberry.ID(str(event.offer_id)),
            stage=stage,
            stage_gloss=GLOSSES[stage],
            version=event.version,
            at=event.at,
        )
