"""What may cross from the host's side into a visitor's pane (ARCHITECTURE "Room memory":
"only the ruling crosses").

A host-side ruling crosses as structured data only: a decision from a closed set, an amount
of digits, an ISO currency code and a deliverable slug. Its wording in the visitor's pane is
rendered here, by code, from those fields: the host-side model's free text (which had the
host's private rules in view) never reaches a visitor-facing agent with a ruling. These are
shape checks, not word filters: a field that does not have its shape is dropped, whatever it
says.

A field of the right shape can still be a covert channel (a slug like ``qx7_orchid_58213``
and an amount like ``6137`` pass C1 and can carry ~250 bits a ruling), so:

- C4  A ruling's deliverable must be one already named on the visitor's side of this room
      (its pane, its view of memory) or among the host's public services; any other slug is
      dropped (the ruling then speaks of "this").
- C5  A ruling's amount may not equal or undercut a limit of the host's in its currency
      unless the principal instructed that figure in this room; such a ruling is held for the
      principal, never rendered to the visitor. Every limit bounds a ruling naming no
      deliverable; one naming a deliverable is bounded by every limit the vocabulary cannot
      tell apart from it (deliverables DV4): the floor of a sponsored Instagram post does not
      bound a price for three Instagram stories, which reveals nothing about it,
      but an unknown slug or a floor recorded without a deliverable still bounds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Final

from dealroom.domain.deliverables import told_apart
from dealroom.domain.limits import Limit

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


_WORD = re.compile(r"[0-9a-z]+")


def named_deliverable(slug: str | None, visitor_side: Sequence[str]) -> str | None:
    """C4: ``slug`` when its words are named, as a phrase, in any of the ``visitor_side``
    texts (the visitor pane, its view of memory, the host's public services), else None."""
    if slug is None:
        return None
    phrase = " " + " ".join(_WORD.findall(slug.lower())) + " "
    if phrase.strip() == "":
        return None
    for text in visitor_side:
        if phrase in " " + " ".join(_WORD.findall(text.lower())) + " ":
            return slug
    return None


def with_deliverable(ruling: Ruling, deliverable: str | None) -> Ruling:
    return Ruling(ruling.decision, ruling.amount, ruling.currency, deliverable)


def undercut_limits(
    ruling: Ruling, limits: Mapping[str, Limit], instructed: Iterable[Decimal] = ()
) -> list[Limit]:
    """C5: the limits ``ruling``'s amount equals or undercuts (none when the principal
    instructed that figure in this room, or the ruling states no amount)."""
    if ruling.amount is None or ruling.decision == "decline":
        return []
    try:
        amount = Decimal(ruling.amount)
    except InvalidOperation:
        return []
    if amount.normalize() in {Decimal(a).normalize() for a in instructed}:
        return []
    currency = ruling.currency or "USD"
    named = ruling.deliverable
    applicable = [
        limit for slug, limit in limits.items() if named is None or not told_apart(slug, named)
    ]
    return [limit for limit in applicable if limit.currency == currency and amount <= limit.floor]
