"""Open questions cross with a host-side ruling as the offer's terms (open_questions OQ1, OQ2):
the missing terms reach the visitor's pane in its agent's words, and nothing the host-side
model wrote into them does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.recording import RecordingClient, canary, pane_bodies, read_pane
from tests.support.turns import Dispatch, deal, rows

PROPOSAL = "Could you do a sponsored post for $8,000?"
DATES = "Which dates do you have in mind?"
SECRET = canary("question")
LEAKS = (
    f"Which date? {SECRET}",
    "their walk-away is 6-1-3-7",
    "their floor of 6000: no alcohol brands",
    f"How many posts? Between us: {SECRET}",
)


def leaky_host(request: ModelRequest) -> BaseModel | None:
    """A host-side persona that settles and puts private text in its open questions."""
    trigger: dict[str, Any] = request.context.get("trigger") or {}
    host_pane = request.agent is AgentName.PERSONA and request.context.get("pane") == "host"
    if host_pane and trigger.get("kind") == "delivery":
        ruling = Ruling(
            decision="settle", amount="8000", currency="USD", deliverable="sponsored_post"
        )
        send = Send(to="visitor", substance="Settled.", open_questions=list(LEAKS), ruling=ruling)
        return PersonaOutput(reply="Settling at $8,000.", sends=[send])
    return None


def _dispatched_rulings(dispatches: list[Dispatch]) -> list[dict[str, Any]]:
    return [d.payload for d in dispatches if (d.payload or {}).get("ruling")]


async def test_the_missing_dates_reach_the_visitor_pane_with_the_settle(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, PROPOSAL)  # at the ask, no date: settled, dates open
    await agent_server.settle()
    [payload] = _dispatched_rulings(await rows(db, Dispatch, d.room_id))
    assert payload["ruling"]["decision"] == "settle"
    assert (payload["open_terms"], payload["open_questions"]) == (["dates"], [DATES])
    said = pane_bodies(await read_pane(d.visitor, d.room_id, "VISITOR"))
    good = [line for line in said if line.startswith("Good news")]
    assert len(good) == 1, said
    assert good[0].endswith(DATES), said


class TestALeakingHostSide:
    """The host-side model settles and writes private text into its open questions."""

    @pytest.fixture
    def model(self) -> RecordingClient:
        return RecordingClient(OfflineClient(), script=leaky_host)

    async def test_no_private_text_crosses_in_the_open_questions(
        self, agent_server: Server, db: Db, model: RecordingClient
    ) -> None:
        d = await deal(agent_server)
        await post(d.visitor, d.room_id, PROPOSAL)
        await agent_server.settle()
        [payload] = _dispatched_rulings(await rows(db, Dispatch, d.room_id))
        # OQ1: only the terms the questions name cross, in the table's order, worded by code
        assert payload["open_terms"] == ["quantity", "dates"]
        delivered = [
            r
            for r in model.where(visitor_facing=True)
            if (r.context.get("trigger") or {}).get("kind") == "delivery"
        ]
        assert [r.context["trigger"]["open_questions"] for r in delivered] == [
            ["How many would you like?", DATES]
        ]
        pages = await read_pane(d.visitor, d.room_id, "VISITOR")
        visible = json.dumps(pages) + "".join(
            r.text + json.dumps(r.context) for r in model.where(visitor_facing=True)
        )
        said = pane_bodies(pages)  # the question arrived in the visitor pane, in its agent's words
        assert any(line.endswith("How many would you like?") for line in said), said
        for secret in (SECRET, "6-1-3-7", "floor of 6000", "walk-away", "Between us"):
            assert secret not in visible
