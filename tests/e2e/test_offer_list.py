"""A room keeps every written offer it ever drew: after a rejection the room reads DECLINED (new
terms are drawn in a sibling room, O10: tests/e2e/test_new_deal_rooms.py), and ``Room.offers``
pages through a room's offers newest first."""

from __future__ import annotations

import pytest

from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.gate import arrange_offer
from tests.support.offers import REJECT, negotiate_to_offer, open_deal, settle

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


async def test_a_rejected_offer_stays_listed_and_the_rooms_offers_page_newest_first(
    agent_server: Server, db: Db
) -> None:
    d = await open_deal(agent_server)
    first = await negotiate_to_offer(agent_server, d)
    await d.visitor.query(REJECT, {"offerId": first, "text": "The date no longer works."})
    await settle(agent_server)
    room = (await d.visitor.query(OFFERS_PAGE, {"id": d.room_id, "first": 10}))["room"]
    assert room["stage"] == "DECLINED"
    assert room["offer"] == {"id": first, "stage": "DECLINED"}
    # A room from before O10 may hold a later offer too (arranged: the agents draw none here).
    await arrange_offer(db, d.room_id, agent_server.clock.now())

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
