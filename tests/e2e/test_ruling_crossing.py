"""Only the ruling crosses (C1/C2): even when the host-side model writes private text into a
send to the visitor, the visitor-facing agent, the visitor's pane and memory see only the
code-rendered ruling."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Ruling, Send
from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.recording import RecordingClient, canary
from tests.support.turns import deal, memory, messages_in, rows

SECRET_SUBSTANCE = canary("substance")
SECRET_QUESTION = canary("question")
SECRET_DELIVERABLE = canary("deliverable")


def leaky_host(request: ModelRequest) -> BaseModel | None:
    """A host-side persona that puts private text everywhere a send lets it."""
    trigger = request.context.get("trigger") or {}
    host_pane = request.agent is AgentName.PERSONA and request.context.get("pane") == "host"
    if host_pane and trigger.get("kind") == "delivery":
        return PersonaOutput(
            reply="They asked $4,000; I'm countering at $8,000.",
            sends=[
                Send(
                    to="visitor",
                    substance=f"Counter at 8000; our floor is 6000. {SECRET_SUBSTANCE}",
                    open_questions=[f"Anything else? {SECRET_QUESTION}"],
                    ruling=Ruling(
                        decision="counter",
                        amount="8000",
                        currency="USD",
                        deliverable=f"sponsored post, never below 6000 {SECRET_DELIVERABLE}",
                    ),
                )
            ],
        )
    return None


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient(), script=leaky_host)


async def test_the_host_sides_free_text_never_crosses_with_a_ruling(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Could you do a sponsored post for $4,000?")
    await agent_server.settle()
    secrets = (SECRET_SUBSTANCE, SECRET_QUESTION, SECRET_DELIVERABLE, "6000")
    visitor_requests = model.where(visitor_facing=True)
    delivery = [
        r for r in visitor_requests if (r.context.get("trigger") or {}).get("kind") == "delivery"
    ]
    assert len(delivery) == 1
    assert delivery[0].context["trigger"]["ruling"] == {
        "decision": "counter",
        "amount": "8000",
        "currency": "USD",
        "deliverable": None,  # free text in a slug field is dropped, not passed on
    }
    for request in visitor_requests:
        sent = request.text + json.dumps(request.context)
        for secret in secrets:
            assert secret not in sent
    for message in await messages_in(db, d.room_id, "visitor"):
        for secret in secrets:
            assert secret not in message.body
    document = json.dumps(await memory(db, d.room_id))
    for secret in (SECRET_QUESTION, SECRET_DELIVERABLE):
        assert secret not in document
    crossed = [x for x in await rows(db, Dispatch, d.room_id) if "ruling" in x.payload]
    assert [x.substance for x in crossed] == ["Dev Raman can do this at $8,000."]
    assert crossed[0].payload["open_questions"] == []


def chatty_host(request: ModelRequest) -> BaseModel | None:
    """A host-side persona that answers the visitor's news with free text, no ruling."""
    trigger = request.context.get("trigger") or {}
    host_pane = request.agent is AgentName.PERSONA and request.context.get("pane") == "host"
    if host_pane and trigger.get("kind") == "delivery":
        return PersonaOutput(
            reply="They asked $4,000.",
            sends=[Send(to="visitor", substance=f"She'd go to 4,000 at most. {SECRET_SUBSTANCE}")],
        )
    return None


@pytest.mark.parametrize("model", [RecordingClient(OfflineClient(), script=chatty_host)])
async def test_c3_woken_by_the_other_side_the_host_side_answers_only_with_a_ruling(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Could you do a sponsored post for $4,000?")
    await agent_server.settle()
    sent = await rows(db, Dispatch, d.room_id)
    # The visitor's note reached the host; the host side's free-text answer did not cross.
    assert [(x.status, "ruling" in x.payload) for x in sent] == [("delivered", False)]
    for request in model.where(visitor_facing=True):
        assert SECRET_SUBSTANCE not in request.text + json.dumps(request.context)
    bodies = [m.body for m in await messages_in(db, d.room_id, "visitor")]
    assert len(bodies) == 2  # the visitor's post and the agent's immediate reply
    assert all(SECRET_SUBSTANCE not in body for body in bodies)
