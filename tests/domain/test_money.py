"""What a brand pays now for an offer (rules P1-P9 of dealroom.domain.money).

The properties check ``quote`` against an independent oracle: the exact due slice as a
``Fraction``, rounded half up by hand. Every input is a Decimal built from integers or
strings; no float appears anywhere (P1).
"""

from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from dealroom.domain import money
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.money import (
    MAX_AMOUNT,
    MINOR_UNITS,
    PLATFORM_FEE_RATE,
    Quote,
    format_amount,
    is_currency,
    quantize,
    quote,
)
from dealroom.domain.reader import read_schedule

D = Decimal


def minor_unit(currency: str) -> Decimal:
    return D(1).scaleb(-MINOR_UNITS[currency])


def amounts(q: Quote) -> list[Decimal]:
    return [q.fee, q.due, q.platform_fee, q.total, q.remaining]


def assert_bad_input(field: str, amount: str, currency: str, percent: str) -> None:
    with pytest.raises(DomainError) as caught:
        quote(D(amount), currency, D(percent))
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.details == {"field": field}


# --- currencies (P1, P2) ---


def test_minor_units_follow_iso_4217() -> None:
    assert {c for c, e in MINOR_UNITS.items() if e == 2} == {
        "USD", "EUR", "GBP", "CAD", "AUD", "CHF", "NZD", "SGD", "SEK", "NOK", "DKK", "INR",
    }  # fmt: skip
    assert {c for c, e in MINOR_UNITS.items() if e == 0} == {"JPY", "KRW"}
    assert {c for c, e in MINOR_UNITS.items() if e == 3} == {"BHD", "KWD", "JOD", "OMR", "TND"}


@pytest.mark.parametrize(
    ("code", "known"),
    [("USD", True), ("JPY", True), ("BHD", True), ("usd", False), ("XXX", False), ("", False)],
)
def test_is_currency_knows_only_upper_case_iso_codes(code: str, known: bool) -> None:
    # P2
    assert is_currency(code) is known


def test_platform_fee_rate_is_twenty_percent() -> None:
    assert D("0.20") == PLATFORM_FEE_RATE


# --- quantize and format_amount (P1, P9) ---


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        pytest.param("0.005", "USD", "0.01", id="usd-half-rounds-up"),
        pytest.param("0.0049", "USD", "0.00", id="usd-below-half-rounds-down"),
        pytest.param("0.015", "USD", "0.02", id="usd-half-up-not-to-even"),
        pytest.param("0.025", "USD", "0.03", id="usd-half-up-not-to-even-2"),
        pytest.param("-0.005", "USD", "-0.01", id="usd-negative-half-away-from-zero"),
        pytest.param("8000", "USD", "8000.00", id="usd-pads-to-two"),
        pytest.param("2.5", "JPY", "3", id="jpy-half-rounds-up"),
        pytest.param("1E+3", "JPY", "1000", id="jpy-exponent-form"),
        pytest.param("0.0005", "BHD", "0.001", id="bhd-half-rounds-up"),
        pytest.param("12.5", "BHD", "12.500", id="bhd-pads-to-three"),
    ],
)
def test_quantize_rounds_half_up_to_the_minor_unit(
    amount: str, currency: str, expected: str
) -> None:
    result = quantize(D(amount), currency)
    assert result == D(expected)
    assert result.as_tuple().exponent == -MINOR_UNITS[currency]


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        ("4800", "USD", "4800.00"),
        ("1200", "JPY", "1200"),
        ("12.5", "BHD", "12.500"),
        ("1E+6", "USD", "1000000.00"),
        ("0.005", "USD", "0.01"),
    ],
)
def test_format_amount_is_plain_with_the_minor_digits(
    amount: str, currency: str, expected: str
) -> None:
    assert format_amount(D(amount), currency) == expected


def test_quantize_rejects_an_unknown_currency() -> None:
    with pytest.raises(DomainError) as caught:
        quantize(D(1), "XXX")
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.details == {"field": "currency"}


# --- quote: exact cases ---


