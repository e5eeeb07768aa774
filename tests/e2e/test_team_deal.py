"""A deal with three people: a brand's marketing lead, a colleague from legal it invites to its
side, and the host. Each brand-side person negotiates in their own pane with the host's agent;
the host's agent reconciles in the host's pane; one written offer is drawn, naming the host and
the buying account; only the buyer (or a teammate it allows) approves it for the brand."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Notification
from tests.conftest import Server
from tests.e2e.test_invitations import ACCEPT, INVITE, token_of
from tests.support.gate import room_offers
from tests.support.graphql import Client, post, sign_up
from tests.support.offers import APPROVE, offer_as
from tests.support.turns import deal, messages_in

PANES = """
query($id: ID!) {
  room(id: $id) {
    participants { id key seat isYou displayName }
    panes { key seat relationshipLabel }
  }
}
"""
ALLOW = """
mutation($roomId: ID!, $participantId: ID!) {
  allowOfferApproval(roomId: $roomId, participantId: $participantId, allowed: true) { id }
}
"""


async def _invite(server: Server, inviter: Client, room_id: str) -> Client:
    colleague = server.client()
    await sign_up(colleague, "leelegal", "Lee Legal")
    invited = await inviter.query(INVITE, {"roomId": room_id, "email": "lee@example.com"})
    await colleague.query(ACCEPT, {"token": token_of(invited["inviteToRoom"]["link"])})
    return colleague


async def _approve(client: Client, offer_id: str) -> dict[str, Any]:
    version = (await offer_as(client, offer_id))["version"]
    return await client.raw(APPROVE, {"offerId": offer_id, "version": version})


async def test_two_brand_side_people_negotiate_and_the_buyer_approves_one_offer(
    agent_server: Server, db: Db
) -> None:
    room = await deal(agent_server)
    await post(room.visitor, room.room_id, "Hi, we'd like a sponsored post on 15 March 2027.")
    await agent_server.settle()
    colleague = await _invite(agent_server, room.visitor, room.room_id)

    # The host reads every pane, each named by its person; the colleague only its own.
    host_view = (await room.host.query(PANES, {"id": room.room_id}))["room"]
    assert [p["key"] for p in host_view["panes"]] == ["host", "visitor", "visitor_2"]
    assert "Lee Legal" in host_view["panes"][2]["relationshipLabel"]
    lee_view = (await colleague.query(PANES, {"id": room.room_id}))["room"]
    assert [p["key"] for p in lee_view["panes"]] == ["visitor_2"]

    await post(colleague, room.room_id, "We can pay $7,000 for the sponsored post.")
    await agent_server.settle()
    await post(colleague, room.room_id, "Agreed.")
    await agent_server.settle()

    lee = [m.body for m in await messages_in(db, room.room_id, "visitor_2")]
    host = [m.body for m in await messages_in(db, room.room_id, "host")]
    # Its pane opened with the host's agent greeting it, before it said anything.
    assert (
        lee[0] == "Hi! Acme Brand added you to this room. I'm Dev Raman's agent; this "
        "conversation is yours with me."
    ), lee
    assert any("$8,000" in line for line in lee), lee  # the host's counter reached its pane
    # The host's agent reconciled in the host's pane, naming whose proposal it was.
    assert any("Lee Legal" in line and "$7,000" in line for line in host), host
    offers = await room_offers(db, room.room_id)
    assert len(offers) == 1, (lee, host)
    assert offers[0].terms["fee"]["amount"].replace(",", "") == "8000.00"
    offer_id = str(offers[0].id)
    # Both people on the buyer's side are told the written offer is ready (in-app and email).
    told = await db.scalars(select(Notification.source).where(Notification.source.like("stage:%")))
    await db.close()
    assert {source.rsplit(":", 1)[1] for source in told} >= {"visitor", "visitor_2"}
    terms = (await offer_as(room.visitor, offer_id))["terms"]
    assert (terms["seller"]["handle"], terms["buyer"]["handle"]) == ("devraman", "acmebrand")

    # The colleague may not approve for the brand until the buyer allows it; the buyer may.
    refused = await _approve(colleague, offer_id)
    assert [e["extensions"]["reason"] for e in refused["errors"]] == ["NOT_AN_APPROVER"]
    lee_id = next(p["id"] for p in host_view["participants"] if p["key"] == "visitor_2")
    await room.visitor.query(ALLOW, {"roomId": room.room_id, "participantId": lee_id})
    stamped = await _approve(colleague, offer_id)
    assert stamped["data"]["approveOffer"]["stage"] == "BRAND_ACKED_AWAITING_TALENT", stamped
    booked = await _approve(room.host, offer_id)
    assert booked["data"]["approveOffer"]["stage"] == "BOOKED_AWAITING_PAYMENT", booked
    assert len(await room_offers(db, room.room_id)) == 1
