"""The negotiation policy: how the host's side answers one proposal, as a small table.

Amounts here are per unit (one of the deliverable); the caller multiplies by the quantity.
Three figures shape the answers, each read from what the host recorded:

- the **ask** ``A`` (``host.rates.<slug>.ask``): the first counter;
- the **unit** ``U``: ``STEP_SHARE`` of the ask, rounded up to 50. Every counter lies on the
  grid ``A, A − U, A − 2U, …`` and every concession is whole units, so no counter is a
  fraction of the ask–floor gap;
- the **hold point** ``H``: the lowest grid point at or above ``floor + share × (A − floor)``
  (the share from ``host.negotiation.settle_share``, a decimal in 0..1, default
  ``DEFAULT_SHARE``), and always above the floor. It is the least the agent counters or
  settles at on its own. With no floor recorded it is the ask.

The counterparty's **move** is its proposal minus its previous one for this deliverable (per
unit); unknown when this side has no record of a previous one.

====  ===================================================  ===================================
rule  when                                                 then
====  ===================================================  ===================================
NP1   no ask recorded (a floor alone is not a price)       ask the principal
NP2   the proposal is in another currency                  ask the principal
NP3   proposal ≥ the counter the rows below would make     settle at the proposal
NP4   no counter made yet                                  counter at the ask
NP5   the counterparty did not move (a repeated or lower   counter again at the standing
      proposal, or no record of its previous one)          counter: no concession against
                                                           ourselves
NP6   it moved up                                          concede half its move, rounded to
                                                           whole units (never more than it
                                                           moved; a move under one unit earns
                                                           nothing); the step is never
                                                           derived from the ask–floor gap
NP7   the concession would go below ``H``                  counter at ``H``; standing at
                                                           ``H`` with a floor recorded, a
                                                           move to within ``LAST_STRETCH``
                                                           units under ``H`` is put to the
                                                           principal, whichever side of the
                                                           floor it lands on
====  ===================================================  ===================================

No floor oracle: the answer depends on the proposal only through the counterparty's own moves
and "is it at or above the counter we would make", never through "is it above the floor", so a
proposal just under the floor and one just over it get the same answer. What a prober can learn
at most is ``H``: a grid point, which bounds the floor only to an interval ``U / (1 − share)``
wide (at the default share, two units: an eighth of the ask). Only the principal's
instruction settles lower (handled before this table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Final

from dealroom.agents.persona import Decision
from dealroom.domain.terms import Money, round_up

DEFAULT_SHARE: Final = Decimal("0.5")
"""Where the hold point sits in the ask–floor gap when the host set nothing."""
STEP_SHARE: Final = Decimal("0.0625")
"""The concession unit as a share of the ask, a sixteenth (rounded up to 50): $500 on an
$8,000 ask, so the hold point of an $8,000 ask and a $6,000 floor is the half-way $7,000."""
LAST_STRETCH: Final = 2
"""Units under the hold point within which a proposal is put to the principal (NP7)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    decision: Decision
    amount: Money | None
    why: str
    """``rate`` (settled, NP3), ``ask`` (NP4), ``unmoved`` (NP5), ``conceded`` or
    ``small_move`` (NP6), ``hold`` or ``last_stretch`` (NP7), ``no_rate`` (NP1), ``currency``
    (NP2); the caller's ``instruction`` and ``exclusion:<word>``."""


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


def unit(ask: Decimal) -> Decimal:
    """The concession unit ``U``: ``STEP_SHARE`` of the ask, rounded up to 50."""
    return max(round_up(ask * STEP_SHARE), Decimal(50))


def settle_point(ask: Decimal, floor: Decimal | None, share: Decimal) -> Decimal:
    """The hold point ``H``: the least the agent counters or settles at unprompted. A point of
    the ask's grid, above the floor, never above the ask."""
    if floor is None or floor >= ask:
        return ask
    step = unit(ask)
    target = floor + share * (ask - floor)
    units = ((ask - target) / step).to_integral_value(rounding=ROUND_FLOOR)
    point = ask - max(units, Decimal(0)) * step
    while point <= floor:  # only a share of 0 puts the target on the floor itself
        point += step
    return min(point, ask)


def concession(move: Decimal, step: Decimal) -> Decimal:
    """NP6: half the counterparty's move, rounded half up to whole units of ``step``."""
    if move <= 0:
        return Decimal(0)
    units = (move / (2 * step)).to_integral_value(rounding=ROUND_HALF_UP)
    return units * step


def judge(
    offer: Money,
    ask: Money | None,
    floor: Money | None,
    counters: int,
    share: Decimal = DEFAULT_SHARE,
    *,
    standing: Money | None = None,
    previous: Money | None = None,
) -> Judgement:
    """The table above, for a per-unit ``offer`` after ``counters`` counters already made;
    ``standing`` is our last counter and ``previous`` the counterparty's previous proposal
    (per unit, when known)."""
    if ask is None:
        return Judgement("ask_principal", None, "no_rate")  # NP1
    if offer.currency != ask.currency:
        return Judgement("ask_principal", None, "currency")  # NP2
    lowest = floor.amount if floor is not None and floor.currency == ask.currency else None
    hold = settle_point(ask.amount, lowest, share)
    current = (
        standing.amount
        if counters and standing is not None and standing.currency == ask.currency
        else None
    )
    why: str
    moved = False
    if current is None:
        counter, why = ask.amount, "ask"  # NP4
    else:
        # A standing counter under the hold point is the principal's own figure: kept.
        lowest_counter = min(current, hold)
        known = previous is not None and previous.currency == offer.currency
        move = offer.amount - previous.amount if known and previous is not None else Decimal(0)
        step = concession(move, unit(ask.amount))
        moved = move > 0
        if not moved:
            counter, why = current, "unmoved"  # NP5
        elif step == 0:
            counter, why = current, "small_move"  # NP6
        elif current - step < lowest_counter:
            counter, why = lowest_counter, "hold"  # NP7
        else:
            counter, why = current - step, "conceded"  # NP6
    if offer.amount >= counter:
        return Judgement("settle", offer, "rate")  # NP3
    stretch = hold - LAST_STRETCH * unit(ask.amount)
    near = moved and current == hold and offer.amount >= stretch
    if near and lowest is not None and hold < ask.amount:
        return Judgement("ask_principal", None, "last_stretch")  # NP7
    return Judgement("counter", Money(counter, ask.currency), why)


@dataclass(frozen=True, slots=True)
class Rate:
    slug: str | None
    ask: Money | None
    floor: Money | None


def _per_unit(money: Money | None, quantity: int) -> Money | None:
    return Money(money.amount / quantity, money.currency) if money is not None else None


def rule(
    memory: Mapping[str, Any],
    offer: Money,
    rate: Rate,
    quantity: int,
    counters: int,
    *,
    standing: Money | None = None,
    previous: Money | None = None,
) -> Judgement:
    """The policy table on one unit; a counter is for the whole quantity. ``standing`` (our
    last counter) and ``previous`` (the counterparty's previous proposal) are for the whole
    quantity too."""
    unit_offer = Money(offer.amount / quantity, offer.currency)
    judgement = judge(
        unit_offer,
        rate.ask,
        rate.floor,
        counters,
        settle_share(memory),
        standing=_per_unit(standing, quantity),
        previous=_per_unit(previous, quantity),
    )
    if judgement.decision == "counter" and judgement.amount is not None:
        total = Money(judgement.amount.amount * quantity, judgement.amount.currency)
        return Judgement("counter", total, judgement.why)
    if judgement.decision == "settle":
        return Judgement("settle", offer, judgement.why)
    return judgement
