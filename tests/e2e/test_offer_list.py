"""A room keeps every written offer it ever drew: after a rejection the room reads DECLINED
until the agents reach terms again, and ``Room.offers`` pages through them newest first."""

from __future__ import annotations

import pytest

from tests.conftest import Server
from tests.support.graphql import post
from tests.support.offers import AGREE, REJECT, negotiate_to_offer, open_deal, settle

pytestmark = pytest.mark.asyncio

OFFERS_PAGE = """
query($id: ID!, $first: Int!, $after: String) {
  room(id: $id) {
    stage
    offer { id stage }
    offers(first: $first, after: $after) {
      edges { cursor node { id stage version } }
      hasNextPage endCursor
    }
  }
}
"""


async def test_a_rejected_offer_stays_listed_and_a_new_one_is_drawn_after_new_terms(
    agent_server: Server,
) -> None:
    d = await open_deal(agent_server)
    first = await negotiate_to_offer(agent_server, d)
    await d.visitor.query(REJECT, {"offerId": first, "text": "The date no longer works."})
    await settle(agent_server)
    room = (await d.visitor.query(OFFERS_PAGE, {"id": d.room_id, "first": 10}))["room"]
    assert room["stage"] == "DECLINED"
    assert room["offer"] == {"id": first, "stage": "DECLINED"}

    await post(d.visitor, d.room_id, "Could we do the sponsored post for $7,200 instead?")
    await settle(agent_server)
    await post(d.visitor, d.room_id, AGREE)
    await settle(agent_server)

    page = (await d.host.query(OFFERS_PAGE, {"id": d.room_id, "first": 1}))["room"]
    assert page["stage"] == "WRITTEN_AWAITING_BRAND", page
    newest = page["offers"]["edges"][0]["node"]
    assert newest["id"] != first
    assert newest["version"] == 1
    assert page["offer"]["id"] == newest["id"]
    assert page["offers"]["hasNextPage"] is True
    rest = (
        await d.host.query(
            OFFERS_PAGE, {"id": d.room_id, "first": 1, "after": page["offers"]["endCursor"]}
        )
    )["room"]["offers"]
    assert [e["node"]["id"] for e in rest["edges"]] == [first]
    assert rest["edges"][0]["node"]["stage"] == "DECLINED"
    assert rest["hasNextPage"] is False
    assert await d.host.error_codes(OFFERS_PAGE, {"id": d.room_id, "first": 0}) == [
        "BAD_USER_INPUT"
    ]
