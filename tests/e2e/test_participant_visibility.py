"""Who reads which pane in a room of four, over the real server: the host (``host``), its
manager (``host_2``), the brand's lead (``visitor``) and the lead's colleague (``visitor_2``).

Access R2 (the host side reads every pane), R3 (anyone else only its own), R8 (a shared pane
is read by its side); a pane addressed by side is the reader's own there; the manager's agent
reads as the host's (visibility); and an agent's send never links two brand-side panes
(seats.may_send)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.persona import PersonaOutput, Send
from dealroom.domain.cursors import event_cursor
from dealroom.domain.seats import Seat, side_of
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import Client, open_room, post, subscribe
from tests.support.recording import RecordingClient, dispatches, pane_keys, pane_messages
from tests.support.rooms import account_client
from tests.support.team import (
    PANE_BY_PARTICIPANT,
    PANE_BY_SEAT,
    PANE_EVENTS_BY_PARTICIPANT,
    bodies,
    participant_ids,
    room_panes,
    seat_member,
    share_pane,
)
from tests.support.turns import BRAND, PANE_EVENTS_FULL, Deal, deal

EVERY_PANE = ["host", "host_2", "visitor", "visitor_2"]
PROPOSAL = "We can pay $7,000 for a sponsored post on 15 March 2027."


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


@dataclass
class Four:
    host: Client
    manager: Client
    lead: Client
    colleague: Client
    room_id: str
    ids: dict[str, str]


async def _four(server: Server, db: Db, *, agents: bool = False) -> Four:
    """A deal room with a manager and a colleague seated; with ``agents`` (a server whose
    agents run), the host told its agent its standing rules first."""
    if agents:
        room = await deal(server)
    else:
        host, lead = server.client(), server.client()
        await account_client(host, "devraman", "Dev Raman")
        await account_client(lead, *BRAND)
        opened = await open_room(lead, "devraman")
        room = Deal(host, lead, "", opened["room"]["id"])
    manager, colleague = server.client(), server.client()
    await seat_member(
        db, room.room_id, "host_2", await account_client(manager, "morganmgr", "Morgan Manager")
    )
    await seat_member(
        db, room.room_id, "visitor_2", await account_client(colleague, "leelegal", "Lee Legal")
    )
    ids = await participant_ids(room.host, room.room_id)
    return Four(room.host, manager, room.visitor, colleague, room.room_id, ids)


async def _keys_read_by(client: Client, room_id: str) -> list[str]:
    return sorted(p["key"] for p in (await room_panes(client, room_id))["panes"])


async def test_the_host_side_reads_every_pane_and_a_colleague_only_its_own(
    server: Server, db: Db
) -> None:
    room = await _four(server, db)
    assert set(room.ids) == set(EVERY_PANE)  # the host knows everyone

    assert await _keys_read_by(room.host, room.room_id) == EVERY_PANE  # R2
    assert await _keys_read_by(room.manager, room.room_id) == EVERY_PANE  # R2, the host's team
    assert await _keys_read_by(room.lead, room.room_id) == ["visitor"]  # R3
    assert await _keys_read_by(room.colleague, room.room_id) == ["visitor_2"]  # R3

    for key in EVERY_PANE:  # the manager reads each pane by participant too
        found = await room.manager.query(
            PANE_BY_PARTICIPANT, {"id": room.room_id, "participantId": room.ids[key]}
        )
        assert found["room"]["pane"]["key"] == key
    for key in ("host", "host_2", "visitor"):
        codes = await room.colleague.error_codes(
            PANE_BY_PARTICIPANT, {"id": room.room_id, "participantId": room.ids[key]}
        )
        assert codes == ["FORBIDDEN"], key


async def test_a_colleague_addressing_the_visitor_seat_reads_and_writes_its_own_pane(
    server: Server, db: Db
) -> None:
    room = await _four(server, db)
    pane = (await room.colleague.query(PANE_BY_SEAT, {"id": room.room_id, "seat": "VISITOR"}))[
        "room"
    ]["pane"]
    assert pane == {"key": "visitor_2", "participantId": room.ids["visitor_2"]}

    await post(room.colleague, room.room_id, "Hello from legal.", seat="VISITOR")

    assert [m.body for m in await pane_messages(db, room.room_id, "visitor_2")] == [
        "Hello from legal."
    ]
    assert await pane_messages(db, room.room_id, "visitor") == []
    lead_sees = await room_panes(room.lead, room.room_id)
    assert "Hello from legal." not in str(lead_sees)


async def test_a_colleague_follows_its_own_pane_and_nothing_of_the_leads(
    server: Server, db: Db
) -> None:
    room = await _four(server, db)
    async with subscribe(
        server.ws_url,
        PANE_EVENTS_FULL,
        {"roomId": room.room_id, "seat": "VISITOR", "after": event_cursor(0)},
        headers=dict(room.colleague.headers),
    ) as sub:
        await post(room.lead, room.room_id, "The lead's own words.")
        await post(room.colleague, room.room_id, "The colleague's own words.")
        event = await sub.event()
    assert event["message"]["body"] == "The colleague's own words."

    async with subscribe(
        server.ws_url,
        PANE_EVENTS_BY_PARTICIPANT,
        {"roomId": room.room_id, "participantId": room.ids["visitor"]},
        headers=dict(room.colleague.headers),
    ) as refused:
        payload = await refused.next()
    assert [e["extensions"]["code"] for e in payload.get("errors") or []] == ["FORBIDDEN"]


async def test_a_shared_colleague_pane_is_read_by_the_lead(server: Server, db: Db) -> None:
    room = await _four(server, db)
    await post(room.colleague, room.room_id, "Legal's notes on usage rights.")
    ask = {"id": room.room_id, "participantId": room.ids["visitor_2"]}
    assert await room.lead.error_codes(PANE_BY_PARTICIPANT, ask) == ["FORBIDDEN"]

    await share_pane(db, room.room_id, "visitor_2")  # R8

    assert await _keys_read_by(room.lead, room.room_id) == ["visitor", "visitor_2"]
    lead_view = await room_panes(room.lead, room.room_id)
    assert bodies(lead_view, "visitor_2") == ["Legal's notes on usage rights."]
    shared = [p["key"] for p in lead_view["participants"] if p["sharedWithSide"]]
    assert shared == ["visitor_2"]
    # sharing is one way: the colleague still reads only its own pane
    assert await _keys_read_by(room.colleague, room.room_id) == ["visitor_2"]


def _host_memory(request: Any) -> dict[str, Any]:
    memory = request.context.get("memory")
    host = memory.get("host") if isinstance(memory, dict) else None
    return host if isinstance(host, dict) else {}


async def test_the_managers_post_lands_in_its_pane_and_its_agent_reads_as_the_host(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    room = await _four(agent_server, db, agents=True)

    await post(room.manager, room.room_id, "Hold firm on usage rights, please.")
    await agent_server.settle()

    manager_pane = [m.body for m in await pane_messages(db, room.room_id, "host_2")]
    assert manager_pane[0] == "Hold firm on usage rights, please."
    assert len(manager_pane) >= 2, "the manager's agent did not answer in its pane"
    host_pane = [m.body for m in await pane_messages(db, room.room_id, "host")]
    assert "Hold firm on usage rights, please." not in host_pane
    personas = model.where(AgentName.PERSONA, pane="host_2")
    assert personas, "no persona ran for the manager's pane"
    for request in personas:  # the host's private rules: only a host-side view holds them
        assert "limits" in _host_memory(request), _host_memory(request)


async def test_the_managers_requests_are_not_labelled_visitor_facing(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """The manager's pane gets the host's view (visibility.is_visitor_facing is False), so a
    request built for it must not claim to face the visitor: the label is what confidentiality
    checks sort requests by (RecordingClient.where(visitor_facing=...))."""
    room = await _four(agent_server, db, agents=True)
    await post(room.manager, room.room_id, "Hold firm on usage rights, please.")
    await agent_server.settle()

    mine = model.where(pane="host_2")
    assert mine, "no agent ran for the manager's pane"
    labelled = sorted({str(r.agent) for r in mine if r.visitor_facing})
    assert labelled == []


async def test_no_send_links_the_two_brand_side_panes(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    room = await _four(agent_server, db, agents=True)
    for client in (room.lead, room.colleague):
        await post(client, room.room_id, PROPOSAL)
    await agent_server.settle()
    for client in (room.lead, room.colleague):
        await post(client, room.room_id, "Could you do it for $7,500 then?")
    await agent_server.settle()

    keys = await pane_keys(db, room.room_id)
    links = [
        (keys[d.from_participant_id], keys[d.to_participant_id])
        for d in await dispatches(db, room.room_id)
    ]
    assert ("visitor", "host") in links
    assert ("visitor_2", "host") in links  # both brand-side panes negotiated
    brand_to_brand = [
        (a, b) for a, b in links if side_of(a) is Seat.VISITOR and side_of(b) is Seat.VISITOR
    ]
    assert brand_to_brand == []
    assert all(b == "host" for a, b in links if side_of(a) is Seat.VISITOR)


async def test_a_brand_side_agent_that_addresses_another_pane_than_the_hosts_sends_nothing_there(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """The lead's agent misbehaves: beside its send to the host's agent it addresses the
    colleague's pane and the host's manager's. Only the send to ``host`` crosses; the others are
    dropped where sends are checked (``may_send``), and nothing lands in those panes."""
    room = await _four(agent_server, db, agents=True)
    said = "Tell everyone our ceiling is $9,250."
    sends = [
        Send(to="host", substance="Northwind Running proposes a sponsored post for $7,000."),
        Send(to="visitor_2", substance="The ceiling is $9,250; keep it to yourself."),
        Send(to="host_2", substance="The brand's ceiling is $9,250."),
    ]

    def script(request: ModelRequest) -> BaseModel | None:
        trigger = request.context.get("trigger") or {}
        if (
            request.agent is AgentName.PERSONA
            and request.context.get("pane") == "visitor"
            and trigger.get("body") == said
        ):
            return PersonaOutput(reply="Noted; I'll pass the proposal on.", sends=sends)
        return None

    model.script = script
    await post(room.lead, room.room_id, said)
    await agent_server.settle()

    keys = await pane_keys(db, room.room_id)
    links = {
        (keys[d.from_participant_id], keys[d.to_participant_id])
        for d in await dispatches(db, room.room_id)
    }
    assert ("visitor", "host") in links  # the lawful send crossed
    assert not {("visitor", "visitor_2"), ("visitor", "host_2")} & links
    for key in ("visitor_2", "host_2"):
        bodies = [m.body for m in await pane_messages(db, room.room_id, key)]
        assert not any("9,250" in body for body in bodies), (key, bodies)


OWN_PANE = "query($id: ID!) { room(id: $id) { pane { key } } }"
BOTH = """
query($id: ID!, $participantId: ID!) {
  room(id: $id) { pane(seat: HOST, participantId: $participantId) { key } }
}
"""


async def test_a_pane_asked_for_by_neither_seat_nor_participant_is_the_readers_own(
    server: Server, db: Db
) -> None:
    room = await _four(server, db)
    for client, key in (
        (room.host, "host"),
        (room.manager, "host_2"),
        (room.lead, "visitor"),
        (room.colleague, "visitor_2"),
    ):
        found = await client.query(OWN_PANE, {"id": room.room_id})
        assert found["room"]["pane"]["key"] == key
    codes = await room.host.error_codes(
        BOTH, {"id": room.room_id, "participantId": room.ids["visitor"]}
    )
    assert codes == ["BAD_USER_INPUT"]
