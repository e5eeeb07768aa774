"""Operators' searches: rooms by host, visitor, stage, flag level, spend and last activity;
offers by stage and fee; accounts by handle or email. Each page is one statement, newest first
on ``(timestamp, id)`` (``paging``), and every filter is answered by an index (migration 0019):
rooms walk ``ix_rooms_activity`` (or ``ix_rooms_host_activity`` for one host), a visitor is
found by ``ix_accounts_name_lower``, the credentials' unique email or the unique handle, then
``ix_participants_account``; flags by ``ix_flags_level_room``; a room's spend sums its calls by
``ix_model_calls_room`` and its stage reads its latest stage change by
``uq_offer_events_room_seq``; offers walk ``ix_offers_status_created`` (by stage) or
``ix_offers_created``: the fee lives in the written terms (JSON), so a fee range is a filter on
that walk, as dear as the range is rare."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, Numeric, ScalarSelect, and_, cast, func, or_, select

from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    Credential,
    Flag,
    ModelCall,
    Offer,
    Participant,
    Room,
)
from dealroom.persistence.ops import OpsRoomFound, _flags_of_room, _room_found, _stage_of_room
from dealroom.persistence.paging import After, after


@dataclass(frozen=True, slots=True)
class RoomQuery:
    """Every field narrows; None leaves it open. Strings are already normalised."""

    host_handle: str | None = None
    visitor: str | None = None
    """A visitor's name (any case), email or handle, matched whole."""
    stage: Stage | None = None
    flag_level: str | None = None
    min_spend_usd: Decimal | None = None
    max_spend_usd: Decimal | None = None
    active_from: datetime | None = None
    """Last activity at or after."""
    active_before: datetime | None = None
    """Last activity before."""


@dataclass(frozen=True, slots=True)
class OfferStageMatch:
    """One stage as the offers row stores it (``offer_stage.derive_stage`` read backwards)."""

    status: str
    brand_approved: bool | None = None
    """For APPROVED: whether the brand has stamped this version (None: either)."""


@dataclass(frozen=True, slots=True)
class OfferQuery:
    stages: tuple[OfferStageMatch, ...] = ()
    min_fee: Decimal | None = None
    max_fee: Decimal | None = None
    currency: str | None = None


def _visitor_accounts(visitor: str) -> ColumnElement[bool]:
    """The accounts a visitor search names: by name (any case), email or handle."""
    by_name = select(Account.id).where(func.lower(Account.display_name) == visitor)
    by_email = select(Credential.account_id).where(Credential.email == visitor)
    by_handle = select(Account.id).where(Account.handle == visitor)
    return Participant.account_id.in_(by_name.union(by_email, by_handle).scalar_subquery())


def _spend_of_room() -> ScalarSelect[Any]:
    return (
        select(func.coalesce(func.sum(ModelCall.price_usd), 0))
        .where(ModelCall.room_id == Room.id)
        .scalar_subquery()
    )


def _fee_amount() -> ColumnElement[Decimal]:
    """The written fee (``terms.fee.amount``, a plain decimal string ``money.format_amount``
    writes) as a number."""
    return cast(Offer.terms["fee"]["amount"].as_string(), Numeric(18, 4))


class OpsSearchRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def rooms(
        self, query: RoomQuery, *, limit: int, after_row: After | None
    ) -> list[OpsRoomFound]:
        """Rooms by last activity, most recent first, with host handle, stage and flag count."""
        statement = (
            select(Room, Account.handle, _stage_of_room().label("stage"), _flags_of_room())
            .join(Account, Account.id == Room.host_account_id)
            .order_by(Room.last_activity_at.desc(), Room.id.desc())
            .limit(limit)
        )
        statement = after(statement, Room.last_activity_at, Room.id, after_row)
        if query.host_handle is not None:
            statement = statement.where(Account.handle == query.host_handle)
        if query.visitor is not None:
            # The visitor side by key: ``visitor`` and its teammates, never the host's team.
            on_visitor_side = or_(
                Participant.key == Seat.VISITOR.value,
                Participant.key.startswith(f"{Seat.VISITOR.value}_", autoescape=True),
            )
            visited = select(Participant.room_id).where(
                _visitor_accounts(query.visitor), on_visitor_side
            )
            statement = statement.where(Room.id.in_(visited.scalar_subquery()))
        if query.stage is not None:
            statement = statement.where(_stage_of_room() == query.stage.value)
        if query.flag_level is not None:
            flagged = select(Flag.room_id).where(Flag.level == query.flag_level)
            statement = statement.where(Room.id.in_(flagged.scalar_subquery()))
        if query.min_spend_usd is not None:
            statement = statement.where(_spend_of_room() >= query.min_spend_usd)
        if query.max_spend_usd is not None:
            statement = statement.where(_spend_of_room() <= query.max_spend_usd)
        if query.active_from is not None:
            statement = statement.where(Room.last_activity_at >= query.active_from)
        if query.active_before is not None:
            statement = statement.where(Room.last_activity_at < query.active_before)
        return [_room_found(row) for row in (await self.db.execute(statement)).all()]

    async def offers(
        self, query: OfferQuery, *, limit: int, after_row: After | None
    ) -> list[Offer]:
        """Offers, newest first."""
        statement = select(Offer).order_by(Offer.created_at.desc(), Offer.id.desc()).limit(limit)
        statement = after(statement, Offer.created_at, Offer.id, after_row)
        if query.stages:
            statement = statement.where(or_(*(_stage_match(m) for m in query.stages)))
        if query.min_fee is not None:
            statement = statement.where(_fee_amount() >= query.min_fee)
        if query.max_fee is not None:
            statement = statement.where(_fee_amount() <= query.max_fee)
        if query.currency is not None:
            statement = statement.where(
                Offer.terms["fee"]["currency"].as_string() == query.currency
            )
        return list(await self.db.scalars(statement))

    async def accounts(
        self,
        *,
        handle_prefix: str | None,
        email: str | None,
        limit: int,
        after_row: After | None,
    ) -> list[tuple[Account, str | None]]:
        """Accounts, newest first, each with its email (None for one without a password):
        by handle prefix (the unique handle index walks the prefix's range) or whole email."""
        statement = (
            select(Account, Credential.email)
            .outerjoin(Credential, Credential.account_id == Account.id)
            .order_by(Account.created_at.desc(), Account.id.desc())
            .limit(limit)
        )
        statement = after(statement, Account.created_at, Account.id, after_row)
        if handle_prefix is not None:
            # The range is what an index walks under any collation; LIKE keeps it exact.
            escaped = handle_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            statement = statement.where(
                Account.handle >= handle_prefix,
                Account.handle < handle_prefix + "\U0010ffff",
                Account.handle.like(escaped + "%", escape="\\"),
            )
        if email is not None:
            statement = statement.where(Credential.email == email)
        rows = (await self.db.execute(statement)).all()
        return [(row[0], row[1]) for row in (tuple(r) for r in rows)]


def _stage_match(match: OfferStageMatch) -> ColumnElement[bool]:
    condition = Offer.status == match.status
    if match.brand_approved is None:
        return condition
    stamped = Offer.brand_approved_at.is_not(None)
    return and_(condition, stamped if match.brand_approved else ~stamped)
