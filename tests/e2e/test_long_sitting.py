"""A continuous sitting is never cut, however long (seed 000): a 600-line sitting reaches the
persona and Distil whole, and the request keeps the session ahead of what changes every turn
(so consecutive requests of one sitting share their longest prefix)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select

from dealroom.agents.models.base import AgentName, ModelClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message, Participant
from dealroom.persistence.repositories import RoomRepository
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.recording import RecordingClient
from tests.support.turns import deal

LINES = 600


@pytest.fixture
def model() -> ModelClient:
    return RecordingClient(OfflineClient())


async def _sitting(db: Db, room_id: str, server: Server) -> None:
    """600 lines of one continuous sitting in the visitor's pane (the clock does not move)."""
    rid = uuid.UUID(room_id)
    now = server.clock.now()
    try:
        pane = await db.scalar(
            select(Participant).where(Participant.room_id == rid, Participant.key == "visitor")
        )
        assert pane is not None
        for number in range(LINES):
            seq = await RoomRepository(db).next_event_seq(rid, now)
            await db.add(
                Message(
                    id=uuid.uuid4(),
                    room_id=rid,
                    participant_id=pane.id,
                    seq=seq,
                    author_kind="participant" if number % 2 == 0 else "agent",
                    body=f"line {number}",
                    session_no=1,
                    client_message_id=f"sitting:{number}",
                    created_at=now,
                )
            )
        await db.commit()
    finally:
        await db.close()


async def test_a_600_line_sitting_reaches_the_agents_whole(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    room = await deal(agent_server)
    await _sitting(db, room.room_id, agent_server)
    agent_server.clock.advance(timedelta(minutes=2))  # under the pause: the same sitting
    await post(room.visitor, room.room_id, "And one more thing.")
    await agent_server.settle(timeout=120)

    for agent in (AgentName.PERSONA, AgentName.DISTIL):
        request = next(
            r for r in model.requests if r.agent is agent and r.context.get("pane") == "visitor"
        )
        bodies = [line["body"] for line in request.context["session"]]
        assert bodies[:2] == ["line 0", "line 1"], agent
        assert bodies[LINES - 1] == f"line {LINES - 1}"
        assert bodies[LINES] == "And one more thing."
        assert "line 0" in request.prompt
    prompt = next(
        r.prompt
        for r in model.requests
        if r.agent is AgentName.PERSONA and r.context.get("pane") == "visitor"
    )
    # The append-only session comes before what changes every turn.
    assert prompt.index("line 599") < prompt.index("MEMORY") < prompt.index("DEAL STAGE")


async def test_a_negotiation_in_one_sitting_stays_one_session_across_the_deliveries(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """The other side's answer, delivered into a live sitting, continues it: the agent that
    says it reads what was just said in the pane (S3 only opens a session in a quiet pane)."""
    d = await deal(agent_server)
    for line in (
        "Hi, I'm Mara from Acme. We'd like a sponsored post on 15 March 2027.",
        "We can pay $7,000 for it.",
    ):
        await post(d.visitor, d.room_id, line)
        await agent_server.settle()
    try:
        rows = list(
            await db.scalars(
                select(Message)
                .join(Participant, Participant.id == Message.participant_id)
                .where(Message.room_id == uuid.UUID(d.room_id), Participant.key == "visitor")
                .order_by(Message.seq)
            )
        )
    finally:
        await db.close()
    delivered = [m for m in rows if m.relayed_dispatch_id is not None]
    assert delivered, [m.body for m in rows]  # the host side's answer reached the pane
    assert {m.session_no for m in rows} == {rows[0].session_no}, [
        (m.session_no, m.body) for m in rows
    ]
    saying = [
        r.text
        for r in model.requests
        if r.agent is AgentName.PERSONA and "DELIVER NOW" in r.text and r.visitor_facing
    ]
    assert saying
    assert "We can pay $7,000 for it." in saying[-1]
