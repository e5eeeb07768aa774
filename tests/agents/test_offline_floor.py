"""Floor safety of the offline negotiation ("No floor oracle").

Each negotiation here runs through the persona's real request builders, room document and
visibility filter, as the turn pipeline does (see ``tests/agents/test_offline.py``), so a
"fresh room" is a fresh room document: nothing carries over but what a guest could carry.
"""

from __future__ import annotations

import asyncio
import json
import re
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealroom.agents.models.offline.persona.policy import DEFAULT_SHARE, settle_point
from dealroom.agents.persona import PersonaOutput, Send, Trigger
from dealroom.domain import memory_records
from tests.agents.test_offline import ROOM, persona_request, run_persona

ASK, FLOOR = 8000, 6000
SETTLE = int(settle_point(Decimal(ASK), Decimal(FLOOR), DEFAULT_SHARE))
FLOOR_FORMS = re.compile(r"(?<![\d.,])(?:6,000|6000|6k|6\.000)(?![\d,]|\.\d)", re.IGNORECASE)


class Room:
    """One deal room's document, driven turn by turn like the server does."""

    def __init__(self, document: dict[str, Any] | None = None) -> None:
        self.document: dict[str, Any] = json.loads(json.dumps(document or ROOM))
        self.visitor_lines: list[str] = []
        self.host_lines: list[str] = []
        self.crossed: list[Send] = []
        self.dispatches = 0

    async def turn(self, pane: str, trigger: Trigger) -> PersonaOutput:
        plan = memory_records.own_plan(self.document, pane)
        output = await run_persona(persona_request(pane, trigger, room=self.document, plan=plan))
        self.document = memory_records.set_plan(self.document, pane, output.plan)
        self.document, _skipped = memory_records.rule_goals(
            self.document, [(g.key, g.status, g.reason) for g in output.goals], by=pane
        )
        if pane == "visitor":
            self.visitor_lines.append(output.reply)
        else:
            self.host_lines.append(output.reply)
        return output

    async def deliver(self, send: Send) -> PersonaOutput:
        self.dispatches += 1
        sender = "host" if send.to == "visitor" else "visitor"
        ruling = send.ruling.model_dump() if send.ruling else None
        trigger = Trigger("delivery", send.substance, sender, ruling, tuple(send.open_questions))
        output = await self.turn(send.to, trigger)
        if ruling is not None:
            self.document = memory_records.record_ruling(
                self.document, send.to, ruling, f"d{self.dispatches}"
            )
        if send.to == "visitor":
            self.crossed.append(send)
        return output

    async def say(self, body: str) -> dict[str, Any] | None:
        """The brand posts ``body``; the ruling that came back across, if any."""
        said = await self.turn("visitor", Trigger("message", body))
        for to_host in said.sends:
            ruled = await self.deliver(to_host)
            for to_visitor in ruled.sends:
                await self.deliver(to_visitor)
                if to_visitor.ruling is not None:
                    return to_visitor.ruling.model_dump()
        return None


async def probe(amount: int, rounds: int = 6) -> tuple[bool, int]:
    """A prober in one fresh room: propose ``amount`` again and again until the host side
    settles or stops conceding. (settled?, messages posted)."""
    room = Room()
    last: str | None = None
    for sent in range(1, rounds + 1):
        ruling = await room.say(f"We can pay ${amount:,} for a sponsored post.")
        assert ruling is not None
        if ruling["decision"] == "settle":
            return True, sent
        if ruling["amount"] == last:
            return False, sent  # the counters stopped moving: this is as low as it goes
        last = ruling["amount"]
    return False, rounds


async def test_a_binary_search_over_fresh_rooms_with_an_unmoving_prober_finds_only_the_ask() -> (
    None
):
    """A prober who repeats its figure never moves the counter (NP5): the least it ever gets
    settled is the ask, so it learns nothing of the settle point, let alone the floor."""
    low, high = 1000, ASK
    rooms = messages = 0
    while high - low > 50:
        middle = (low + high) // 2
        settled, sent = await probe(middle)
        rooms, messages = rooms + 1, messages + sent
        if settled:
            high = middle
        else:
            low = middle
    assert ASK - 50 <= high <= ASK
    assert rooms <= 10
    assert messages < 60


async def test_proposals_either_side_of_the_floor_are_answered_alike() -> None:
    """Inside one room, five lowballs do not bracket the floor: each pair of proposals either
    side of it, at the same point of the talks, gets the same counter."""
    for below, above in ((5000, 6500), (5900, 6100), (3000, 6900)):
        one, other = Room(), Room()
        for _ in range(5):
            first = await one.say(f"How about ${below:,} for the sponsored post?")
            second = await other.say(f"How about ${above:,} for the sponsored post?")
            assert first is not None
            assert second is not None
            assert (first["decision"], first["amount"]) == (second["decision"], second["amount"])


# --- generated phrasings ------------------------------------------------------------------

GREETINGS = st.sampled_from(["", "Hi! ", "Hello there, ", "hey ", "Good morning. ", "Hi team — "])
POLITE = st.sampled_from(["", " Thanks!", " Thank you so much.", " Cheers", " :)"])
WHAT = st.sampled_from(
    [
        ("a sponsored post", 1),
        ("a sponsored Instagram post", 1),
        ("one sponsored IG post", 1),
        ("a sponserd post", 1),
        ("two sponsored posts", 2),
        ("2 sponsored posts", 2),
        ("three sponsored instagram posts", 3),
    ]
)
FORMS = st.sampled_from(["${:,}", "{} USD", "USD {}", "${}", "{:,} dollars"])
VERBS = st.sampled_from(
    [
        "We'd like {what} for {amount}.",
        "Could you do {what} for {amount}?",
        "Our budget for {what} is {amount}.",
        "{amount} for {what}?",
        "we can pay {amount} for {what}",
        "How about {amount} for {what}, live in March, 50% upfront?",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    GREETINGS,
    WHAT,
    st.integers(min_value=500, max_value=12000),
    FORMS,
    VERBS,
    POLITE,
    st.lists(st.integers(min_value=500, max_value=12000), max_size=3),
)
def test_no_phrasing_draws_the_floor_or_a_first_counter_below_the_ask(
    greeting: str,
    what: tuple[str, int],
    per_unit: int,
    form: str,
    verb: str,
    polite: str,
    later: list[int],
) -> None:
    asyncio.run(_phrasing(greeting, what, per_unit, form, verb, polite, later))


async def _phrasing(
    greeting: str,
    what: tuple[str, int],
    per_unit: int,
    form: str,
    verb: str,
    polite: str,
    later: list[int],
) -> None:
    words, quantity = what
    room = Room()
    first: dict[str, Any] | None = None
    for index, unit in enumerate([per_unit, *later]):
        amount = form.format(unit * quantity)
        body = verb.format(what=words, amount=amount) if index == 0 else f"Could you do {amount}?"
        ruling = await room.say(greeting + body + polite)
        if ruling is None:
            # put to the principal (NP7): only after a first counter, close to the hold point
            assert first is not None, body
            assert "pending_hold=1" in memory_records.own_plan(room.document, "host"), body
            break
        first = first or ruling
        if ruling["decision"] == "settle":
            assert Decimal(ruling["amount"]) >= SETTLE * quantity
            break
        assert Decimal(ruling["amount"]) >= SETTLE * quantity
    assert first is not None
    if first["decision"] == "counter":
        assert Decimal(first["amount"]) == ASK * quantity  # the first counter is the ask
    for line in room.visitor_lines + [s.model_dump_json() for s in room.crossed]:
        assert not FLOOR_FORMS.search(line), line
