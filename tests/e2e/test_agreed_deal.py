"""An agreed deal never stalls: a guest proposes $7,000, signs up and writes "Agreed." while the
held proposal is being replayed. A yes is never answered with "what would you like to
propose", and the yes to the host's counter draws the written offer."""

from __future__ import annotations

from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.gate import room_offers, sign_up_here
from tests.support.graphql import open_room, post
from tests.support.turns import host_with_rules, messages_in

BID = "Hi, we'd like a sponsored post on 15 March 2027 and can pay $7,000"


async def test_a_guest_who_agrees_while_the_held_bid_replays_gets_a_written_offer(
    agent_server: Server, db: Db
) -> None:
    await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, BID)
    await agent_server.settle()

    await sign_up_here(guest, "mara", "Mara Ellison")
    await post(guest, room_id, "Agreed.")
    await agent_server.settle()
    await post(guest, room_id, "Yes, that works")
    await agent_server.settle()

    visitor = [m.body for m in await messages_in(db, room_id, "visitor")]
    assert not any("would you like to propose" in body for body in visitor), visitor
    offers = await room_offers(db, room_id)
    assert [o.terms["fee"]["amount"].replace(",", "") for o in offers] == ["8000.00"], visitor
    assert [o.terms["deliverables"] for o in offers] == [["sponsored post"]]
    # The early yes was answered for what it was: the bid still awaiting the host's answer.
    agreed = visitor.index("Agreed.")
    assert "hasn't answered your $7,000 yet" in visitor[agreed + 1], visitor
