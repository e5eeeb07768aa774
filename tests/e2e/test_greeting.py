"""The visitor is greeted when a room opens: the first line of the visitor pane, in the host's
agent's voice, from ``host.public`` only; once per room."""

from __future__ import annotations

import pytest

from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import open_room, post, sign_up
from tests.support.turns import host_with_rules, messages_in


@pytest.fixture
def agent_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"workers": 2, "worker_poll_seconds": 0.05, "greet_visitors": True}
    )


RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000. "
    "You can share that my rate for a sponsored post starts at $7,500."
)


async def test_a_guest_is_greeted_from_what_the_host_made_public(
    agent_server: Server, db: Db
) -> None:
    await host_with_rules(agent_server, rules=RULES)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    [line] = await messages_in(db, room_id, "visitor")
    assert line.author_kind == AuthorKind.AGENT
    assert line.body.startswith("Hi! I'm the agent for Dev Raman")
    assert "7,500" in line.body or "7500" in line.body  # the shared rate card
    for floor in ("6,000", "6000", "8,000", "8000"):
        assert floor not in line.body  # nothing private: the floor, the unshared ask
    assert await messages_in(db, room_id, "host") == []
    # The page shows it as the pane's history; the room is still an empty visit.
    pane = await guest.query(
        "query($id: ID!) { room(id: $id) { pane(seat: VISITOR) { messages(last: 5) "
        "{ edges { node { body authorKind } } } } } }",
        {"id": room_id},
    )
    [edge] = pane["room"]["pane"]["messages"]["edges"]
    assert edge["node"]["authorKind"] == "AGENT"
    again = (await open_room(guest, "devraman"))["room"]["id"]
    assert again == room_id  # a bare revisit reuses the room the welcome did not "start"
    assert len(await messages_in(db, room_id, "visitor")) == 1  # greeted once


async def test_a_signed_in_brand_is_greeted_by_name_and_the_reply_follows(
    agent_server: Server, db: Db
) -> None:
    await host_with_rules(agent_server)  # nothing made public
    brand = agent_server.client()
    await sign_up(brand, "brightwave", "Brightwave")
    room_id = (await open_room(brand, "devraman"))["room"]["id"]
    await post(brand, room_id, "Could you do a sponsored post for $4,000?")
    await agent_server.settle()
    pane = await messages_in(db, room_id, "visitor")
    assert [m.author_kind for m in pane][:2] == [AuthorKind.AGENT, AuthorKind.PARTICIPANT]
    assert pane[0].body.startswith("Hi Brightwave! I'm the agent for Dev Raman")
    assert "rate card" not in pane[0].body
    assert pane[-1].author_kind == AuthorKind.AGENT
    assert "6,000" not in " ".join(m.body for m in pane)


async def test_no_welcome_when_greeting_is_off(server: Server, db: Db) -> None:
    """``DEALROOM_GREET_VISITORS=false``: the pane starts empty (the foundation tests' setting)."""
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    room_id = (await open_room(server.client(), "devraman"))["room"]["id"]
    assert await messages_in(db, room_id, "visitor") == []
