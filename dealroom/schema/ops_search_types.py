"""GraphQL types of the operators' searches (``schema/ops_search.py``): what they take and what
they find."""

from __future__ import annotations

import uuid
from datetime import datetime

import strawberry

from dealroom.domain.offer_stage import OfferRow, OfferStatus, Stage, derive_stage
from dealroom.persistence import models


@strawberry.input(description="Which rooms to find; every field narrows, none is required.")
class OpsRoomSearch:
    host_handle: str | None = strawberry.field(default=None, description="The host's handle.")
    visitor: str | None = strawberry.field(
        default=None,
        description="A visitor's name (any case), email or handle, whole (not a part of one).",
    )
    stage: Stage | None = strawberry.field(default=None, description="The live offer stage.")
    flag_level: str | None = strawberry.field(
        default=None,
        description="Rooms with a flag at this level: low, medium, high, firewall or payment.",
    )
    min_spend_usd: str | None = strawberry.field(
        default=None, description="At least this much priced spend (USD, decimal string)."
    )
    max_spend_usd: str | None = strawberry.field(
        default=None, description="At most this much priced spend (USD, decimal string)."
    )
    active_from: datetime | None = strawberry.field(
        default=None, description="Last activity at or after this time (UTC if no zone)."
    )
    active_before: datetime | None = strawberry.field(
        default=None, description="Last activity before this time (UTC if no zone)."
    )


@strawberry.input(description="Which offers to find; every field narrows.")
class OpsOfferSearch:
    stages: list[Stage] | None = strawberry.field(
        default=None,
        description="Offers at any of these stages (up to 10; NO_WRITTEN_OFFER names no offer).",
    )
    min_fee: str | None = strawberry.field(
        default=None, description="A written fee of at least this (decimal string)."
    )
    max_fee: str | None = strawberry.field(
        default=None, description="A written fee of at most this (decimal string)."
    )
    currency: str | None = strawberry.field(
        default=None, description="The fee's currency (USD); amounts compare within one."
    )


@strawberry.type(description="A written offer found by a search.")
class OpsOfferHit:
    id: strawberry.ID = strawberry.field(description="The offer id.")
    room_id: strawberry.ID = strawberry.field(description="Its room (opsRoom reads it whole).")
    status: str = strawberry.field(description="The offers row's status.")
    stage: Stage = strawberry.field(description="The stage derived from it.")
    version: int = strawberry.field(description="The offer's version.")
    fee: str | None = strawberry.field(description="The written fee's amount, if written.")
    currency: str | None = strawberry.field(description="The written fee's currency.")
    created_at: datetime = strawberry.field(description="When it was drawn (UTC).")

    @classmethod
    def from_row(cls, row: models.Offer) -> OpsOfferHit:
        fee = (row.terms or {}).get("fee")
        fee = fee if isinstance(fee, dict) else {}
        amount, currency = fee.get("amount"), fee.get("currency")
        return cls(
            id=strawberry.ID(str(row.id)),
            room_id=strawberry.ID(str(row.room_id)),
            status=row.status,
            stage=derive_stage(OfferRow(OfferStatus(row.status), row.brand_approved_at)),
            version=row.version,
            fee=str(amount) if amount is not None else None,
            currency=str(currency) if currency is not None else None,
            created_at=row.created_at,
        )


@strawberry.type(description="A page of offers, newest first.")
class OpsOfferHitConnection:
    nodes: list[OpsOfferHit] = strawberry.field(description="The offers.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.type(description="An account found by a search (opsAccount reads it whole).")
class OpsAccountHit:
    id: strawberry.ID = strawberry.field(description="The account id.")
    handle: str = strawberry.field(description="The handle.")
    display_name: str = strawberry.field(description="The display name.")
    email: str | None = strawberry.field(description="Its sign-in email, if it has one.")
    is_operator: bool = strawberry.field(description="Whether it is an operator.")
    created_at: datetime = strawberry.field(description="When it signed up (UTC).")
    _id: strawberry.Private[uuid.UUID]

    @classmethod
    def from_row(cls, row: models.Account, email: str | None) -> OpsAccountHit:
        return cls(
            id=strawberry.ID(str(row.id)),
            handle=row.handle,
            display_name=row.display_name,
            email=email,
            is_operator=row.is_operator,
            created_at=row.created_at,
            _id=row.id,
        )


@strawberry.type(description="A page of accounts, newest first.")
class OpsAccountHitConnection:
    nodes: list[OpsAccountHit] = strawberry.field(description="The accounts.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")
