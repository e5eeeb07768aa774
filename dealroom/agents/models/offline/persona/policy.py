"""The negotiation policy: how the host's side answers one proposal, as a small table.

Amounts here are per unit (one of the deliverable); the caller multiplies by the quantity.
The host's **settle point** lies above its floor: ``floor + share × (ask − floor)``, with the
share from ``host.negotiation.settle_share`` (a decimal in 0..1, default ``DEFAULT_SHARE``).
The **concession path** goes from the ask down to the settle point in ``STEPS`` equal steps,
each rounded up to 50; the k-th counter is the path's k-th point.

====  ===================================================  ===================================
rule  when                                                 then
====  ===================================================  ===================================
NP1   no ask recorded (a floor alone is not a price)       ask the principal
NP2   the proposal is in another currency                  ask the principal
NP3   proposal ≥ the next point on the path (the ask       settle at the proposal
      first, then each lower counter)
NP4   otherwise                                            counter at the next point on the
                                                           path; once it is the settle point,
                                                           hold there
====  ===================================================  ===================================

No floor oracle: the answer depends on the proposal only through "is it at or above
the next point on the path", never through "is it above the floor", so a proposal just under
the floor and one just over it get the same counter until the path itself gets there; and the
path never goes below the settle point, so no visitor-facing amount is ever the floor. Only the
principal's instruction settles lower (handled before this table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from dealroom.agents.persona import Decision
from dealroom.domain.terms import Money, round_up

STEPS: Final = 3
"""Counters from the ask down to the settle point."""
DEFAULT_SHARE: Final = Decimal("0.5")
"""Where the settle point sits in the ask–floor gap when the host set nothing."""


@dataclass(frozen=True, slots=True)
class Judgement:
    decision: Decision
    amount: Money | None
    why: str
    """``rate``, ``instruction``, ``no_rate``, ``currency`` or ``exclusion:<word>``."""


def settle_share(memory: Mapping[str, Any]) -> Decimal:
    """The host's ``host.negotiation.settle_share``, else ``DEFAULT_SHARE``."""
    host = memory.get("host")
    negotiation = host.get("negotiation") if isinstance(host, Mapping) else None
    raw = negotiation.get("settle_share") if isinstance(negotiation, Mapping) else None
    try:
        share = Decimal(str(raw)) if raw is not None else DEFAULT_SHARE
    except InvalidOperation:
        return DEFAULT_SHARE
    return share if share.is_finite() and 0 <= share <= 1 else DEFAULT_SHARE


def settle_point(ask: Decimal, floor: Decimal | None, share: Decimal) -> Decimal:
    """The least the agent settles at unprompted: above the floor, never above the ask."""
    if floor is None or floor >= ask:
        return ask
    point = round_up(floor + share * (ask - floor))
    if point <= floor:
        point = floor + 50  # rounding never lands on the floor itself
    return min(point, ask)


def path(ask: Decimal, settle: Decimal) -> list[Decimal]:
    """The counters in order: the ask, then equal steps down to the settle point."""
    points = [ask]
    for k in range(1, STEPS + 1):
        point = max(round_up(ask - (ask - settle) * k / STEPS), settle)
        if point < points[-1]:
            points.append(point)
    return points


def judge(
    offer: Money,
    ask: Money | None,
    floor: Money | None,
    counters: int,
    share: Decimal = DEFAULT_SHARE,
) -> Judgement:
    """The table above, for a per-unit ``offer`` after ``counters`` counters already made."""
    if ask is None:
        return Judgement("ask_principal", None, "no_rate")  # NP1
    if offer.currency != ask.currency:
        return Judgement("ask_principal", None, "currency")  # NP2
    lowest = floor.amount if floor is not None and floor.currency == ask.currency else None
    points = path(ask.amount, settle_point(ask.amount, lowest, share))
    following = points[min(counters, len(points) - 1)]
    if offer.amount >= following:
        return Judgement("settle", offer, "rate")  # NP3
    return Judgement("counter", Money(following, ask.currency), "rate")  # NP4


@dataclass(frozen=True, slots=True)
class Rate:
    slug: str | None
    ask: Money | None
    floor: Money | None


def rule(
    memory: Mapping[str, Any], offer: Money, rate: Rate, quantity: int, counters: int
) -> Judgement:
    """The policy table on one unit; a counter is for the whole quantity."""
    unit = Money(offer.amount / quantity, offer.currency)
    judgement = judge(unit, rate.ask, rate.floor, counters, settle_share(memory))
    if judgement.decision == "counter" and judgement.amount is not None:
        total = Money(judgement.amount.amount * quantity, judgement.amount.currency)
        return Judgement("counter", total, judgement.why)
    if judgement.decision == "settle":
        return Judgement("settle", offer, judgement.why)
    return judgement
