"""A goal flip's "notify" effect (GN1-GN2 in dealroom/domain/goal_notices.py): code's table decides
who hears a flip, and the notice goes through the one send path."""

from __future__ import annotations

import pytest

from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import GoalRuling, PersonaOutput
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.e2e.test_guard import persona_in
from tests.support.graphql import post
from tests.support.recording import RecordingClient, dispatches, pane_keys, pane_messages
from tests.support.turns import deal


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


async def test_the_brand_walking_away_is_told_to_the_talent_by_the_talents_agent(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    d = await deal(agent_server)
    said = "We'll pass on this one, thanks."
    model.script = persona_in(
        "visitor",
        said,
        PersonaOutput(
            reply="Understood, thanks for your time.",
            goals=[GoalRuling(key="new-offer", status="abandoned", reason="The brand passed.")],
        ),
    )
    await post(d.visitor, d.room_id, said)
    await agent_server.settle()

    keys = await pane_keys(db, d.room_id)
    [notice] = [x for x in await dispatches(db, d.room_id) if x.payload.get("origin") == "goal"]
    assert (keys[notice.from_participant_id], keys[notice.to_participant_id]) == (
        "visitor",
        "host",
    )
    assert notice.status == "delivered"
    host = [m.body for m in await pane_messages(db, d.room_id, "host")]
    assert any("ended without a deal" in body for body in host)


async def test_a_flip_the_talents_own_agent_ruled_notifies_nobody(
    agent_server: Server, model: RecordingClient, db: Db
) -> None:
    """GN1: the talent's side was there; and no table entry notifies the brand."""
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we'd like a sponsored post in May.")
    await agent_server.settle()
    said = "Drop this one, I'm not interested."
    model.script = persona_in(
        "host",
        said,
        PersonaOutput(
            reply="Understood.",
            goals=[GoalRuling(key="new-offer", status="abandoned", reason="Dev dropped it.")],
        ),
    )
    await post(d.host, d.room_id, said)
    await agent_server.settle()
    assert [x for x in await dispatches(db, d.room_id) if x.payload.get("origin") == "goal"] == []
