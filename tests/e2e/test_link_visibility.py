"""Perceived links in the API: a message's ``links`` (url, final url, status, reason, title,
when read, never the page's text) are shown to the pane's own participant, over HTTP and on
the pane's subscription, and to operators on the room (``opsRoom.links``); the other side of
the room, though the host may read the visitor's pane, is shown none of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from dealroom.config import Settings
from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.graphql import Client, post, subscribe, ws_init_for
from tests.support.link_pages import LinkPages, running_link_pages
from tests.support.partners import make_operator
from tests.support.turns import deal

LINK_FIELDS = "url finalUrl status reason reasonText title fetchedAt"

PANE = f"""
query($id: ID!, $seat: Seat!) {{
  room(id: $id) {{
    pane(seat: $seat) {{
      messages(first: 100) {{ edges {{ node {{ id body authorKind links {{ {LINK_FIELDS} }} }} }} }}
    }}
  }}
}}
"""

PANE_EVENTS = f"""
subscription($roomId: ID!, $seat: Seat!, $after: String) {{
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {{
    __typename
    ... on MessageAdded {{ cursor message {{ id body links {{ {LINK_FIELDS} }} }} }}
  }}
}}
"""

OPS_LINKS = """
query($id: ID!) {
  opsRoom(roomId: $id) {
    links {
      seat messageId url finalUrl status reason detail title contentType reader fetchedAt
    }
  }
}
"""

OPS_TRANSCRIPT = """
query($id: ID!) {
  opsRoom(roomId: $id) { transcript(seat: VISITOR) { nodes { body links { url } } } }
}
"""


@pytest.fixture
async def pages() -> AsyncIterator[LinkPages]:
    async with running_link_pages() as served:
        yield served


@pytest.fixture
def agent_settings(settings: Settings, pages: LinkPages) -> Settings:
    return settings.model_copy(
        update={
            "workers": 2,
            "worker_poll_seconds": 0.05,
            "link_allow_loopback": True,
            "link_ports": str(pages.port),
        }
    )


async def links_by_body(client: Client, room_id: str, seat: str) -> dict[str, list[Any]]:
    data = await client.query(PANE, {"id": room_id, "seat": seat})
    edges = data["room"]["pane"]["messages"]["edges"]
    return {e["node"]["body"]: e["node"]["links"] for e in edges}


async def test_each_pane_sees_its_own_links_and_never_the_other_sides(
    agent_server: Server, pages: LinkPages, db: Db
) -> None:
    d = await deal(agent_server)
    secret = "Private rate notes: floor $4,200"
    pages.pages["/rate-card.txt"] = ("text/plain", secret.encode())
    visitor_says = f"Our brief: {pages.url('/brief.html')} and {pages.url('/login')}"
    host_says = f"Use this for the brand: {pages.url('/rate-card.txt')}"
    await post(d.visitor, d.room_id, visitor_says)
    await post(d.host, d.room_id, host_says)
    await agent_server.settle()

    # The visitor, in its own pane: both its links, as its agent perceived them.
    mine = (await links_by_body(d.visitor, d.room_id, "VISITOR"))[visitor_says]
    assert [(link["url"], link["status"]) for link in mine] == [
        (pages.url("/brief.html"), "READ"),
        (pages.url("/login"), "UNREADABLE"),
    ]
    brief, login = mine
    assert brief["title"] == "Acme Spring Campaign Brief"
    assert brief["finalUrl"] == pages.url("/brief.html")
    assert (brief["reason"], login["reason"]) == (None, "LOGIN")
    assert login["reasonText"] == "it needs a login"
    assert brief["fetchedAt"]

    # The host, in its own pane: its own link.
    (card,) = (await links_by_body(d.host, d.room_id, "HOST"))[host_says]
    assert (card["url"], card["status"]) == (pages.url("/rate-card.txt"), "READ")
    # The host reads the visitor's pane too, but not what the visitor's links were.
    assert (await links_by_body(d.host, d.room_id, "VISITOR"))[visitor_says] == []
    # The visitor cannot read the host pane at all, and nothing of the host's page is in its.
    refused = await d.visitor.raw(PANE, {"id": d.room_id, "seat": "HOST"})
    assert [e["extensions"]["code"] for e in refused["errors"]] == ["FORBIDDEN"]
    whole = str(await d.visitor.query(PANE, {"id": d.room_id, "seat": "VISITOR"}))
    assert "rate-card" not in whole
    assert secret not in whole
    # No reader is ever shown a page's text.
    assert "Instagram reels" not in str(mine)

    # Operators see every pane's links, with the technical detail, but no page text either.
    operator = await make_operator(db, agent_server.client(), "opslinks")
    found = (await operator.query(OPS_LINKS, {"id": d.room_id}))["opsRoom"]["links"]
    assert sorted((link["seat"], link["url"].rsplit("/", 1)[1]) for link in found) == [
        ("host", "rate-card.txt"),
        ("visitor", "brief.html"),
        ("visitor", "login"),
    ]
    (walled,) = [link for link in found if link["url"].endswith("/login")]
    assert (walled["reader"], walled["reason"]) == ("FETCH", "LOGIN")
    assert secret not in str(found)
    assert "Instagram reels" not in str(found)
    # An operator's transcript of a pane reads as that pane: its links are there.
    transcript = await operator.query(OPS_TRANSCRIPT, {"id": d.room_id})
    nodes = transcript["opsRoom"]["transcript"]["nodes"]
    assert [len(n["links"]) for n in nodes if n["body"] == visitor_says] == [2]


async def test_the_pane_subscription_shows_links_to_its_own_participant_only(
    agent_server: Server, pages: LinkPages
) -> None:
    d = await deal(agent_server)
    before = await post(d.visitor, d.room_id, "Hello!")
    said = f"Our brief: {pages.url('/brief.html')}"
    await post(d.visitor, d.room_id, said)
    await agent_server.settle()

    async def replayed(client: Client) -> list[Any]:
        variables = {"roomId": d.room_id, "seat": "VISITOR", "after": before["cursor"]}
        async with subscribe(
            agent_server.ws_url, PANE_EVENTS, variables, init=ws_init_for(client)
        ) as events:
            while True:
                event = await events.event()
                if event["__typename"] == "MessageAdded" and event["message"]["body"] == said:
                    links: list[Any] = event["message"]["links"]
                    return links

    (link,) = await replayed(d.visitor)
    assert (link["url"], link["status"]) == (pages.url("/brief.html"), "READ")
    assert await replayed(d.host) == []
