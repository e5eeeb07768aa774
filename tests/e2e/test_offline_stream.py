"""The offline engine paces its streamed reply as served (``DEALROOM_OFFLINE_STREAM_MS``), so
a client sees the typing indicator and the reply grow over several deltas, as with a model.
Unpaced (the suite's default), the pipeline's coalescing sends the reply as one delta."""

from __future__ import annotations

import pytest

from dealroom.agents.models.base import ModelClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.offline.client import WORDS_PER_PIECE, paced_pieces
from dealroom.agents.persona import PersonaOutput
from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.jobs.wiring import create_model_client
from tests.conftest import Server
from tests.support.graphql import post, subscribe
from tests.support.turns import PANE_EVENTS_FULL, deal

PACE = 0.08


@pytest.fixture
def model() -> ModelClient:
    return OfflineClient(stream_delay=PACE)


def test_the_setting_paces_the_offline_engine() -> None:
    client = create_model_client(Settings(model_engine="offline", offline_stream_ms=80))
    assert isinstance(client, OfflineClient)
    assert client.stream_delay == pytest.approx(PACE)
    assert Settings.model_fields["offline_stream_ms"].default > 50  # as served: it shows
    unpaced = create_model_client(Settings(model_engine="offline", offline_stream_ms=0))
    assert isinstance(unpaced, OfflineClient)
    assert unpaced.stream_delay == 0


def test_the_reply_is_cut_a_few_words_a_piece_and_the_pieces_join_to_the_output() -> None:
    reply = 'Thanks — "sponsored post" at $8,000,\nwith 50% upfront: shall I write it up?'
    text = PersonaOutput(reply=reply, plan="a private plan with spaces").model_dump_json()
    pieces = paced_pieces(text)
    assert "".join(pieces) == text
    *reply_pieces, rest = pieces
    assert len(reply_pieces) == -(-len(reply.split()) // WORDS_PER_PIECE)
    assert rest.startswith('","goals"')  # the rest of the object comes in one piece
    assert paced_pieces("[1, 2]") == ["[1, 2]"]


async def test_with_pacing_on_a_reply_arrives_as_several_deltas(agent_server: Server) -> None:
    d = await deal(agent_server)
    variables = {"roomId": d.room_id, "seat": "VISITOR", "after": event_cursor(0)}
    async with subscribe(
        agent_server.ws_url, PANE_EVENTS_FULL, variables, headers=dict(d.visitor.headers)
    ) as sub:
        posted = await post(d.visitor, d.room_id, "Hi, could you do a sponsored post for us?")
        events = []
        while True:
            event = await sub.event(timeout=10)
            events.append(event)
            message = event.get("message") or {}
            if message.get("authorKind") == "AGENT" and message["id"] != posted["id"]:
                break
    reply = events[-1]["message"]
    kinds = [e["__typename"] for e in events]
    deltas = [
        e["delta"]
        for e in events
        if e["__typename"] == "MessageDelta" and e["messageId"] == reply["id"]
    ]
    assert len(deltas) > 1, kinds
    assert "".join(deltas) == reply["body"]
    assert kinds.index("AgentTyping") < kinds.index("MessageDelta")
