"""What a brand pays now for a written offer: the due slice of the fee plus the platform fee.

An offer's fee is a Decimal amount in an ISO 4217 currency; its payment schedule says what
percentage of that fee is due now. The brand pays that due slice plus a platform fee of
``PLATFORM_FEE_RATE`` on it. Pure and exact: no I/O, no float, and no dependence on the
caller's decimal context.

Numbered rules, cited by the code and tests that depend on them:

- P1  Money is ``Decimal``, never float. Every amount a ``Quote`` holds carries exactly the
      currency's minor-unit exponent (``MINOR_UNITS``, ISO 4217): ``8000.00`` USD, ``1200``
      JPY, ``12.500`` BHD.
- P2  The currency is a code ``MINOR_UNITS`` knows, written as ISO 4217 writes it
      (upper case); anything else is rejected.
- P3  The fee is finite, positive, below ``MAX_AMOUNT`` and already exact in the currency's
      minor units (``8000``, ``8000.5`` and ``8000.500`` are USD fees; ``8000.505`` is not).
      A fee that cannot be paid exactly is rejected, never rounded: rounding it here would
      quietly charge a different fee from the one the offer states.
- P4  The due percentage is finite and 0 < p <= 100, at any precision.
- P5  ``due`` is ``fee * p / 100`` computed exactly, then rounded once, half up, to the minor
      unit (never rounded twice).
- P6  A due slice that rounds to zero is rejected: there is nothing to charge.
- P7  ``platform_fee`` is ``due * PLATFORM_FEE_RATE`` rounded once, half up, to the minor
      unit. It may be zero when the due slice is tiny (1 JPY pays no platform fee).
- P8  ``total = due + platform_fee`` and ``remaining = fee - due``, both exact, so
      ``due + remaining == fee`` always and the schedule never loses or invents a minor unit.
- P9  Rounding is ROUND_HALF_UP in this module's own context, whatever context the caller
      has set, so the same inputs always give the same quote.
- P11 The price is told whole, once, before the written offer is drawn: ``pay_now_line`` is the
      brand's sentence (the due slice, the platform fee by name and rate, the total) and the
      offer card shows the same ``Quote`` through ``display``, so the figures read the same.
- P10 Every amount a person reads (chat, the offer card, the agreement draft, emails, the ops
      pages, webhook display fields) is written by ``display`` alone: Babel's
      ``format_currency`` in the reader's locale (``en_US`` by default), with the currency's
      minor digits unless the amount is whole (``$7,350``, ``$1,470.50``, ``¥1,200``). Data
      fields keep the plain decimal string of ``format_amount``.
"""

from __future__ import annotations

from copy import copy
from dataclasses import dataclass
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
)
from functools import lru_cache
from typing import Final

from babel import Locale, UnknownLocaleError
from babel.numbers import NumberPattern, format_currency

from dealroom.domain.errors import bad_input

MINOR_UNITS: Final[dict[str, int]] = {
    "USD": 2,
    "EUR": 2,
    "GBP": 2,
    "CAD": 2,
    "AUD": 2,
    "CHF": 2,
    "NZD": 2,
    "SGD": 2,
    "SEK": 2,
    "NOK": 2,
    "DKK": 2,
    "INR": 2,
    "JPY": 0,
    "KRW": 0,
    "BHD": 3,
    "KWD": 3,
    "JOD": 3,
    "OMR": 3,
    "TND": 3,
}
"""P1, P2: the ISO 4217 exponent of each currency a fee may be written in."""

PLATFORM_FEE_RATE: Final = Decimal("0.20")
"""P7: the platform's share, charged on top of the due slice."""

MAX_AMOUNT: Final = Decimal(10) ** 15
"""P3: a fee is below this many major units; it bounds the work a hostile input can cause."""

# P5, P9: with the largest precision every multiply, add, subtract and scale is exact, so the
# explicit ``quantize`` calls are the only places a value is ever rounded. No division is done
# here (an inexact one would not terminate at this precision).
_EXACT: Final = Context(
    prec=MAX_PREC,
    Emax=MAX_EMAX,
    Emin=MIN_EMIN,
    rounding=ROUND_HALF_UP,
    traps=[InvalidOperation, DivisionByZero, Overflow],
)

_HUNDRED: Final = Decimal(100)


@dataclass(frozen=True, slots=True)
class Quote:
    """What the brand pays now, and what of the fee is still to come."""

    currency: str
    fee: Decimal
    """The offer's whole fee, at the currency's exponent."""
    due_percent: Decimal
    """The share of ``fee`` due now, as given."""
    due: Decimal
    """The due slice of ``fee``."""
    platform_fee: Decimal
    """The platform's fee on ``due``."""
    total: Decimal
    """What the brand is charged now: ``due + platform_fee``."""
    remaining: Decimal
    """What of ``fee`` is still to be paid later: ``fee - due``."""

    def to_json(self) -> dict[str, str]:
        """Every number as a plain decimal string (never a JSON number, which readers parse
        as a float)."""
        return {
            "currency": self.currency,
            "fee": format_amount(self.fee, self.currency),
            "duePercent": format(self.due_percent.normalize(_EXACT), "f"),
            "due": format_amount(self.due, self.currency),
            "platformFee": format_amount(self.platform_fee, self.currency),
            "total": format_amount(self.total, self.currency),
            "remaining": format_amount(self.remaining, self.currency),
        }


def is_currency(code: str) -> bool:
    """P2: whether ``code`` is a currency a fee may be written in."""
    return code in MINOR_UNITS


