"""A host's services partition its durable memory (domain/service_parts.py): a room opened from
/z/<handle>/<service> is about that service, reads the shared part and that service's part only
(at the seed, at every merge, and in its curator's input), and its Arvist writes each fact to the
part it belongs to. A room about no service behaves as before services existed."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import select

from dealroom.agents.arvist import ArvistOutput, DurableChange
from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.jobs.arvist import enqueue_arvist_for_room
from dealroom.persistence.db import Db
from dealroom.persistence.models import AccountMemory, Room
from dealroom.services.memory import durable as durable_memory
from tests.conftest import Server
from tests.support.graphql import Client, post, sign_up
from tests.support.offers import settle
from tests.support.recording import (
    RecordingClient,
    canary,
    everything_sent,
    room_memory,
    write_room_memory,
)

SET_SERVICES = """
mutation($names: [String!]!) { setServices(names: $names) { key name } }
"""
MY_SERVICES = "{ me { services { key name } } }"
OPEN = """
mutation($handle: String!, $service: String, $new: Boolean! = false) {
  openVisitorRoom(handle: $handle, service: $service, newConversation: $new) {
    guestKey created room { id service { key name } }
  }
}
"""
SPONSORED_FLOOR = "4317"
KEYNOTE = {"floor": "2500", "currency": "USD"}


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


async def open_for(client: Client, handle: str, service: str | None, new: bool = False) -> Any:
    data = await client.query(OPEN, {"handle": handle, "service": service, "new": new})
    payload = data["openVisitorRoom"]
    if payload["guestKey"]:
        client.headers["X-Guest-Key"] = payload["guestKey"]
    return payload


async def host_with_services(server: Server, db: Db) -> tuple[Client, uuid.UUID, str]:
    """A host selling sponsored posts and speaking gigs, with a standing fact for all of them,
    a sponsored-post floor and private term, and a keynote floor. Returns the host, its id and
    the sponsored-post part's private term (a canary)."""
    host = server.client()
    host_id = uuid.UUID((await sign_up(host, "devraman", "Dev Raman"))["account"]["id"])
    listed = await host.query(SET_SERVICES, {"names": ["Sponsored post", "Speaking gig"]})
    assert listed["setServices"] == [
        {"key": "sponsored_post", "name": "Sponsored post"},
        {"key": "speaking_gig", "name": "Speaking gig"},
    ]
    secret = canary("sponsored-term")

    def standing(document: dict[str, Any]) -> dict[str, Any]:
        document["style"] = "brief"
        document["services"] = {
            "sponsored_post": {
                "limits": {"sponsored_post": {"floor": SPONSORED_FLOOR, "currency": "USD"}},
                "private_terms": [secret],
            },
            "speaking_gig": {"limits": {"keynote": KEYNOTE}},
        }
        return document

    try:
        await durable_memory.write(db, host_id, standing, now=server.clock.now(), agent="arvist")
        await db.commit()
    finally:
        await db.close()
    return host, host_id, secret


async def durable_document(db: Db, account_id: uuid.UUID) -> dict[str, Any]:
    try:
        row = await db.scalar(select(AccountMemory).where(AccountMemory.account_id == account_id))
        assert row is not None
        return dict(row.document)
    finally:
        await db.close()


