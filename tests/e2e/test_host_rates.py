"""A host's rate said in everyday phrasing, end to end on the offline engine: the host tells
its agent in its home room, the agent confirms what it read there (or asks about what it could
not), and a brand offering $2,500 for a reel in a deal room is countered at the ask, however
many times it repeats the offer (policy NP5), and never hears the floor."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.turns import deal, memory, messages_in

CONFIRMED = "I noted your {label} rate as $5,000 and your floor as $4,000 — right?"
FLOOR_FORMS = re.compile(r"(?<![\d.,])(?:4,000|4000|4k|4\.000)(?![\d,]|\.\d)", re.IGNORECASE)


async def agent_lines(db: Db, room_id: str, pane: str) -> list[str]:
    return [
        m.body for m in await messages_in(db, room_id, pane) if m.author_kind == AuthorKind.AGENT
    ]


async def counters(db: Db, room_id: str) -> list[int]:
    rulings: list[dict[str, Any]] = (
        (await memory(db, room_id)).get("rulings", {}).get("visitor", [])
    )
    assert all(r["currency"] == "USD" for r in rulings)
    return [int(Decimal(r["amount"])) for r in rulings if r["decision"] == "counter"]


PHRASINGS = [
    ("I charge 5k for a reel, don't go under 4k.", "reel"),
    (
        "For Instagram reels my rate is five thousand USD; I won't accept less than four thousand.",
        "Instagram reel",
    ),
]
IDS = ["5k-dont-go-under", "words"]


@pytest.mark.parametrize(("rules", "label"), PHRASINGS, ids=IDS)
async def test_the_rate_is_confirmed_to_the_host_in_its_home_room(
    agent_server: Server, db: Db, rules: str, label: str
) -> None:
    d = await deal(agent_server, rules)
    assert CONFIRMED.format(label=label) in await agent_lines(db, d.home_id, "host")
    assert not await agent_lines(db, d.room_id, "host")  # nothing said in the deal room


@pytest.mark.parametrize(("rules", "_label"), PHRASINGS, ids=IDS)
async def test_a_brand_offering_2500_for_a_reel_is_countered_at_the_ask_and_no_lower(
    agent_server: Server, db: Db, rules: str, _label: str
) -> None:
    d = await deal(agent_server, rules)
    for _ in range(4):
        await post(d.visitor, d.room_id, "We'd love a reel. Could you do $2,500?")
        await agent_server.settle()
    assert await counters(db, d.room_id) == [5000] * 4  # the ask, and no lower (NP5)
    for line in await agent_lines(db, d.room_id, "visitor"):
        assert not FLOOR_FORMS.search(line), line


async def test_a_rule_it_could_not_read_is_asked_about_and_the_answer_recorded(
    agent_server: Server, db: Db
) -> None:
    d = await deal(
        agent_server, "Reels are 5k. For reels, don't go under what we agreed last year."
    )
    lines = await agent_lines(db, d.home_id, "host")
    assert lines[-1] == (
        "I noted your reel rate as $5,000. "
        "I couldn't tell your floor for reels — what's the lowest you'd take?"
    )
    await post(d.host, d.home_id, "four thousand")
    await agent_server.settle()
    assert (await agent_lines(db, d.home_id, "host"))[-1] == (
        "I noted your floor for reels as $4,000 — right?"
    )
    limit = (await memory(db, d.home_id))["host"]["limits"]["reel"]
    assert (limit["floor"], limit["currency"]) == ("4000", "USD")
