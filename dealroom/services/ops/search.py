"""Operators' searches (rooms, offers, accounts): every filter bounded and checked before a
query is built (a malformed or oversized one is BAD_USER_INPUT naming the filter), each page
one indexed statement (``persistence/ops_search.py``) plus, for rooms, one for their spend.

Operators only: to anyone else the searches do not exist (NOT_FOUND); a key needs ops:read as
well (scopes K1, K5)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Final

from dealroom.domain.errors import bad_input
from dealroom.domain.offer_stage import Stage
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Offer
from dealroom.persistence.ops_search import (
    OfferQuery,
    OfferStageMatch,
    OpsSearchRepository,
    RoomQuery,
)
from dealroom.services.accounts.identity import Identity
from dealroom.services.ops.reads import OpsRoomRow, Page, _after, require_operator
from dealroom.services.ops.spend import total_spend

MAX_TEXT: Final = 320
"""The longest name, email or handle a search takes (an email's own limit)."""
MAX_HANDLE: Final = 32
MAX_AMOUNT: Final = Decimal("1000000000")
MAX_STAGES: Final = 10
FLAG_LEVELS: Final = frozenset({"low", "medium", "high", "firewall", "payment"})
"""Every level a flag is raised at: Distil's three, and the code's own (``firewall``,
``payment``)."""

OFFER_STAGES: Final[dict[Stage, OfferStageMatch]] = {
    Stage.WRITTEN_AWAITING_BRAND: OfferStageMatch("APPROVED", brand_approved=False),
    Stage.BRAND_ACKED_AWAITING_TALENT: OfferStageMatch("APPROVED", brand_approved=True),
    Stage.BOOKED_AWAITING_PAYMENT: OfferStageMatch("ACCEPTED"),
    Stage.PENDING_PAY_CAPTURE: OfferStageMatch("PENDING_PAY_CAPTURE"),
    Stage.BOOKED_PAYMENT_HELD: OfferStageMatch("PAYMENT_HELD"),
    Stage.COMPLETED: OfferStageMatch("COMPLETED"),
    Stage.DISPUTED: OfferStageMatch("DISPUTED"),
    Stage.DECLINED: OfferStageMatch("REJECTED"),
    Stage.WITHDRAWN: OfferStageMatch("WITHDRAWN"),
}
"""``offer_stage.derive_stage`` read backwards: the row a stage is derived from."""


@dataclass(frozen=True, slots=True)
class RoomSearch:
    """A rooms search as asked, raw (the resolver's input, unparsed)."""

    host_handle: str | None = None
    visitor: str | None = None
    stage: Stage | None = None
    flag_level: str | None = None
    min_spend_usd: str | None = None
    max_spend_usd: str | None = None
    active_from: datetime | None = None
    active_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class OfferSearch:
    stages: tuple[Stage, ...] = ()
    min_fee: str | None = None
    max_fee: str | None = None
    currency: str | None = None


def _text(raw: str | None, field: str, limit: int = MAX_TEXT) -> str | None:
    if raw is None:
        return None
    value = raw.strip().lower()
    if not value:
        return None
    if len(value) > limit:
        raise bad_input(f"{field} is at most {limit} characters.", field)
    return value


def _amount(raw: str | None, field: str) -> Decimal | None:
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if len(text) > 24:
        raise bad_input(f"{field} must be a decimal number.", field)
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise bad_input(f"{field} must be a decimal number.", field) from None
    if not value.is_finite() or not 0 <= value <= MAX_AMOUNT:
        raise bad_input(f"{field} must be between 0 and {MAX_AMOUNT}.", field)
    return value


def _range(
    low: Decimal | None, high: Decimal | None, field: str
) -> tuple[Decimal | None, Decimal | None]:
    if low is not None and high is not None and low > high:
        raise bad_input(f"The {field} range is empty (its minimum is above its maximum).", field)
    return low, high


def _moment(raw: datetime | None) -> datetime | None:
    """A time as the columns hold it; one without a zone is read as UTC."""
    if raw is None:
        return None
    return raw if raw.tzinfo is not None else raw.replace(tzinfo=UTC)


def room_query(search: RoomSearch) -> RoomQuery:
    """The search checked and normalised (BAD_USER_INPUT naming the first bad filter)."""
    flag_level = _text(search.flag_level, "flagLevel", 16)
    if flag_level is not None and flag_level not in FLAG_LEVELS:
        raise bad_input(f"flagLevel is one of {sorted(FLAG_LEVELS)}.", "flagLevel")
    low, high = _range(
        _amount(search.min_spend_usd, "minSpendUsd"),
        _amount(search.max_spend_usd, "maxSpendUsd"),
        "spend",
    )
    active_from, active_before = _moment(search.active_from), _moment(search.active_before)
    if active_from is not None and active_before is not None and active_from >= active_before:
        raise bad_input("activeFrom must be before activeBefore.", "activeFrom")
    return RoomQuery(
        host_handle=_text(search.host_handle, "hostHandle", MAX_HANDLE),
        visitor=_text(search.visitor, "visitor"),
        stage=search.stage,
        flag_level=flag_level,
        min_spend_usd=low,
        max_spend_usd=high,
        active_from=active_from,
        active_before=active_before,
    )


def offer_query(search: OfferSearch) -> OfferQuery:
    if len(search.stages) > MAX_STAGES:
        raise bad_input(f"Name at most {MAX_STAGES} stages.", "stages")
    matches = []
    for stage in dict.fromkeys(search.stages):
        match = OFFER_STAGES.get(stage)
        if match is None:
            raise bad_input(f"No offer is at {stage.value}: it names a room without one.", "stages")
        matches.append(match)
    low, high = _range(_amount(search.min_fee, "minFee"), _amount(search.max_fee, "maxFee"), "fee")
    currency = _text(search.currency, "currency", 3)
    if currency is not None and not (len(currency) == 3 and currency.isalpha()):
        raise bad_input("currency is a three-letter code (USD).", "currency")
    return OfferQuery(
        stages=tuple(matches),
        min_fee=low,
        max_fee=high,
        currency=currency.upper() if currency else None,
    )


async def rooms(
    db: Db, identity: Identity, search: RoomSearch, *, first: int, after: str | None
) -> Page[OpsRoomRow]:
    require_operator(identity)
    query = room_query(search)
    found = await OpsSearchRepository(db).rooms(query, limit=first + 1, after_row=_after(after))
    shown = found[:first]
    totals = await total_spend(db, [r.room.id for r in shown])
    return Page(
        rows=[
            OpsRoomRow(
                room=r.room,
                host_handle=r.host_handle,
                stage=r.stage,
                flag_count=r.flag_count,
                spend=totals.get(r.room.id),
            )
            for r in shown
        ],
        has_next=len(found) > first,
    )


async def offers(
    db: Db, identity: Identity, search: OfferSearch, *, first: int, after: str | None
) -> Page[Offer]:
    require_operator(identity)
    query = offer_query(search)
    found = await OpsSearchRepository(db).offers(query, limit=first + 1, after_row=_after(after))
    return Page(rows=found[:first], has_next=len(found) > first)


async def accounts(
    db: Db, identity: Identity, text: str, *, first: int, after: str | None
) -> Page[tuple[Account, str | None]]:
    """By whole email when ``text`` has an @, else by handle prefix."""
    require_operator(identity)
    value = _text(text, "query")
    if value is None:
        raise bad_input("Name a handle or an email to search for.", "query")
    by_email = "@" in value
    if not by_email and len(value) > MAX_HANDLE:
        raise bad_input(f"A handle is at most {MAX_HANDLE} characters.", "query")
    found = await OpsSearchRepository(db).accounts(
        handle_prefix=None if by_email else value,
        email=value if by_email else None,
        limit=first + 1,
        after_row=_after(after),
    )
    return Page(rows=found[:first], has_next=len(found) > first)