@pytest.mark.parametrize(
    ("amount", "currency", "percent", "due", "platform_fee", "total", "remaining"),
    [
        pytest.param("8000", "USD", "50", "4000.00", "800.00", "4800.00", "4000.00", id="usd"),
        pytest.param("8000", "EUR", "100", "8000.00", "1600.00", "9600.00", "0.00", id="eur-all"),
        pytest.param("10.05", "USD", "50", "5.03", "1.01", "6.04", "5.02", id="usd-due-half-up"),
        pytest.param("0.05", "USD", "50", "0.03", "0.01", "0.04", "0.02", id="usd-not-to-even"),
        pytest.param("0.01", "USD", "50", "0.01", "0.00", "0.01", "0.00", id="usd-0.005-up"),
        pytest.param("0.03", "USD", "50", "0.02", "0.00", "0.02", "0.01", id="usd-0.015-up"),
        pytest.param("1001", "JPY", "50", "501", "100", "601", "500", id="jpy-half-up"),
        pytest.param("3", "JPY", "50", "2", "0", "2", "1", id="jpy-fee-rounds-to-zero"),
        pytest.param(
            "100000", "JPY", "33.33", "33330", "6666", "39996", "66670", id="jpy-fraction"
        ),
        pytest.param("1200", "KRW", "25", "300", "60", "360", "900", id="krw"),
        pytest.param("12.5", "BHD", "100", "12.500", "2.500", "15.000", "0.000", id="bhd-all"),
        pytest.param(
            "1.234", "KWD", "12.5", "0.154", "0.031", "0.185", "1.080", id="kwd-three-digits"
        ),
        pytest.param(
            "999999999999999.99",
            "USD",
            "33.33",
            "333300000000000.00",
            "66660000000000.00",
            "399960000000000.00",
            "666699999999999.99",
            id="usd-largest-fee-stays-exact",
        ),
    ],
)
def test_quote_exact_cases(
    amount: str,
    currency: str,
    percent: str,
    due: str,
    platform_fee: str,
    total: str,
    remaining: str,
) -> None:
    q = quote(D(amount), currency, D(percent))
    assert q.to_json() == {
        "currency": currency,
        "fee": format_amount(D(amount), currency),
        "duePercent": percent,
        "due": due,
        "platformFee": platform_fee,
        "total": total,
        "remaining": remaining,
    }


def test_quote_to_json_is_all_strings() -> None:
    assert quote(D("8000"), "USD", D("50")).to_json() == {
        "currency": "USD",
        "fee": "8000.00",
        "duePercent": "50",
        "due": "4000.00",
        "platformFee": "800.00",
        "total": "4800.00",
        "remaining": "4000.00",
    }


@pytest.mark.parametrize(
    ("percent", "shown"), [("50.00", "50"), ("12.50", "12.5"), ("100", "100"), ("1E+2", "100")]
)
def test_to_json_shows_the_percent_without_trailing_zeros(percent: str, shown: str) -> None:
    assert quote(D("8000"), "USD", D(percent)).to_json()["duePercent"] == shown


@pytest.mark.parametrize(
    ("amount", "currency"), [("8000.500", "USD"), ("1E+3", "JPY"), ("12.5000", "BHD")]
)
def test_quote_fee_takes_the_currency_exponent(amount: str, currency: str) -> None:
    # P1, P3: trailing zeros are not extra precision.
    q = quote(D(amount), currency, D("50"))
    assert q.fee == D(amount)
    assert q.fee.as_tuple().exponent == -MINOR_UNITS[currency]


def test_quote_ignores_the_callers_decimal_context() -> None:
    # P9
    expected = quote(D("123456.78"), "USD", D("33.33"))
    with localcontext() as ctx:
        ctx.prec = 3
        ctx.rounding = ROUND_FLOOR
        assert quote(D("123456.78"), "USD", D("33.33")) == expected


# --- quote: rejected inputs ---


@pytest.mark.parametrize("currency", ["usd", "XXX", "", "US D"])
def test_quote_rejects_an_unknown_currency(currency: str) -> None:
    # P2
    assert_bad_input("currency", "8000", currency, "50")


