"""What a guest reads before the login gate, on the negotiation corpus, through the offline engine.

Every script of ``tests/data/negotiations`` is played by a guest brand in the visitor's pane,
after three questions the host's public card can answer (rates, deliverables, dates), through
the persona's real request builders and visibility filter (one room document per script, the
host side ruling each note as the turn pipeline does). Printed, each with its baseline taken
in the same run:

- **Public-fact answers before the gate**: of the three questions, how many are answered with
  a public fact (and nothing sent) before the first line that must leave the pane; the
  baseline is the same host with no public card (the demo host before it published one).
- **Sends to the host side per negotiated deal**: a signed-in brand plays each script to a
  deal; and a guest's held notes replayed after the claim, one send per held note (baseline)
  against the coalesced replay (``effects.coalesced``: one send per run of notes).
- **Gate messages naming what waits**: the share of scripts whose gate message names the
  proposal it holds (its amount); the baseline is the old pair, "I'm checking that with …"
  then the gate run's line naming the kind only ("a note for Maya Lin").

    .venv/bin/python bench/guest_gate.py
"""

from __future__ import annotations

import asyncio
import copy
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dealroom.agents import persona
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaInput, PersonaOutput, Send, Trigger
from dealroom.agents.render import Line, Party
from dealroom.domain import memory_records, pane_words
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import RoomKind
from dealroom.domain.terms import find_amounts, format_money
from dealroom.domain.visibility import visible_memory
from dealroom.jobs.gate_line import waiting_phrase
from dealroom.persistence.models import PendingEffect
from dealroom.services.gate import effects

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "negotiations"
HOST, BRAND = Party("host", "Maya Lin"), Party("visitor", "A visitor")
PUBLIC = {
    "rate_card": ["sponsored_post from 8000 USD"],
    "notes": ["I do sponsored posts, reels and stories, and I book about two weeks ahead"],
}
ROOM: dict[str, Any] = {
    "host": {
        "rates": {"sponsored_post": {"ask": "8000 USD"}},
        "limits": {"sponsored_post": {"floor": "6000", "currency": "USD"}},
        "rules": ["never work with alcohol brands"],
        "exclusions": ["alcohol"],
        "public": PUBLIC,
    },
    "deal": {},
}
QUESTIONS = (
    ("Hi! What are your rates?", "$8,000"),
    ("What do you deliver — posts, reels?", "reels"),
    ("How far ahead do you book?", "two weeks"),
)
client = OfflineClient()


def scripts() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("*.json")):
        found += json.loads(path.read_text(encoding="utf-8"))["scripts"]
    return found


class Room:
    """One deal room's document, driven turn by turn as the server drives it."""

    def __init__(self, document: dict[str, Any], *, guest: bool) -> None:
        self.document = copy.deepcopy(document)
        self.guest = guest
        self.session: list[Line] = []

    async def turn(self, pane: str, trigger: Trigger) -> PersonaOutput:
        other = "visitor" if pane == "host" else "host"
        inputs = PersonaInput(
            room_kind=RoomKind.DEAL.value,
            pane=pane,
            represents=HOST,
            speaking_with=HOST if pane == "host" else BRAND,
            memory=visible_memory(self.document, pane=pane, room_kind=RoomKind.DEAL),
            plan=memory_records.own_plan(self.document, pane),
            account_facts=None,
            session=list(self.session) if pane == "visitor" else [],
            trigger=trigger,
            send_to=[other],
            deliveries=[],
            stage=Stage.NO_WRITTEN_OFFER,
            guest=self.guest and pane == "visitor",
        )
        output = (await client.generate(persona.build(inputs, model="bench"))).output
        assert isinstance(output, PersonaOutput)
        self.document = memory_records.set_plan(self.document, pane, output.plan)
        self.document, _ = memory_records.rule_goals(
            self.document, [(g.key, g.status, g.reason) for g in output.goals], by=pane
        )
        return output

    async def say(self, body: str) -> PersonaOutput:
        output = await self.turn("visitor", Trigger("message", body))
        self.session += [Line("participant", body), Line("agent", output.reply)]
        return output

    async def deliver(self, send: Send, number: int) -> PersonaOutput:
        sender = "host" if send.to == "visitor" else "visitor"
        ruling = send.ruling.model_dump() if send.ruling else None
        trigger = Trigger("delivery", send.substance, sender, ruling, tuple(send.open_questions))
        output = await self.turn(send.to, trigger)
        if ruling is not None:
            self.document = memory_records.record_ruling(
                self.document, send.to, ruling, f"d{number}"
            )
        if send.to == "visitor":
            self.session.append(Line("agent", output.reply))
        return output

    def met(self) -> bool:
        return memory_records.goal_statuses(self.document).get("new-offer") == "met"