def quantize(amount: Decimal, currency: str) -> Decimal:
    """``amount`` rounded half up to ``currency``'s minor unit (P1, P9)."""
    return amount.quantize(_minor_unit(currency), rounding=ROUND_HALF_UP, context=_EXACT)


def format_amount(amount: Decimal, currency: str) -> str:
    """``amount`` as a plain string with exactly ``currency``'s minor digits: ``"4800.00"``,
    ``"1200"`` (JPY), ``"12.500"`` (BHD). Rounds half up like ``quantize``."""
    return format(quantize(amount, currency), "f")


DEFAULT_LOCALE: Final = "en_US"
"""P10: the locale of a reader whose account names none."""


def display(amount: Decimal, currency: str, locale: str | None = None) -> str:
    """P10: ``amount`` as people read it in ``locale``: ``"$7,350"``, ``"$1,470.50"``,
    ``"€7,350"``, ``"7.350 €"`` (de_DE). A whole amount drops its minor digits, so the chat's
    "$7,350" and the card's total of the same figure read the same; any other keeps at least
    the currency's minor digits and every digit it has."""
    whole = amount == amount.to_integral_value()
    return format_currency(
        amount,
        currency.upper(),
        format=_pattern(locale or DEFAULT_LOCALE, whole),
        locale=_locale(locale or DEFAULT_LOCALE),
        currency_digits=not whole,
        # Never round away a digit the amount has: what people read is what is charged.
        decimal_quantization=whole,
    )


@lru_cache(maxsize=64)
def _locale(name: str) -> Locale:
    """The Babel locale ``name`` names; the default one for a name Babel does not know."""
    try:
        return Locale.parse(name.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return Locale.parse(DEFAULT_LOCALE)


@lru_cache(maxsize=64)
def _pattern(name: str, whole: bool) -> NumberPattern | None:
    """The locale's currency pattern, without fraction digits for a whole amount."""
    if not whole:
        return None
    pattern: NumberPattern = _locale(name).currency_formats["standard"]
    bare = copy(pattern)
    bare.frac_prec = (0, 0)
    return bare


def pay_now_line(q: Quote, locale: str | None = None) -> str:
    """P11: what the brand will pay on the written offer, in one sentence. It names no booking
    (terms agreed in chat are not one) and states no schedule a reader would take for the
    brand's (``domain.reader.read_schedule`` finds none in it)."""
    rate = format((PLATFORM_FEE_RATE * _HUNDRED).normalize(_EXACT), "f")
    due, fee = display(q.due, q.currency, locale), display(q.platform_fee, q.currency, locale)
    total = display(q.total, q.currency, locale)
    if q.remaining:
        share = format(q.due_percent.normalize(_EXACT), "f")
        rest = display(q.remaining, q.currency, locale)
        return (
            f"On the written offer you'll pay {due} now ({share}% of the fee) plus the platform "
            f"fee of {fee} ({rate}% of that): {total} together, and {rest} later."
        )
    return (
        f"On the written offer you'll pay the {due} fee plus the platform fee of {fee} "
        f"({rate}%): {total} in all."
    )


def quote(amount: Decimal, currency: str, due_percent: Decimal) -> Quote:
    """What the brand pays now when ``due_percent`` of an offer's fee ``amount`` is due.

    Raises ``DomainError`` (BAD_USER_INPUT) for an unknown currency (P2), a fee that is not a
    positive amount exact in the currency's minor units (P3), a percentage outside (0, 100]
    (P4) or a due slice that rounds to zero (P6).
    """
    if not is_currency(currency):
        raise bad_input(f"Unknown currency {currency!r}.", "currency")  # P2
    fee = _valid_fee(amount, currency)
    _check_percent(due_percent)
    # P5: exact product, one rounding.
    due = quantize(_EXACT.multiply(fee, due_percent).scaleb(-2, _EXACT), currency)
    if not due:
        raise bad_input("The due slice rounds to zero; nothing would be charged.", "duePercent")
    platform_fee = quantize(_EXACT.multiply(due, PLATFORM_FEE_RATE), currency)  # P7
    return Quote(
        currency=currency,
        fee=fee,
        due_percent=due_percent,
        due=due,
        platform_fee=platform_fee,
        total=_EXACT.add(due, platform_fee),  # P8
        remaining=_EXACT.subtract(fee, due),  # P8
    )


def _minor_unit(currency: str) -> Decimal:
    if not is_currency(currency):
        raise bad_input(f"Unknown currency {currency!r}.", "currency")  # P2
    return Decimal(1).scaleb(-MINOR_UNITS[currency])


def _valid_fee(amount: Decimal, currency: str) -> Decimal:
    """P3: the fee at the currency's exponent, or BAD_USER_INPUT."""
    if not amount.is_finite() or amount <= 0:
        raise bad_input("The amount must be a positive number.", "amount")
    if amount >= MAX_AMOUNT:
        raise bad_input(f"The amount must be below {MAX_AMOUNT:f}.", "amount")
    fee = quantize(amount, currency)
    if fee != amount:
        raise bad_input(
            f"The amount has more decimal places than {currency} allows ({MINOR_UNITS[currency]}).",
            "amount",
        )
    return fee


def _check_percent(due_percent: Decimal) -> None:
    """P4."""
    if not due_percent.is_finite() or not 0 < due_percent <= _HUNDRED:
        raise bad_input("The due percentage must be above 0 and at most 100.", "duePercent")
