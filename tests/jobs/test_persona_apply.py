"""The persona's apply writes its pane in cursor order (the pane log): the reply is appended first,
then anything else the same unit stores in the pane (a held send's question), so each event's
``prev`` is the one before it and the pane's tail is its newest message."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from dealroom.agents.models.base import AgentName, Chunk, ModelClient, ModelRequest, Usage
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaInput, PersonaOutput, Send
from dealroom.persistence.db import Db
from dealroom.persistence.models import Participant
from tests.conftest import Server
from tests.support.graphql import post
from tests.support.turns import deal, messages_in

REPLY = "Before it goes out, one question for you."


class LeakyHostSide(OfflineClient):
    """The offline engine, except that the host side, told to pass something on, sends its
    principal's floor to the visitor: a send the firewall holds for the principal (F1)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        if request.agent is AgentName.PERSONA:
            inputs = PersonaInput.of(request)
            if inputs.pane == "host" and "pass it on" in inputs.trigger.body:
                output = PersonaOutput(
                    reply=REPLY,
                    sends=[Send(to="visitor", substance="My floor is $6,000 a sponsored post.")],
                )
                yield Chunk(output.model_dump_json())
                yield Chunk("", usage=Usage())
                return
        async for chunk in super().stream(request):
            yield chunk


@pytest.fixture
def model() -> ModelClient:
    return LeakyHostSide()


async def test_a_held_sends_question_follows_the_reply_and_ends_the_pane(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, what would one sponsored post cost?")
    await agent_server.settle()
    await post(d.host, d.room_id, "Fine, pass it on.")
    await agent_server.settle()

    pane = await messages_in(db, d.room_id, "host")
    [reply] = [m for m in pane if m.body == REPLY]
    [question] = [m for m in pane if "Shall I send it as written?" in m.body]
    assert reply.seq < question.seq  # the reply's cursor first: it is appended first
    assert pane[-1].id == question.id
    try:
        tail = await db.scalar(
            select(Participant.pane_seq).where(Participant.id == question.participant_id)
        )
    finally:
        await db.close()
    assert tail == question.seq  # the pane's tail (migration 0011's trigger) is its newest
