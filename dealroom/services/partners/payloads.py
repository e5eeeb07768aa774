"""What a webhook says: composed here and nowhere else.

A payload carries only offer fields the buyer side already sees on the written offer (an allowlist,
never the row or the room): no memory, no host branch, no pane line. This is the one place the
private-value firewall is applied to partner webhooks."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from dealroom.domain import money
from dealroom.domain.locale import reader_locale_of
from dealroom.domain.webhooks import EventType
from dealroom.persistence.models import Offer

TERM_FIELDS = (
    "deliverables",
    "fee",
    "dates",
    "usageRights",
    "exclusivity",
    "dueSlicePercent",
)
"""The commercial fields of ``Offer.terms`` the written offer shows both sides."""


def _terms(offer: Offer) -> dict[str, Any]:
    terms = offer.terms if isinstance(offer.terms, dict) else {}
    shown: dict[str, Any] = {}
    for name in TERM_FIELDS:
        value = terms.get(name)
        if name == "fee" and isinstance(value, dict):
            amount, currency = str(value.get("amount")), str(value.get("currency"))
            # P10: the raw amount stays the data; ``display`` is what a person reads.
            value = {"amount": amount, "currency": currency, "display": _display(amount, currency)}
        shown[name] = value
    shown["openQuestions"] = [str(q) for q in offer.open_questions or []]
    return shown


def _display(amount: str, currency: str, locale: str | None = None) -> str:
    try:
        return money.display(Decimal(amount), currency, locale)
    except (InvalidOperation, ValueError):
        return f"{amount} {currency}"


def for_reader(payload: dict[str, Any], locale: str | None) -> dict[str, Any]:
    """L3: the stored payload with its display fields written in the endpoint owner's
    ``locale`` (its stored choice; None leaves the en_US text stored with the event). The
    data fields, the ones the firewall screened, are untouched."""
    chosen = reader_locale_of(locale)
    data = payload.get("data")
    terms = data.get("terms") if isinstance(data, dict) else None
    fee = terms.get("fee") if isinstance(terms, dict) else None
    if locale is None or not isinstance(fee, dict) or "display" not in fee:
        return payload
    shown = _display(str(fee.get("amount")), str(fee.get("currency")), chosen)
    assert isinstance(data, dict)
    assert isinstance(terms, dict)
    return payload | {"data": data | {"terms": terms | {"fee": fee | {"display": shown}}}}


def compose(
    event: EventType,
    offer: Offer,
    *,
    stage: str,
    previous_stage: str | None,
    version: int,
    at: datetime,
    payment: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON body of one logical event (the Standard Webhooks ``type``/``timestamp``/
    ``data`` envelope)."""
    data: dict[str, Any] = {
        "offerId": str(offer.id),
        "roomId": str(offer.room_id),
        "stage": stage,
        "previousStage": previous_stage,
        "version": version,
        "sellerAccountId": str(offer.seller_account_id),
        "buyerAccountId": str(offer.buyer_account_id) if offer.buyer_account_id else None,
        "terms": _terms(offer),
    }
    if payment is not None:
        data["payment"] = payment
    return {"type": event.value, "timestamp": at.isoformat(), "data": data}
