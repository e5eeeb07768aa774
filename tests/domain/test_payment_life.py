"""The payment's life after the hold (``domain/payment_life.py``, PL1-PL7): pure rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from dealroom.domain import payment_life as pl
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.offers import OfferState
from dealroom.domain.payment_life import Signal
from dealroom.domain.seats import Seat

S = OfferStatus


@pytest.mark.parametrize(
    ("status", "signal", "moved"),
    [
        (S.PENDING_PAY_CAPTURE, Signal.AUTHORIZED, S.PAYMENT_HELD),  # PL1
        (S.PAYMENT_HELD, Signal.AUTHORIZED, None),  # a repeat moves nothing
        (S.ACCEPTED, Signal.AUTHORIZED, None),
        (S.PENDING_PAY_CAPTURE, Signal.FAILED, S.ACCEPTED),  # PL2
        (S.PAYMENT_HELD, Signal.FAILED, None),  # late: never backwards
        (S.COMPLETED, Signal.FAILED, None),
        (S.PAYMENT_HELD, Signal.CAPTURED, S.COMPLETED),  # PL3
        (S.PENDING_PAY_CAPTURE, Signal.CAPTURED, None),
        (S.DISPUTED, Signal.CAPTURED, None),
        (S.PAYMENT_HELD, Signal.DISPUTED, S.DISPUTED),  # PL4
        (S.COMPLETED, Signal.DISPUTED, S.DISPUTED),
        (S.WITHDRAWN, Signal.DISPUTED, None),
        (S.DISPUTED, Signal.DISPUTED, None),
    ],
)
def test_provider_facts_move_only_forward(
    status: OfferStatus, signal: Signal, moved: OfferStatus | None
) -> None:
    assert pl.on_signal(status, signal) is moved


def test_every_status_and_signal_has_an_answer_and_none_goes_back_to_an_earlier_stage() -> None:
    order = [S.ACCEPTED, S.PENDING_PAY_CAPTURE, S.PAYMENT_HELD, S.COMPLETED, S.DISPUTED]
    for status in OfferStatus:
        for signal in Signal:
            target = pl.on_signal(status, signal)
            if target is None or signal is Signal.FAILED:
                continue
            assert order.index(target) > order.index(status)


def state(status: OfferStatus) -> OfferState:
    return OfferState(status, datetime(2027, 1, 1, tzinfo=UTC), 1)


def test_pl3_only_the_brand_releases_and_only_a_hold() -> None:
    pl.check_release(state(S.PAYMENT_HELD), Seat.VISITOR)
    pl.check_release(state(S.PAYMENT_HELD), None)  # the release sweep
    with pytest.raises(DomainError) as host:
        pl.check_release(state(S.PAYMENT_HELD), Seat.HOST)
    assert host.value.code is ErrorCode.FORBIDDEN
    with pytest.raises(DomainError) as early:
        pl.check_release(state(S.PENDING_PAY_CAPTURE), Seat.VISITOR)
    assert early.value.details["stage"] == "PENDING_PAY_CAPTURE"


def test_pl5_only_the_talent_cancels_a_hold() -> None:
    pl.check_cancel(state(S.PAYMENT_HELD), Seat.HOST)
    with pytest.raises(DomainError):
        pl.check_cancel(state(S.PAYMENT_HELD), Seat.VISITOR)
    with pytest.raises(DomainError):
        pl.check_cancel(state(S.COMPLETED), Seat.HOST)


def test_pl5_a_refund_never_exceeds_what_remains_captured() -> None:
    assert pl.check_refund(Decimal("10.00"), "USD", Decimal("48.00"), Decimal("0")) == Decimal(
        "10.00"
    )
    with pytest.raises(DomainError) as over:
        pl.check_refund(Decimal("38.01"), "USD", Decimal("48.00"), Decimal("10.00"))
    assert over.value.details["reason"] == "REFUND_EXCEEDS_CAPTURED"
    for bad in ("0", "-1", "1.001", "NaN"):
        with pytest.raises(DomainError):
            pl.check_refund(Decimal(bad), "USD", Decimal("48.00"), Decimal("0"))


@pytest.mark.parametrize(
    ("amount", "currency", "units"),
    [
        ("4800.00", "USD", 480000),
        ("1200", "JPY", 1200),
        ("12.500", "BHD", 12500),
        ("0.01", "EUR", 1),
    ],
)
def test_minor_units_are_exact_both_ways(amount: str, currency: str, units: int) -> None:
    assert pl.to_minor(Decimal(amount), currency) == units
    assert pl.from_minor(units, currency) == Decimal(amount)


def test_minor_units_refuse_what_is_not_exact() -> None:
    with pytest.raises(DomainError):
        pl.to_minor(Decimal("1200.5"), "JPY")
    with pytest.raises(DomainError):
        pl.to_minor(Decimal("1"), "XXX")


def test_pl6_amount_and_currency_must_both_match() -> None:
    assert pl.amount_mismatch(Decimal("4800.00"), "USD", 480000, "usd") is None
    assert pl.amount_mismatch(Decimal("4800.00"), "USD", 479999, "usd") is not None
    assert pl.amount_mismatch(Decimal("4800.00"), "USD", 480000, "eur") is not None
    assert pl.amount_mismatch(Decimal("1200"), "JPY", 1200, "jpy") is None


def test_pl3_release_is_due_days_after_the_last_delivery_date() -> None:
    held = datetime(2027, 1, 1, tzinfo=UTC)
    terms = {"dates": ["2027-03-01", "2027-03-15"]}
    due = datetime(2027, 3, 22, tzinfo=UTC)
    assert not pl.release_due(terms, held, 7, due - timedelta(seconds=1))
    assert pl.release_due(terms, held, 7, due)
    # No date named: the clock starts at the hold.
    assert pl.release_due({}, held, 7, held + timedelta(days=7))
    assert not pl.release_due({"dates": "15 March"}, held, 7, held + timedelta(days=6))
