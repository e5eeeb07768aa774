"""What may cross from the host's side into a visitor's pane (issue 3 item 6; ARCHITECTURE
"Room memory": "only the ruling crosses").

A host-side ruling crosses as structured data only: a decision from a closed set, an amount
of digits, an ISO currency code and a deliverable slug. Its wording in the visitor's pane is
rendered here, by code, from those fields: the host-side model's free text (which had the
host's private rules in view) never reaches a visitor-facing agent with a ruling. These are
shape checks, not word filters: a field that does not have its shape is dropped, whatever it
says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

DECISIONS: Final = frozenset({"settle", "counter", "ask_principal", "decline"})
_AMOUNT: Final = re.compile(r"\d{1,12}(\.\d{1,2})?")
_CURRENCY: Final = re.compile(r"[A-Z]{3}")
_DELIVERABLE: Final = re.compile(r"[a-z][a-z0-9_]{0,39}")
_SYMBOLS: Final = {"USD": "$", "GBP": "£"}


@dataclass(frozen=True, slots=True)
class Ruling:
    decision: str
    amount: str | None
    currency: str | None
    deliverable: str | None

    def to_json(self) -> dict[str, str | None]:
        return {
            "decision": self.decision,
            "amount": self.amount,
            "currency": self.currency,
            "deliverable": self.deliverable,
        }


def safe_ruling(raw: Mapping[str, object]) -> Ruling | None:
    """C1: the ruling reduced to fields of a fixed shape; None when the decision is not one
    of the four. A field of the wrong shape (free text in ``deliverable``, words in
    ``amount``) is dropped, never passed on."""
    decision = raw.get("decision")
    if not isinstance(decision, str) or decision not in DECISIONS:
        return None
    return Ruling(
        decision=decision,
        amount=_shaped(raw.get("amount"), _AMOUNT),
        currency=_shaped(_upper(raw.get("currency")), _CURRENCY),
        deliverable=_shaped(_slug(raw.get("deliverable")), _DELIVERABLE),
    )


def render(ruling: Ruling, host: str) -> str:
    """C2: the substance a ruling carries into the visitor's pane, from the recipient's
    point of view, written by code."""
    what = f"the {ruling.deliverable.replace('_', ' ')}" if ruling.deliverable else "this"
    price = _money(ruling.amount, ruling.currency)
    match ruling.decision:
        case "settle":
            return f"{host} agrees to {what} at {price}." if price else f"{host} agrees to {what}."
        case "counter":
            return f"{host} can do {what} at {price}." if price else f"{host} proposes other terms."
        case "decline":
            return f"{host} won't be able to take {what} on."
        case _:
            return f"{host} is considering {what}; there is an answer to come."


def _shaped(value: object, pattern: re.Pattern[str]) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if pattern.fullmatch(value) else None


def _upper(value: object) -> object:
    return value.upper() if isinstance(value, str) else value


def _slug(value: object) -> object:
    if not isinstance(value, str):
        return value
    return re.sub(r"[\s-]+", "_", value.strip().lower())


def _money(amount: str | None, currency: str | None) -> str | None:
    if amount is None:
        return None
    number = Decimal(amount)
    text = f"{number:,.2f}" if number != number.to_integral_value() else f"{number:,.0f}"
    code = currency or "USD"
    symbol = _SYMBOLS.get(code)
    return f"{symbol}{text}" if symbol else f"{text} {code}"
