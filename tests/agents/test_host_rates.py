"""The host's rates said in everyday phrasing, on the offline engine: Distil records the ask and
the floor (``host.rates``, ``host.limits``), the home room's agent confirms what it read or asks
about what it could not, and a brand offering $2,500 for a reel is countered at the ask.

The reading is ``domain.limits`` L3-L6 (``tests/domain/test_host_rates.py``); here it runs through
the agents' real request builders, as the turn pipeline runs it.
"""

from __future__ import annotations

from typing import Any

import pytest

from dealroom.agents.persona import Trigger
from dealroom.agents.render import Line
from dealroom.domain import memory as memdoc
from dealroom.domain.seats import RoomKind
from tests.agents.test_offline import (
    changes_of,
    distil_request,
    persona_request,
    run_distil,
    run_persona,
)
from tests.agents.test_offline_floor import Room

PHRASINGS = [
    # (the host's line in its home room, the deliverable it names, how the agent names it)
    ("I charge 5k for a reel, don't go under 4k.", "reel", "reel"),
    (
        "For Instagram reels my rate is five thousand USD; I won't accept less than four thousand.",
        "instagram_reel",
        "Instagram reel",
    ),
    ("Rate card — reel 5000, floor 4000.", "reel", "reel"),
    ("Reels: $5,000 each. Absolute minimum 4,000 dollars.", "reel", "reel"),
    (
        "Please quote brands $5,000 per reel. I'd go as low as $4,000 if they're a good fit.",
        "reel",
        "reel",
    ),
]
IDS = ["5k-dont-go-under", "words", "rate-card", "absolute-minimum", "as-low-as"]
LIMIT_4000 = '{"currency": "USD", "floor": "4000"}'


async def home_document(*lines: str) -> dict[str, Any]:
    """The home room's document after Distil read ``lines`` from the host."""
    output = await run_distil(distil_request("host", lines, room={}, kind=RoomKind.HOME))
    applied = memdoc.apply_changes(
        {},
        [memdoc.Change(memdoc.Op(c.op), c.path, c.value) for c in output.changes],
        allowed=memdoc.writable_prefixes("host", RoomKind.HOME),
    )
    assert applied.rejected == ()
    return applied.document


@pytest.mark.parametrize(("said", "slug", "_label"), PHRASINGS, ids=IDS)
async def test_distil_records_the_ask_and_the_floor(said: str, slug: str, _label: str) -> None:
    output = await run_distil(distil_request("host", [said], room={}, kind=RoomKind.HOME))
    assert changes_of(output) == [
        ("set", f"host.rates.{slug}.ask", "5000 USD"),
        ("set", f"host.limits.{slug}", LIMIT_4000),
    ]


@pytest.mark.parametrize(("said", "_slug", "_label"), PHRASINGS, ids=IDS)
async def test_a_brand_offering_2500_for_a_reel_is_countered_at_the_ask(
    said: str, _slug: str, _label: str
) -> None:
    home = await home_document(said)
    room = Room({"host": home["host"], "visitor": {"name": "Dana Ortiz"}, "deal": {}})
    ruling = await room.say("We'd love a reel. Could you do $2,500?")
    assert ruling is not None, "the host's side ruled nothing"
    assert (ruling["decision"], ruling["amount"], ruling["currency"]) == ("counter", "5000", "USD")


@pytest.mark.parametrize(("said", "_slug", "label"), PHRASINGS, ids=IDS)
async def test_the_home_room_agent_confirms_the_rule_it_read(
    said: str, _slug: str, label: str
) -> None:
    output = await run_persona(
        persona_request("host", Trigger("message", said), kind=RoomKind.HOME, send_to=[], room={})
    )
    assert output.reply == f"I noted your {label} rate as $5,000 and your floor as $4,000 — right?"
    assert output.sends == []


UNREAD = "For reels, don't go under what we agreed last year."
FLOOR_QUESTION = "I couldn't tell your floor for reels — what's the lowest you'd take?"


async def test_a_rule_it_could_not_read_is_asked_about_never_dropped() -> None:
    output = await run_persona(
        persona_request("host", Trigger("message", UNREAD), kind=RoomKind.HOME, send_to=[], room={})
    )
    assert output.reply == FLOOR_QUESTION
    recorded = await run_distil(distil_request("host", [UNREAD], room={}, kind=RoomKind.HOME))
    assert recorded.changes == []  # nothing guessed


async def test_the_answer_to_the_floor_question_is_the_floor() -> None:
    session = [Line("participant", UNREAD), Line("agent", FLOOR_QUESTION)]
    answer = [*session, Line("participant", "4000")]
    recorded = await run_distil(distil_request("host", session=answer, room={}, kind=RoomKind.HOME))
    assert changes_of(recorded) == [("set", "host.limits.reel", LIMIT_4000)]
    assert recorded.principal_decisions == []  # an answer about a rate, not a deal
    output = await run_persona(
        persona_request(
            "host",
            Trigger("message", "4000"),
            kind=RoomKind.HOME,
            send_to=[],
            room={},
            session=answer,
        )
    )
    assert output.reply == "I noted your floor for reels as $4,000 — right?"


async def test_a_yes_to_the_confirmation_is_no_decision_about_a_deal() -> None:
    said = PHRASINGS[0][0]
    confirmed = "I noted your reel rate as $5,000 and your floor as $4,000 — right?"
    session = [Line("participant", said), Line("agent", confirmed), Line("participant", "Yes")]
    request = distil_request("host", session=session, room={}, kind=RoomKind.HOME)
    recorded = await run_distil(request)
    assert recorded.principal_decisions == []


async def test_a_rule_that_opens_like_a_question_is_still_confirmed() -> None:
    said = "Do not go under 4k for reels"
    output = await run_persona(
        persona_request("host", Trigger("message", said), kind=RoomKind.HOME, send_to=[], room={})
    )
    assert output.reply == "I noted your floor for reels as $4,000 — right?"
    recorded = await run_distil(distil_request("host", [said], room={}, kind=RoomKind.HOME))
    assert changes_of(recorded) == [("set", "host.limits.reel", LIMIT_4000)]
