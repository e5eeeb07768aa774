"""The negotiator never concedes against itself (persona/policy.py NP5-NP7).

A prober holds one account in one room and watches the counters. With the old policy (three
equal steps from the ask to a settle point half-way to the floor, whatever the brand did), four
unmoving $2,500 offers drew 9,000 → 8,550 → 8,100 → 7,600, and the documented split put the
floor at 2 × 7,600 − 9,000 = 6,200, to within the $50 rounding (the solver below bounds it to
$6,150-$6,250 on that policy). Here:

- NP5: a repeated or lower offer gets the same counter, never a lower one;
- NP6: a concession answers a move, and its size is half that move in whole units of the ask
  (never a share of the ask–floor gap), so the counters do not encode the floor;
- NP7: the agent stops at a hold point above the floor, and a brand that comes close is put to
  the principal; only the principal's yes settles lower.

Each negotiation runs through the persona's real request builders and the room document, as the
turn pipeline runs it (``tests/agents/test_offline_floor.py``).
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dealroom.agents.models.offline.persona import policy
from dealroom.agents.persona import Trigger
from dealroom.domain import memory_records
from dealroom.domain.limits import limit_entry
from dealroom.domain.terms import Money
from tests.agents.test_offline_floor import Room

ASK, FLOOR = 9000, 6200
BRAND = {"name": "Dana Ortiz", "company": "Brightwave"}


def reel_room(floor: int = FLOOR, ask: int = ASK) -> Room:
    """A deal room whose host charges ``ask`` for a reel and never goes below ``floor``."""
    host = {
        "rates": {"reel": {"ask": f"{ask} USD"}},
        "limits": {"reel": limit_entry(Decimal(floor), "USD", None)},
    }
    return Room({"host": host, "visitor": dict(BRAND), "deal": {}})


def said(ruling: dict[str, Any] | None) -> tuple[str, int | None]:
    """What the brand learnt from one message: the decision and its amount ("none" when the
    host's side sent nothing back, which is what asking the principal looks like)."""
    if ruling is None:
        return ("none", None)
    amount = ruling.get("amount")
    return (ruling["decision"], int(Decimal(amount)) if amount else None)


async def play(offers: list[int], floor: int = FLOOR) -> list[tuple[str, int | None]]:
    """One room: the brand offers each of ``offers`` for a reel in turn."""
    room = reel_room(floor)
    seen = []
    for number, amount in enumerate(offers):
        line = f"We'd love a reel for ${amount:,}." if number == 0 else f"How about ${amount:,}?"
        seen.append(said(await room.say(line)))
    return seen


async def test_np5_four_unmoving_low_offers_draw_no_lower_counters() -> None:
    seen = await play([2500, 2500, 2500, 2500])
    assert seen == [("counter", ASK)] * 4


async def test_np5_a_lower_offer_draws_the_same_counter_not_a_lower_one() -> None:
    seen = await play([4000, 6000, 5000, 3000])
    counters = [amount for decision, amount in seen if decision == "counter"]
    assert len(counters) == 4
    assert counters[2] == counters[3] == counters[1]  # the brand went down: we did not


async def test_np6_a_move_is_met_with_half_of_it_in_whole_units() -> None:
    step = int(policy.unit(Decimal(ASK)))
    assert step == 600  # a sixteenth of the ask, rounded up to 50
    low_floor = 3000  # hold point $6,000: room for three concessions
    seen = await play([3000, 4000, 4100, 6000], floor=low_floor)
    counters = [amount for _decision, amount in seen]
    assert counters[0] == ASK
    assert counters[1] == ASK - step  # moved 1,000: half is 500, one unit of 600
    assert counters[2] == counters[1]  # moved 100: under one unit earns nothing
    assert counters[3] == counters[2] - 2 * step  # moved 1,900: 950 is two units


HOLD = int(policy.settle_point(Decimal(ASK), Decimal(FLOOR), policy.DEFAULT_SHARE))
TO_THE_HOLD_POINT = [2500, 4500, 6000]
"""A move of $2,000 earns two units, down to the hold point; $1,500 more earns nothing more."""


async def test_np7_the_agent_stops_at_the_hold_point_above_the_floor() -> None:
    assert HOLD == 7800  # the lowest step of $600 from $9,000 at or above $7,600
    assert HOLD - policy.LAST_STRETCH * int(policy.unit(Decimal(ASK))) > FLOOR + 50
    seen = await play(TO_THE_HOLD_POINT)
    assert seen == [("counter", ASK), ("counter", HOLD), ("counter", HOLD)]
    # Just under and just over the floor, the same answer: the hold point (no floor oracle).
    for offer in (FLOOR - 50, FLOOR + 50):
        assert (await play([*TO_THE_HOLD_POINT, offer]))[-1] == ("counter", HOLD)


async def test_np7_a_brand_close_to_the_hold_point_is_put_to_the_principal() -> None:
    for answer, expected in (("no", ("counter", HOLD)), ("yes, take it", ("settle", HOLD - 300))):
        room = reel_room()
        for amount in TO_THE_HOLD_POINT:
            await room.say(f"Could you do a reel for ${amount:,}?")
        assert said(await room.say(f"How about ${HOLD - 300:,}?")) == ("none", None)
        asked = memory_records.own_plan(room.document, "host")
        assert "pending_hold=1" in asked
        told = await room.turn("host", Trigger("message", answer))
        [send] = told.sends
        assert send.ruling is not None
        got = (send.ruling.decision, int(Decimal(send.ruling.amount or "0")))
        assert got == expected


# --- the solver ---------------------------------------------------------------------------

STEP = 50
"""The solver's grid: every floor from half the ask up to the ask, $50 apart."""
CLIMB = [2500, 3500, 4500, 5500, 6000, 6500, 7000, 7500, 8000]
"""A brand that keeps moving up, $500-$1,000 a message, until the host's side answers."""


async def consistent_floors(offers: list[int], seen: list[tuple[str, int | None]]) -> list[int]:
    """Every floor, with the documented split (``DEFAULT_SHARE``) and this ask, under which the
    same offers draw exactly the answers ``seen``: what a solver who knows the code can say of
    the floor from this room."""
    found = []
    for floor in range(ASK // 2, ASK, STEP):
        if await play(offers, floor) == seen:
            found.append(floor)
    return found


async def test_np6_np7_a_solver_cannot_bound_the_floor_within_5_percent_from_the_counters() -> None:
    seen = await play(CLIMB)
    counters = [amount for decision, amount in seen if decision == "counter" and amount]
    assert counters[0] == ASK
    assert all(b <= a for a, b in itertools.pairwise(counters))
    assert all(amount is None or amount > FLOOR for _decision, amount in seen)
    floors = await consistent_floors(CLIMB, seen)
    assert FLOOR in floors  # the solver is right about the policy...
    low, high = min(floors), max(floors) + STEP
    assert high - low > FLOOR * 0.05, f"the floor is bounded to [{low}, {high})"  # ...not the floor


# --- the table, for any offers --------------------------------------------------------------


def usd(amount: Decimal | int) -> Money:
    return Money(Decimal(amount), "USD")


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=1000, max_value=20000),
    st.integers(min_value=100, max_value=10000),
    st.lists(st.integers(min_value=100, max_value=30000), min_size=1, max_size=10),
    st.sampled_from(["0", "0.25", "0.5", "0.9"]),
)
def test_np5_np6_np7_counters_fall_only_on_a_move_in_units_and_stay_above_the_floor(
    floor: int, spread: int, offers: list[int], share: str
) -> None:
    ask = floor + spread
    step = policy.unit(Decimal(ask))
    hold = policy.settle_point(Decimal(ask), Decimal(floor), Decimal(share))
    assert floor < hold <= ask
    assert (ask - hold) % step == 0  # the hold point is on the ask's grid
    standing: Decimal | None = None
    previous: int | None = None
    for count, offer in enumerate(offers):
        judgement = policy.judge(
            usd(offer),
            usd(ask),
            usd(floor),
            count,
            Decimal(share),
            standing=usd(standing) if standing is not None else None,
            previous=usd(previous) if previous is not None else None,
        )
        if judgement.decision == "settle":
            assert offer >= hold  # NP3: never under the hold point on its own
            break
        if judgement.decision == "ask_principal":
            assert standing == hold  # NP7: only once it stands at the hold point
            assert offer >= hold - policy.LAST_STRETCH * step
            break
        assert judgement.decision == "counter"
        assert judgement.amount is not None
        counter = judgement.amount.amount
        assert hold <= counter <= ask  # NP7: never the floor, never under the hold point
        assert (ask - counter) % step == 0  # NP6: whole units, not a share of the gap
        if standing is None:
            assert counter == ask  # NP4
        else:
            assert counter <= standing
            if previous is not None and offer <= previous:
                assert counter == standing  # NP5: no concession without a move
            if previous is not None and counter < standing:
                assert standing - counter <= offer - previous  # never more than they moved
        standing, previous = counter, offer


async def test_np7_the_principals_recorded_no_keeps_the_counter_and_ends_nothing() -> None:
    """Distil records the principal's "No." to a proposal near the hold point; that no kept our
    counter, so when the brand then takes the counter it settles (it is no "decline")."""
    room = reel_room()
    for amount in TO_THE_HOLD_POINT:
        await room.say(f"Could you do a reel for ${amount:,}?")
    assert said(await room.say(f"How about ${HOLD - 300:,}?")) == ("none", None)
    [question] = [line for line in room.host_lines if line.endswith("Should I take it?")]
    room.document["pendingPrincipalDecisions"] = {
        "reel": {"side": "host", "question": question, "principalInstruction": "No."}
    }
    answer = await room.turn(
        "host", Trigger("delivery", f"Dana Ortiz agrees to the reel at ${HOLD:,}.", "visitor")
    )
    [send] = answer.sends
    assert send.ruling is not None
    assert (send.ruling.decision, send.ruling.amount) == ("settle", str(HOLD))
