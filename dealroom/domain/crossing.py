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
- C7  A ruling's amount crosses only where a limit of the host's bounds it (C5's limits, in
      its currency) or at the host's own ask for the deliverable or above: with no floor to
      check against (a room seeded after a curator dropped it, a host who never gave one), a
      figure under the ask is the host-side model's own guess at the host's limit, so the
      ruling is held and the host is asked for its floor. A figure at or over one the
      principal stated in the message the turn answers (a rate or floor not filed yet) is
      bounded by it. A figure the principal instructed
      in this room crosses as under C5, and so does one of the terms a standing instruction
      covered (instructions PI1), and a settle at a figure the visitor's side proposed: taking
      the brand's own price guesses at no limit (the written offer still waits for the host's
      approval).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from dealroom.domain import instructions
from dealroom.domain.deliverables import told_apart
from dealroom.domain.limits import RATES, Limit
from dealroom.domain.terms import parse_money

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


def unbounded(
    ruling: Ruling,
    limits: Mapping[str, Limit],
    memory: Mapping[str, object],
    instructed: Iterable[Decimal] = (),
    said: Iterable[Decimal] = (),
) -> bool:
    """C7: whether ``ruling`` states an amount under the host's ask with no limit of the host's
    bounding it (C5's limits in its currency); False for a figure the principal instructed, and
    for one at or over a figure the principal stated in the message this turn answers
    (``said``: a rate or a floor not filed yet)."""
    if ruling.amount is None or ruling.decision == "decline":
        return False
    try:
        amount = Decimal(ruling.amount)
    except InvalidOperation:
        return False
    if amount.normalize() in {Decimal(a).normalize() for a in instructed}:
        return False
    currency = ruling.currency or "USD"
    named = ruling.deliverable
    if any(
        limit.currency == currency and (named is None or not told_apart(slug, named))
        for slug, limit in limits.items()
    ):
        return False
    return not any(ask <= amount for ask in [*_asks(memory, named, currency), *said])


def _asks(memory: Mapping[str, object], named: str | None, currency: str) -> list[Decimal]:
    """The host's asks (``host.rates.<slug>.ask``) in ``currency`` for a deliverable not told
    apart from ``named`` (every ask when the ruling names none)."""
    host = memory.get("host")
    rates = host.get(RATES) if isinstance(host, Mapping) else None
    if not isinstance(rates, Mapping):
        return []
    found: list[Decimal] = []
    for slug, rate in rates.items():
        ask = rate.get("ask") if isinstance(rate, Mapping) else None
        if not isinstance(ask, str | int) or (named is not None and told_apart(str(slug), named)):
            continue
        money = parse_money(str(ask), default_currency=currency)
        if money is not None and money.currency == currency:
            found.append(money.amount)
    return found


def covered_amounts(memory: Mapping[str, Any]) -> set[Decimal]:
    """C7: the figures the host's standing instructions covered (instructions PI1)."""
    decisions = memory.get(instructions.DECISIONS)
    if not isinstance(decisions, Mapping):
        return set()
    found: set[Decimal] = set()
    for key, _said in instructions.standing(memory, "host"):
        entry = decisions.get(key)
        terms = instructions.Terms.of(entry.get(instructions.COVERS)) if entry else None
        if terms is not None:
            found |= terms.amounts
    return found