async def test_a_speaking_gig_room_never_reads_the_sponsored_post_floor(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    _host, host_id, secret = await host_with_services(server, db)
    brand = server.client()
    await sign_up(brand, "acme", "Mara Ellison")
    opened = await open_for(brand, "devraman", "speaking-gig")  # as the link spells it
    assert opened["room"]["service"] == {"key": "speaking_gig", "name": "Speaking gig"}
    room_id = opened["room"]["id"]

    seeded = await room_memory(db, room_id)
    assert seeded["host"]["limits"] == {"keynote": KEYNOTE}
    assert seeded["host"]["style"] == "brief"  # the shared part
    assert "services" not in seeded["host"]

    # The account learns more about both services: the room is due a merge.
    def more(document: dict[str, Any]) -> dict[str, Any]:
        document["services"]["sponsored_post"]["limits"]["sponsored_post"]["floor"] = "4444"
        document["services"]["speaking_gig"]["rates"] = {"keynote": {"ask": "5000 USD"}}
        return document

    try:
        await durable_memory.write(db, host_id, more, now=server.clock.now(), agent="arvist")
        await db.commit()
    finally:
        await db.close()
    await post(brand, room_id, "Hi, I'm Mara from Acme. We'd like a keynote in March.")
    await settle(server)

    merged = await room_memory(db, room_id)
    assert merged["host"]["rates"]["keynote"] == {"ask": "5000 USD"}  # the merge ran
    assert "sponsored_post" not in merged["host"].get("limits", {})
    everything = json.dumps(merged) + "".join(everything_sent(r) for r in model.requests)
    assert model.requests  # the turn did call the models
    # The agent is told what the room is about (the service's name is public).
    persona = [r.text for r in model.requests if r.agent.value == "persona"]
    assert any("room_service" in text and "Speaking gig" in text for text in persona), persona
    for value in (SPONSORED_FLOOR, "4444", secret):
        assert value not in everything, value

    # A sponsored-post room of the same host reads its own part.
    other = server.client()
    await sign_up(other, "globex", "Hank Scorpio")
    sponsored = await open_for(other, "devraman", "sponsored_post")
    host_branch = (await room_memory(db, sponsored["room"]["id"]))["host"]
    assert host_branch["limits"]["sponsored_post"]["floor"] == "4444"
    assert "keynote" not in host_branch["limits"]
    assert secret in json.dumps(host_branch)


async def curate(server: Server, db: Db, room_id: str) -> None:
    """The runs the curator window queues once the room went quiet, queued now."""
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        await enqueue_arvist_for_room(db, room, server.clock.now())
        await db.commit()
    finally:
        await db.close()
    server.runner.wake()
    await server.settle()


async def test_arvist_writes_each_fact_to_its_part(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    _host, host_id, secret = await host_with_services(server, db)
    brand = server.client()
    brand_id = uuid.UUID((await sign_up(brand, "acme", "Mara Ellison"))["account"]["id"])
    room_id = (await open_for(brand, "devraman", "speaking_gig"))["room"]["id"]
    await post(brand, room_id, "Hi, I'm Mara Ellison from Acme.")
    await settle(server)
    workshop = {"floor": "900", "currency": "USD"}
    memory = await room_memory(db, room_id)
    memory["host"]["limits"]["workshop"] = workshop  # a floor the curator will not name
    await write_room_memory(db, room_id, memory)

    def routed(request: ModelRequest) -> Any:
        if request.agent is AgentName.ARVIST and request.context["pane"] == "host":
            raise_to = json.dumps({"floor": "3000", "currency": "USD"})
            return ArvistOutput(
                changes=[
                    DurableChange(op="set", path="limits.keynote", value=raise_to),
                    DurableChange(op="set", path="rates.keynote.ask", value="5000 USD"),
                    DurableChange(
                        op="set", path="contact.reply_within", value="a day", part="shared"
                    ),
                    DurableChange(op="set", path="services.sponsored_post.style", value="stolen"),
                ]
            )
        return None

    model.script = routed
    model.requests.clear()
    await curate(server, db, room_id)

    doc = await durable_document(db, host_id)
    gig = doc["services"]["speaking_gig"]
    assert gig["limits"]["keynote"]["floor"] == "3000"
    assert gig["limits"]["workshop"] == workshop  # D10, to the room's own part
    assert gig["rates"] == {"keynote": {"ask": "5000 USD"}}
    assert doc["contact"] == {"reply_within": "a day"}  # shared: every service sees it
    assert "limits" not in doc
    assert "rates" not in doc
    assert doc["services"]["sponsored_post"] == {
        "limits": {"sponsored_post": {"floor": SPONSORED_FLOOR, "currency": "USD"}},
        "private_terms": [secret],
    }
    assert "services" not in gig  # a model never names a part (S3)
    host_runs = [
        r for r in model.requests if r.agent is AgentName.ARVIST and r.context["pane"] == "host"
    ]
    assert host_runs
    assert host_runs[0].context["service"] == "speaking_gig"
    for request in host_runs:  # S1: the curator's input is the room's view
        assert SPONSORED_FLOOR not in everything_sent(request)
        assert secret not in everything_sent(request)
    # the brand's own document has no part for the host's service
    assert "services" not in await durable_document(db, brand_id)


async def test_links_name_a_service_and_the_list_is_the_hosts(agent_server: Server, db: Db) -> None:
    server = agent_server
    host, _host_id, _secret = await host_with_services(server, db)
    assert (await host.query(MY_SERVICES))["me"]["services"][1]["key"] == "speaking_gig"
    guest = server.client()
    missing = await guest.error_codes(OPEN, {"handle": "devraman", "service": "podcast"})
    assert missing == ["NOT_FOUND"]

    bare = await open_for(guest, "devraman", None)
    assert bare["room"]["service"] is None
    # a bare room is not about the service a link names, so that visit starts its own room
    gig = await open_for(guest, "devraman", "speaking_gig")
    assert gig["created"]
    assert gig["room"]["service"]["key"] == "speaking_gig"
    again = await open_for(guest, "devraman", "speaking_gig")
    assert not again["created"]
    assert again["room"]["id"] == gig["room"]["id"]
    assert (await open_for(guest, "devraman", None))["room"]["id"] == gig["room"]["id"]

    # A room is about speaking gigs: that service stays offered.
    dropped = await host.error_codes(SET_SERVICES, {"names": ["Sponsored post"]})
    assert dropped == ["CONFLICT"]
    twice = await host.error_codes(SET_SERVICES, {"names": ["Keynote", "keynote!"]})
    assert twice == ["BAD_USER_INPUT"]
    kept = await host.query(SET_SERVICES, {"names": ["Speaking Gig", "Workshop"]})
    assert kept["setServices"] == [
        {"key": "speaking_gig", "name": "Speaking Gig"},
        {"key": "workshop", "name": "Workshop"},
    ]
    anonymous = await server.client().error_codes(SET_SERVICES, {"names": []})
    assert anonymous == ["UNAUTHENTICATED"]
    page = await server.client().http.get("/z/devraman/speaking_gig")
    assert page.status_code == 200


CHOOSE = """
mutation($roomId: ID!, $service: String!) {
  chooseRoomService(roomId: $roomId, service: $service) { id service { key } }
}
"""


async def test_a_service_chosen_in_the_room_is_read_from_the_next_turn(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    _host, _host_id, secret = await host_with_services(server, db)
    brand = server.client()
    await sign_up(brand, "acme", "Mara Ellison")
    room_id = (await open_for(brand, "devraman", None))["room"]["id"]
    assert "limits" not in (await room_memory(db, room_id))["host"]  # the shared part only

    outsider = server.client()
    await sign_up(outsider, "globex", "Hank Scorpio")
    assert await outsider.error_codes(CHOOSE, {"roomId": room_id, "service": "speaking_gig"}) == [
        "NOT_FOUND"
    ]
    assert await brand.error_codes(CHOOSE, {"roomId": room_id, "service": "podcast"}) == [
        "NOT_FOUND"
    ]
    chosen = await brand.query(CHOOSE, {"roomId": room_id, "service": "Speaking gig"})
    assert chosen["chooseRoomService"]["service"] == {"key": "speaking_gig"}
    again = await brand.query(CHOOSE, {"roomId": room_id, "service": "speaking_gig"})
    assert again["chooseRoomService"]["service"] == {"key": "speaking_gig"}
    assert await brand.error_codes(CHOOSE, {"roomId": room_id, "service": "sponsored_post"}) == [
        "CONFLICT"
    ]

    await post(brand, room_id, "Hi, I'm Mara from Acme. We'd like a keynote in March.")
    await settle(server)
    host_branch = (await room_memory(db, room_id))["host"]
    assert host_branch["limits"] == {"keynote": KEYNOTE}
    everything = json.dumps(host_branch) + "".join(everything_sent(r) for r in model.requests)
    for value in (SPONSORED_FLOOR, secret):
        assert value not in everything, value


HOME_ROOM = "query { me { homeRoom { id } } }"


async def test_a_floor_told_in_the_home_room_stays_out_of_a_speaking_gig_room(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    """S5 end to end: the host lists both services and tells its agent, in the home room, its
    sponsored-post fee and floor. The home room is about no service, so the floor is shared;
    a speaking-gig room still never reads it (seed, requests), while a sponsored-post room and a
    room about no service do."""
    server = agent_server
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    await host.query(SET_SERVICES, {"names": ["Sponsored post", "Speaking gig"]})
    home = (await host.query(HOME_ROOM))["me"]["homeRoom"]["id"]
    await post(host, home, "My fee for a sponsored post is $8,000, never below $6,000.")
    await settle(server)
    told = (await room_memory(db, home))["host"]
    assert told["limits"]["sponsored_post"]["floor"] == "6000"  # shared: the home has no service

    before = len(model.requests)
    brand = server.client()
    await sign_up(brand, "acme", "Mara Ellison")
    speaking = (await open_for(brand, "devraman", "speaking-gig"))["room"]["id"]
    await post(brand, speaking, "Hi, I'm Mara from Acme. We'd like a keynote in March.")
    await settle(server)
    seeded = await room_memory(db, speaking)
    assert "sponsored_post" not in json.dumps(seeded)
    sent = [everything_sent(r) for r in model.requests[before:]]
    assert any("Speaking gig" in text for text in sent)  # the speaking room's turn ran
    for text in sent:
        assert "6000" not in text
        assert "6,000" not in text

    for service in ("sponsored-post", None):
        other = server.client()
        await sign_up(other, f"globex{service or 'any'}".replace("-", ""), "Hank Scorpio")
        room_id = (await open_for(other, "devraman", service, new=True))["room"]["id"]
        host_branch = (await room_memory(db, room_id))["host"]
        assert host_branch["limits"]["sponsored_post"]["floor"] == "6000", service
