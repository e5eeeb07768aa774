"""A principal's yes lapses when the terms it covered move (instructions PI1-PI4): recorded in
room memory with the reason, and the firewall holds its figure again (F4, C5).

The offline engine negotiates to the point where the host's agent asks its principal about
$6,000 (the floor) and the host says yes. Then the brand asks for two posts, which moves the
terms, and comes back to one post at $6,000. A stale host-side model that still settles on the
old yes (scripted) has that settle held for the principal; without the move, it crosses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.domain import firewall
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.recording import RecordingClient
from tests.support.turns import Dispatch, deal, memory, messages_in, rows

BIDS = ("Could you do a sponsored post for $4,000?", "How about $5,900?", "$6,000 then?")
YES = "Yes, take $6,000."
MOVE = "Actually, could we do two sponsored posts for $6,000?"
BACK = "One sponsored post for $6,000 then."
ASKED = "under the lowest I go without you. Should I take it?"
KEY = "host-sponsored_post"
SETTLE = Ruling(decision="settle", amount="6000", currency="USD", deliverable="sponsored_post")


@dataclass
class Stale:
    """The host-side model's script: on the principal's yes it sends nothing (so no settle has
    crossed when the terms move); once ``settling``, it settles any delivery at $6,000."""

    settling: bool = False

    def __call__(self, request: ModelRequest) -> BaseModel | None:
        if request.agent is not AgentName.PERSONA or request.context.get("pane") != "host":
            return None
        trigger: dict[str, Any] = request.context.get("trigger") or {}
        if trigger.get("kind") == "message" and trigger.get("body") == YES:
            return PersonaOutput(reply="Understood.")
        if trigger.get("kind") == "delivery" and self.settling:
            send = Send(to="visitor", substance="$6,000 works.", ruling=SETTLE)
            return PersonaOutput(reply="As you said, I'm settling at $6,000.", sends=[send])
        return None


@pytest.fixture
def stale() -> Stale:
    return Stale()


@pytest.fixture
def model(stale: Stale) -> RecordingClient:
    return RecordingClient(OfflineClient(), script=stale)


async def _say(server: Server, client: Any, room_id: str, body: str) -> None:
    await post(client, room_id, body)
    await server.settle()
    server.clock.advance(timedelta(minutes=11))  # past the pair's send cap


@pytest.mark.parametrize("terms_move", [True, False], ids=["terms-moved", "terms-stand"])
async def test_a_yes_lapses_when_the_terms_move_and_its_figure_is_held_again(
    agent_server: Server, db: Db, stale: Stale, terms_move: bool
) -> None:
    server = agent_server
    d = await deal(server)  # ask $8,000, floor $6,000
    for bid in BIDS:
        await _say(server, d.visitor, d.room_id, bid)
    host_lines = [m.body for m in await messages_in(db, d.room_id, "host")]
    assert host_lines[-1].endswith(ASKED), host_lines[-1]
    await _say(server, d.host, d.room_id, YES)
    entry = (await memory(db, d.room_id))["pendingPrincipalDecisions"][KEY]
    assert entry["principalInstruction"] == YES
    assert "lapsed" not in entry
    assert firewall.instructed_amounts(await memory(db, d.room_id)) == {Decimal(6000)}

    if terms_move:
        await _say(server, d.visitor, d.room_id, MOVE)
        entry = (await memory(db, d.room_id))["pendingPrincipalDecisions"][KEY]
        assert entry["lapsed"] == {
            "reason": "the terms moved after it was given: sponsored post x2"
        }
        assert firewall.instructed_amounts(await memory(db, d.room_id)) == set()
    stale.settling = True
    await _say(server, d.visitor, d.room_id, BACK)

    settles = [
        s
        for s in await rows(db, Dispatch, d.room_id)
        if (s.payload or {}).get("ruling") == SETTLE.model_dump()
    ]
    assert len(settles) == 1
    visitor_lines = [m.body for m in await messages_in(db, d.room_id, "visitor")]
    host_lines = [m.body for m in await messages_in(db, d.room_id, "host")]
    if terms_move:
        assert settles[0].status == "held"
        assert host_lines[-1].startswith("Before I pass this on to Acme Brand"), host_lines[-1]
        assert not any("$6,000 for the sponsored post works" in line for line in visitor_lines)
    else:
        assert settles[0].status == "delivered"
        assert any("$6,000 for the sponsored post works" in line for line in visitor_lines)
