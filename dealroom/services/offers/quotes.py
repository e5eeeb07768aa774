"""What the brand pays on a written offer, read from its stored terms: the one place a quote
is made from an offer row (the card, payment and the brand's notice all read it here)."""

from __future__ import annotations

from decimal import Decimal

from dealroom.domain import money
from dealroom.domain.errors import DomainError
from dealroom.persistence.models import Offer

DEFAULT_DUE_PERCENT = Decimal("100")
"""The platform's payment schedule when the offer names none: the whole fee is due at
booking. Offer-Gen names the missing schedule as an open question; it never invents one."""


def quote_for(offer: Offer) -> money.Quote | None:
    """The brand's payment: the due slice of the fee plus the platform fee (None when the
    offer holds no usable fee)."""
    fee = offer.terms.get("fee") if isinstance(offer.terms, dict) else None
    if not isinstance(fee, dict):
        return None
    try:
        amount = Decimal(str(fee.get("amount")))
        percent_raw = offer.terms.get("dueSlicePercent")
        percent = Decimal(str(percent_raw)) if percent_raw else DEFAULT_DUE_PERCENT
        return money.quote(amount, str(fee.get("currency")), percent)
    except (DomainError, ArithmeticError, ValueError):
        return None