def visitor_lines(script: dict[str, Any]) -> list[str]:
    return [step["visitor"] for step in script["steps"] if "visitor" in step]


async def before_gate(
    script: dict[str, Any], *, public: bool
) -> tuple[int, bool | None, bool | None]:
    """(questions answered with a public fact before the gate, the gate message names the
    amount waiting, the baseline's gate pair names it); None when nothing ever had to leave
    the pane (a yes with nothing proposed: no gate)."""
    document = copy.deepcopy(ROOM)
    if not public:
        document["host"].pop("public")
    room = Room(document, guest=True)
    answered = 0
    for question, fact in QUESTIONS:
        output = await room.say(question)
        if not output.sends and fact in output.reply:
            answered += 1
    for line in visitor_lines(script):
        output = await room.say(line)
        if output.sends:
            amounts = find_amounts(line)
            wanted = format_money(amounts[-1]) if amounts else None
            named = pane_words.asks_sign_in(output.reply) and (
                wanted is None or wanted in output.reply
            )
            # The old pair: the reply of a signed-in turn, then the gate run's line (kinds).
            old = await Room(document, guest=False).say(line)
            waits = waiting_phrase([("pane_send", True)], HOST.name)
            pair = f"{old.reply} I was just about to share an update ({waits}) — sign in"
            old_named = wanted is not None and wanted in pair
            return answered, named, old_named
    return answered, None, None


async def negotiated(script: dict[str, Any]) -> tuple[bool, int]:
    """A signed-in brand plays the script: (reached a deal, sends to the host side)."""
    room = Room(ROOM, guest=False)
    sends = number = 0
    for line in visitor_lines(script):
        said = await room.say(line)
        for to_host in said.sends:
            sends, number = sends + 1, number + 1
            ruled = await room.deliver(to_host, number)
            for to_visitor in ruled.sends:
                number += 1
                await room.deliver(to_visitor, number)
    return room.met(), sends


async def held_then_replayed(script: dict[str, Any]) -> tuple[int, int]:
    """A guest's notes held until the claim: (sends one per held note, sends coalesced)."""
    room = Room(ROOM, guest=True)
    rows: list[PendingEffect] = []
    visitor, host = uuid.uuid4(), uuid.uuid4()
    for line in visitor_lines(script):
        for send in (await room.say(line)).sends:
            rows.append(
                PendingEffect(
                    id=uuid.uuid4(),
                    room_id=uuid.uuid4(),
                    seq=len(rows) + 1,
                    kind=effects.EffectKind.PANE_SEND.value,
                    payload={"from": str(visitor), "to": str(host), "substance": send.substance},
                    status=effects.HELD,
                    created_at=datetime.now(UTC),
                )
            )
    coalesced, left = 0, rows
    while left:
        folded, _effect = effects.coalesced(left)
        coalesced += 1
        left = left[len(folded) + 1 :]
    return len(rows), coalesced


async def main() -> None:
    corpus = scripts()
    print(f"corpus: {len(corpus)} scripts, offline engine, in-process")
    for public in (False, True):
        seen = [await before_gate(s, public=public) for s in corpus]
        answered = sum(a for a, _n, _o in seen)
        label = "with a public card" if public else "baseline, no public card"
        print(
            f"public-fact answers before the gate ({label}): {answered}/{3 * len(corpus)} "
            f"questions ({answered / (3 * len(corpus)):.0%})"
        )
    gated = [(n, o) for _a, n, o in seen if n is not None]
    named = sum(bool(n) for n, _o in gated)
    old_named = sum(bool(o) for _n, o in gated)
    print(
        f"gate messages naming what waits: {named}/{len(gated)} ({named / len(gated):.0%}); "
        f"baseline (checking now + gate line): {old_named}/{len(gated)} "
        f"({old_named / len(gated):.0%}); {len(corpus) - len(gated)} scripts never send"
    )
    deals = [await negotiated(s) for s in corpus]
    done = [sends for met, sends in deals if met]
    print(
        f"sends to the host side per negotiated deal (signed in): "
        f"{sum(done) / max(len(done), 1):.2f} over {len(done)} deals"
    )
    replays = [await held_then_replayed(s) for s in corpus]
    held = sum(h for h, _c in replays)
    coalesced = sum(c for _h, c in replays)
    print(
        f"held notes replayed to the host side per script: {coalesced / len(corpus):.2f} "
        f"coalesced, baseline one per note {held / len(corpus):.2f} "
        f"(ratio {coalesced / max(held, 1):.2f})"
    )


if __name__ == "__main__":
    asyncio.run(main())