@pytest.mark.parametrize(
    ("amount", "currency"),
    [
        pytest.param("0", "USD", id="zero"),
        pytest.param("-0", "USD", id="negative-zero"),
        pytest.param("-1", "USD", id="negative"),
        pytest.param("NaN", "USD", id="nan"),
        pytest.param("sNaN", "USD", id="signalling-nan"),
        pytest.param("Infinity", "USD", id="infinity"),
        pytest.param("8000.001", "USD", id="usd-three-decimals"),
        pytest.param("0.5", "JPY", id="jpy-fraction"),
        pytest.param("1.0001", "BHD", id="bhd-four-decimals"),
        pytest.param(str(MAX_AMOUNT), "USD", id="at-max"),
        pytest.param("1E+999999", "USD", id="huge"),
    ],
)
def test_quote_rejects_a_fee_that_is_not_exact_positive_money(amount: str, currency: str) -> None:
    # P3: never rounded into a different fee.
    assert_bad_input("amount", amount, currency, "50")


@pytest.mark.parametrize("percent", ["0", "-0", "-1", "100.01", "101", "NaN", "Infinity"])
def test_quote_rejects_a_percent_outside_zero_to_a_hundred(percent: str) -> None:
    # P4
    assert_bad_input("duePercent", "8000", "USD", percent)


@pytest.mark.parametrize(
    ("amount", "currency", "percent"),
    [
        pytest.param("0.01", "USD", "49.99", id="usd-just-below-half-a-cent"),
        pytest.param("1", "JPY", "49", id="jpy-below-half-a-yen"),
        pytest.param("0.001", "BHD", "10", id="bhd-a-tenth-of-a-fils"),
        pytest.param("8000", "USD", "0.00001", id="tiny-percent"),
    ],
)
def test_quote_rejects_a_due_slice_that_rounds_to_zero(
    amount: str, currency: str, percent: str
) -> None:
    # P6
    assert_bad_input("duePercent", amount, currency, percent)


# --- properties ---

currencies = st.sampled_from(sorted(MINOR_UNITS))
percents = st.integers(min_value=1, max_value=10_000).map(lambda n: D(n).scaleb(-2))
"""(0, 100] with up to two decimals."""


@st.composite
def fees(draw: st.DrawFn) -> tuple[str, Decimal]:
    """A currency and a valid fee in it, often tiny so that P6 is exercised."""
    currency = draw(currencies)
    most = int(MAX_AMOUNT) * 10 ** MINOR_UNITS[currency] - 1
    minor = draw(
        st.integers(min_value=1, max_value=1_000) | st.integers(min_value=1, max_value=most)
    )
    return currency, D(minor).scaleb(-MINOR_UNITS[currency])


def oracle_due(fee: Decimal, currency: str, percent: Decimal) -> Fraction:
    """The due slice in minor units, from exact fractions and rounded half up by hand."""
    exact_minor = Fraction(fee) * Fraction(percent) / 100 * 10 ** MINOR_UNITS[currency]
    return Fraction(math.floor(exact_minor + Fraction(1, 2)))


@settings(max_examples=500)
@given(fee=fees(), percent=percents)
@example(fee=("USD", D("0.01")), percent=D("50"))
@example(fee=("USD", D("0.01")), percent=D("49.99"))
@example(fee=("JPY", D("1")), percent=D("50"))
@example(fee=("BHD", D("0.001")), percent=D("100"))
def test_quote_matches_the_exact_half_up_oracle(fee: tuple[str, Decimal], percent: Decimal) -> None:
    # P5, P6: a quote exists exactly when the exact due slice is at least half a minor unit.
    currency, amount = fee
    expected_minor = oracle_due(amount, currency, percent)
    if expected_minor == 0:
        with pytest.raises(DomainError) as caught:
            quote(amount, currency, percent)
        assert caught.value.code is ErrorCode.BAD_USER_INPUT
        assert caught.value.details == {"field": "duePercent"}
        return
    q = quote(amount, currency, percent)
    assert Fraction(q.due) == expected_minor / 10 ** MINOR_UNITS[currency]


