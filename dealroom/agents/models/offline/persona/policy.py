"""The negotiation policy: how the host's side rules on one proposal, as a small table."""

from __future__ import annotations

from dataclasses import dataclass

from dealroom.agents.persona import Decision
from dealroom.domain.terms import Money, round_up


@dataclass(frozen=True, slots=True)
class Judgement:
    decision: Decision
    amount: Money | None
    why: str
    """``rate``, ``instruction``, ``no_rate``, ``currency``, ``minimum`` or ``exclusion:<word>``."""


def judge(
    offer: Money,
    ask: Money | None,
    floor: Money | None,
    last_counter: Money | None,
    counters: int,
) -> Judgement:
    """The ruling table between the host's ask and floor.

    R1 no ask and no floor → ask the principal. R2 another currency → ask the principal.
    R3 offer ≥ ask, or ≥ our last counter → settle at the offer. R4 floor ≤ offer < ask:
    first time counter at the midpoint rounded up to 50, after that settle. R5 offer < floor:
    first time counter at the ask, after that concede halfway from the last counter toward
    the floor, never reaching it (the floor is never stated). R6 only a floor: settle at or
    above it, else ask the principal.
    """
    if ask is None and floor is None:
        return Judgement("ask_principal", None, "no_rate")  # R1
    reference = ask or floor
    assert reference is not None
    if offer.currency != reference.currency:
        return Judgement("ask_principal", None, "currency")  # R2
    if floor is not None and floor.currency != offer.currency:
        floor = None
    if last_counter is not None and last_counter.currency != offer.currency:
        last_counter = None
    if ask is None:
        assert floor is not None
        if offer.amount >= floor.amount:
            return Judgement("settle", offer, "rate")  # R6
        return Judgement("ask_principal", None, "minimum")
    if floor is None or floor.amount > ask.amount:
        floor = ask
    if offer.amount >= ask.amount or (
        last_counter is not None and offer.amount >= last_counter.amount
    ):
        return Judgement("settle", offer, "rate")  # R3
    if offer.amount >= floor.amount:  # R4
        if counters == 0:
            middle = min(round_up((offer.amount + ask.amount) / 2), ask.amount)
            return Judgement("counter", Money(middle, ask.currency), "rate")
        return Judgement("settle", offer, "rate")
    if counters == 0 or last_counter is None:  # R5
        return Judgement("counter", ask, "rate")
    halfway = round_up((last_counter.amount + floor.amount) / 2)
    if halfway >= last_counter.amount or halfway <= floor.amount:
        halfway = last_counter.amount  # nothing left to concede without naming the floor
    return Judgement("counter", Money(halfway, ask.currency), "rate")
