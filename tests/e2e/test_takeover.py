"""Taking over well: the takeover answers with the pane's transcript and its agent's last plan;
the people in the room read the operator's lines as the agent's; a release writes one system
line in the pane; and the agent's next turn reads what the operator said, as its seat's own."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import update

from dealroom.agents.models.base import AgentName
from dealroom.agents.models.offline import OfflineClient
from dealroom.persistence.db import Db
from dealroom.persistence.models import Room
from dealroom.services.ops.actions import HANDBACK_LINE
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.offers import open_deal, settle
from tests.support.partners import make_operator
from tests.support.recording import RecordingClient, read_pane
from tests.support.turns import memory, messages_in

TAKE = """
mutation($id: ID!) {
  takeOverPane(roomId: $id, seat: VISITOR) {
    seat lastPlan
    transcript(first: 50) { seat nodes { body authorKind } hasNextPage before }
  }
}
"""
SAY = """
mutation($id: ID!, $body: String!, $cid: String!) {
  operatorPost(roomId: $id, seat: VISITOR, body: $body, clientMessageId: $cid) { authorKind }
}
"""
RELEASE = "mutation($id: ID!) { releasePane(roomId: $id, seat: VISITOR) }"
OPS_TRANSCRIPT = """
query($id: ID!) {
  opsRoom(roomId: $id) { transcript(seat: VISITOR, first: 50) { nodes { body authorKind } } }
}
"""
ANSWER = "Yes, 5000 works for us: I will write it up."
PLAN = "Ask which dates suit them; hold the fee at 6000."


async def _plan(db: Db, room_id: str, plan: str) -> None:
    """A row factory: the pane agent's plan as a turn would have left it."""
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        document = dict(room.memory or {})
        document["plans"] = {**document.get("plans", {}), "visitor": plan}
        await db.execute(update(Room).where(Room.id == room.id).values(memory=document))
        await db.commit()
    finally:
        await db.close()


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


def _lines(pages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (e["node"]["authorKind"], e["node"]["body"])
        for p in pages
        for e in p["room"]["pane"]["messages"]["edges"]
    ]


async def test_take_over_answer_release_and_the_agent_reads_it(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    d = await open_deal(agent_server)
    await post(d.visitor, d.room_id, "Hello there, can we talk about a sponsored post?")
    await settle(agent_server)
    operator = await make_operator(db, agent_server.client(), "opsjane")

    # The takeover shows what the operator answers: the pane, newest first, and the plan.
    taken = (await operator.query(TAKE, {"id": d.room_id}))["takeOverPane"]
    assert (await memory(db, d.room_id))["plans"]["visitor"] == ""  # the offline engine's
    assert taken["lastPlan"] is None
    await _plan(db, d.room_id, PLAN)
    taken = (await operator.query(TAKE, {"id": d.room_id}))["takeOverPane"]  # idempotent
    assert taken["lastPlan"] == PLAN
    shown = [(n["authorKind"], n["body"]) for n in taken["transcript"]["nodes"]]
    assert shown[-1] == ("PARTICIPANT", "Hello there, can we talk about a sponsored post?")
    assert shown[0][0] == "AGENT"
    assert taken["transcript"]["seat"] == "visitor"

    # The agent stays silent; the operator answers in its seat.
    await post(d.visitor, d.room_id, "Would 5000 work?")
    await settle(agent_server)
    said = await operator.query(SAY, {"id": d.room_id, "body": ANSWER, "cid": "a1"})
    assert said["operatorPost"]["authorKind"] == "OPERATOR"  # to the operator
    seen = _lines(await read_pane(d.visitor, d.room_id, "VISITOR"))
    assert seen[-2:] == [("PARTICIPANT", "Would 5000 work?"), ("AGENT", ANSWER)]
    assert "OPERATOR" not in {kind for kind, _ in seen}  # the visitor is not told
    host_view = _lines(await read_pane(d.host, d.room_id, "VISITOR"))
    assert host_view[-1] == ("AGENT", ANSWER)
    ops_view = (await operator.query(OPS_TRANSCRIPT, {"id": d.room_id}))["opsRoom"]
    assert ops_view["transcript"]["nodes"][0] == {"body": ANSWER, "authorKind": "OPERATOR"}

    # Release: one system line, however often it is asked for.
    assert (await operator.query(RELEASE, {"id": d.room_id}))["releasePane"] is True
    assert (await operator.query(RELEASE, {"id": d.room_id}))["releasePane"] is False
    seen = _lines(await read_pane(d.visitor, d.room_id, "VISITOR"))
    assert seen[-2:] == [("AGENT", ANSWER), ("SYSTEM", HANDBACK_LINE)]
    stored = await messages_in(db, d.room_id, "visitor")
    assert [m.author_kind for m in stored].count("system") == 1
    assert [m.author_kind for m in stored[-2:]] == ["operator", "system"]

    # The agent's next turn reads the operator's answer as its own seat's, then the handback.
    before = len(model.where(AgentName.PERSONA, pane="visitor"))
    await post(d.visitor, d.room_id, "Great, what happens next?")
    await settle(agent_server)
    turns = model.where(AgentName.PERSONA, pane="visitor")[before:]
    assert turns, "the persona did not answer after the release"
    prompt = turns[-1].text
    assert ANSWER in prompt
    assert HANDBACK_LINE in prompt
    assert f"operator: {ANSWER}" not in prompt
    answer_at = prompt.index(ANSWER)
    assert prompt.index(HANDBACK_LINE) > answer_at
    assert prompt.index("Great, what happens next?") > answer_at
    replies = _lines(await read_pane(d.visitor, d.room_id, "VISITOR"))
    assert replies[-1][0] == "AGENT"
    assert replies[-2] == ("PARTICIPANT", "Great, what happens next?")