@settings(max_examples=500)
@given(fee=fees(), percent=percents)
def test_quote_invariants(fee: tuple[str, Decimal], percent: Decimal) -> None:
    currency, amount = fee
    assume(oracle_due(amount, currency, percent) > 0)  # P6 is the oracle test's
    q = quote(amount, currency, percent)
    unit = minor_unit(currency)
    assert q.currency == currency
    assert q.fee == amount
    assert q.due_percent == percent
    assert q.due + q.remaining == q.fee  # P8
    assert q.total == q.due + q.platform_fee  # P8
    assert 0 < q.due <= q.fee  # P4, P6
    assert q.remaining >= 0
    assert q.platform_fee >= 0  # P7: zero only for a tiny due slice
    assert abs(q.platform_fee - q.due * PLATFORM_FEE_RATE) <= unit / 2  # P7
    for value in amounts(q):  # P1
        assert type(value) is Decimal
        assert value.as_tuple().exponent == -MINOR_UNITS[currency]
    for key, text in q.to_json().items():
        assert type(text) is str, key


@settings(max_examples=300)
@given(fee=fees(), low=percents, high=percents)
def test_quote_is_monotonic_in_the_percent(
    fee: tuple[str, Decimal], low: Decimal, high: Decimal
) -> None:
    currency, amount = fee
    low, high = sorted((low, high))
    assume(oracle_due(amount, currency, low) > 0)  # P6
    smaller = quote(amount, currency, low)
    larger = quote(amount, currency, high)  # a larger slice never rounds to zero
    assert smaller.due <= larger.due
    assert smaller.platform_fee <= larger.platform_fee
    assert smaller.total <= larger.total
    assert smaller.remaining >= larger.remaining


@settings(max_examples=200)
@given(fee=fees(), percent=percents)
def test_quote_round_trips_through_json(fee: tuple[str, Decimal], percent: Decimal) -> None:
    currency, amount = fee
    assume(oracle_due(amount, currency, percent) > 0)  # P6
    q = quote(amount, currency, percent)
    data = q.to_json()
    assert D(data["fee"]) == q.fee
    assert D(data["duePercent"]) == q.due_percent
    assert D(data["due"]) == q.due
    assert D(data["platformFee"]) == q.platform_fee
    assert D(data["total"]) == q.total
    assert D(data["remaining"]) == q.remaining


@settings(max_examples=200)
@given(fee=fees(), extra=st.integers(min_value=1, max_value=9), percent=percents)
def test_quote_rejects_a_fee_finer_than_the_minor_unit(
    fee: tuple[str, Decimal], extra: int, percent: Decimal
) -> None:
    # P3
    currency, amount = fee
    finer = amount + D(extra).scaleb(-MINOR_UNITS[currency] - 1)
    with pytest.raises(DomainError) as caught:
        quote(finer, currency, percent)
    assert caught.value.code is ErrorCode.BAD_USER_INPUT
    assert caught.value.details == {"field": "amount"}


# --- P10, P11: what people read ------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "currency", "locale", "shown"),
    [
        ("7350", "USD", None, "$7,350"),
        ("7350.00", "USD", None, "$7,350"),
        ("1470.5", "USD", None, "$1,470.50"),
        ("1000.50", "JPY", None, "¥1,000.5"),  # never a digit rounded away
        ("7350", "EUR", "de_DE", "7.350\xa0€"),
        ("7350", "USD", "xx_NOPE", "$7,350"),  # a locale Babel does not know: the default
    ],
)
def test_p10_one_format_for_people(
    amount: str, currency: str, locale: str | None, shown: str
) -> None:
    assert money.display(Decimal(amount), currency, locale) == shown


@pytest.mark.parametrize(("fee", "percent"), [("7350", "100"), ("1500", "50"), ("2500", "33.33")])
def test_p11_the_price_line_names_the_fee_and_reads_as_no_schedule(fee: str, percent: str) -> None:
    q = money.quote(Decimal(fee), "USD", Decimal(percent))
    line = money.pay_now_line(q)
    assert "platform fee" in line
    for part in (q.due, q.platform_fee, q.total):
        assert money.display(part, "USD") in line  # the card's figures, formatted alike
    assert read_schedule(line) is None  # Offer-Gen never takes it for the brand's schedule
    assert "booked" not in line
