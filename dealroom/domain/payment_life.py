"""The life of a payment after the brand pays: hold, release, refund, dispute (pure, no I/O).

The stage stays derived from the offers row (``offer_stage.py``); these rules say which
provider facts move that row, from where, to where. A provider fact is what the provider
itself said (a verified webhook, or its answer to our own server-to-server call), never a
client's claim. Every move names the statuses it starts from, so a fact arriving late or twice
never moves a stage backwards.

- PL1 An authorization (the funds are secured, held until release) moves PENDING_PAY_CAPTURE to
      PAYMENT_HELD. Nothing else moves on it.
- PL2 A failure (a decline, a cancelled intent) moves PENDING_PAY_CAPTURE back to ACCEPTED
      (awaiting payment, the reason recorded); after the hold it moves nothing.
- PL3 Release: the brand confirms delivery, or ``auto_release_days`` pass after the last
      delivery date. Only from PAYMENT_HELD, only by the brand (or the release sweep); the
      capture moves the offer to COMPLETED.
- PL4 A dispute moves PAYMENT_HELD or COMPLETED to DISPUTED; anywhere else nothing.
- PL5 The talent cancels a held booking before delivery: the whole hold goes back to the brand
      and the offer is WITHDRAWN, the refund recorded. After capture, a refund may be partial
      and never exceeds what was captured less what was already refunded; the stage stays.
- PL6 The provider's amount and currency must equal the payment's total in minor units and
      its currency; a mismatch is refused (nothing moves) and flagged to operators.
- PL7 What is owed to the host for a captured payment is the captured amount less the
      platform fee, i.e. the due slice (``money.quote``'s ``due``): the fee is computed once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any, assert_never

from dealroom.domain.errors import DomainError, ErrorCode, bad_input
from dealroom.domain.money import MINOR_UNITS, is_currency, quantize
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.offers import OfferState, Role, conflict, role_of
from dealroom.domain.seats import Seat


class Signal(StrEnum):
    """A fact the provider stated about a payment."""

    AUTHORIZED = "authorized"
    FAILED = "failed"
    CAPTURED = "captured"
    DISPUTED = "disputed"


def on_signal(status: OfferStatus, signal: Signal) -> OfferStatus | None:
    """PL1, PL2, PL3, PL4: the offer status a provider fact moves ``status`` to, or None when
    it moves nothing (a duplicate, a late fact, a fact about another stage)."""
    match signal:
        case Signal.AUTHORIZED:
            return OfferStatus.PAYMENT_HELD if status is OfferStatus.PENDING_PAY_CAPTURE else None
        case Signal.FAILED:
            return OfferStatus.ACCEPTED if status is OfferStatus.PENDING_PAY_CAPTURE else None
        case Signal.CAPTURED:
            return OfferStatus.COMPLETED if status is OfferStatus.PAYMENT_HELD else None
        case Signal.DISPUTED:
            if status in (OfferStatus.PAYMENT_HELD, OfferStatus.COMPLETED):
                return OfferStatus.DISPUTED
            return None
        case _:
            assert_never(signal)


def check_release(state: OfferState, seat: Seat | None) -> None:
    """PL3: ``seat`` None is the release sweep acting on the brand's behalf."""
    if seat is not None and role_of(seat) is not Role.BRAND:
        raise DomainError(ErrorCode.FORBIDDEN, "Only the brand confirms delivery.")
    if state.status is not OfferStatus.PAYMENT_HELD:
        raise conflict(f"Delivery cannot be confirmed at {state.stage.value}.", state)


def check_cancel(state: OfferState, seat: Seat) -> None:
    """PL5: the talent cancels a held booking before delivery."""
    if role_of(seat) is not Role.TALENT:
        raise DomainError(ErrorCode.FORBIDDEN, "Only the talent cancels a paid booking.")
    if state.status is not OfferStatus.PAYMENT_HELD:
        raise conflict(f"The booking cannot be cancelled at {state.stage.value}.", state)


def check_refund(amount: Decimal, currency: str, captured: Decimal, refunded: Decimal) -> Decimal:
    """PL5: a refund after capture, exact in the currency's minor units, positive and within
    what remains captured; returns the amount at the currency's exponent."""
    if not amount.is_finite() or amount <= 0:
        raise bad_input("The refund must be a positive amount.", "amount")
    exact = quantize(amount, currency)
    if exact != amount:
        raise bad_input(f"The refund has more decimal places than {currency} allows.", "amount")
    remaining = captured - refunded
    if exact > remaining:
        raise DomainError(
            ErrorCode.BAD_USER_INPUT,
            f"The refund is larger than what remains captured ({remaining} {currency}).",
            field="amount",
            reason="REFUND_EXCEEDS_CAPTURED",
        )
    return exact


def to_minor(amount: Decimal, currency: str) -> int:
    """An exact amount in ``currency`` as the provider's integer of minor units (P1): 8000.00
    USD is 800000, 1200 JPY is 1200. An amount not exact in the minor unit is refused."""
    if not is_currency(currency):
        raise bad_input(f"Unknown currency {currency!r}.", "currency")
    exact = quantize(amount, currency)
    if exact != amount:
        raise bad_input(f"{amount} is not exact in {currency}'s minor units.", "amount")
    return int(exact.scaleb(MINOR_UNITS[currency]))


def from_minor(units: int, currency: str) -> Decimal:
    """The inverse of ``to_minor``: an integer of minor units as the exact amount."""
    if not is_currency(currency):
        raise bad_input(f"Unknown currency {currency!r}.", "currency")
    return quantize(Decimal(units).scaleb(-MINOR_UNITS[currency]), currency)


@dataclass(frozen=True, slots=True)
class Mismatch:
    """PL6: what the provider stated against what the payment recorded."""

    expected: str
    stated: str


def amount_mismatch(
    total: Decimal, currency: str, stated_units: int, stated_currency: str
) -> Mismatch | None:
    """PL6: None when the provider's amount and currency are the payment's own."""
    expected = f"{to_minor(total, currency)} {currency.lower()}"
    stated = f"{stated_units} {stated_currency.lower()}"
    return None if expected == stated else Mismatch(expected, stated)


def last_delivery_date(terms: dict[str, Any]) -> date | None:
    """The latest ISO date named in the offer's ``dates`` (a string, a list, or a mapping of
    them); None when the offer names none."""
    found: list[date] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            for token in value.replace(",", " ").split():
                try:
                    found.append(date.fromisoformat(token[:10]))
                except ValueError:
                    continue
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(terms.get("dates"))
    return max(found) if found else None


def release_due(terms: dict[str, Any], held_at: datetime, days: int, now: datetime) -> bool:
    """PL3: whether the auto-release time has come: ``days`` after the last delivery date, or
    after the hold when the offer names no date."""
    last = last_delivery_date(terms)
    start = held_at if last is None else datetime.combine(last, time.min, tzinfo=held_at.tzinfo)
    return now >= start + timedelta(days=days)
