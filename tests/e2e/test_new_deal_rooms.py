"""O10, O11: a room's deal can be over. A room whose written offer was rejected (or whose goal
was abandoned) mints no offer again, and a new campaign after seven days of silence does not
re-version the old offer: the next deal the pair agrees is drawn in a sibling deal room."""

from __future__ import annotations

import uuid
from datetime import timedelta

from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import GoalEvent
from tests.conftest import Server
from tests.e2e.test_offers import ROOMS, agree_until_met, lines, snapshot
from tests.support.graphql import post
from tests.support.offers import (
    AGREE,
    BID,
    OPENING,
    REJECT,
    negotiate_to_offer,
    offer_as,
    open_deal,
    room_offers,
    settle,
)
from tests.support.turns import Deal, memory


async def test_a_new_proposal_after_a_rejection_is_drawn_in_a_sibling_room(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    await d.visitor.query(REJECT, {"offerId": offer_id, "text": "Not this time."})
    await settle(server)
    assert (await offer_as(d.visitor, offer_id))["stage"] == "DECLINED"
    closed = await snapshot(db, offer_id)
    rooms_before = {e["node"]["id"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]}

    await post(d.visitor, d.room_id, "Actually, could we do $7,700 for the sponsored post?")
    await agree_until_met(server, db, d)

    # No offer minted in the abandoned room; the rejected one is not touched.
    assert [str(o.id) for o in await room_offers(db, d.room_id)] == [offer_id]
    assert await snapshot(db, offer_id) == closed
    # One sibling deal room for the pair, with the new offer in it.
    host_rooms = {e["node"]["id"]: e["node"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]}
    new_ids = set(host_rooms) - rooms_before
    assert len(new_ids) == 1, host_rooms
    (sibling_id,) = new_ids
    sibling_offers = await room_offers(db, sibling_id)
    assert [o.terms["fee"]["amount"].replace(",", "") for o in sibling_offers] == ["7700.00"]
    for key in ("visitor", "host"):
        system = [b for k, b in await lines(db, d.room_id, key) if k == AuthorKind.SYSTEM]
        assert [b for b in system if sibling_id in b], (key, system)


async def test_a_room_whose_goal_was_abandoned_without_an_offer_mints_none(
    server: Server, db: Db
) -> None:
    """The host's side declined before anything was written (the goal ruled abandoned, no
    offer): a later agreement is still drawn in a sibling room."""
    d = await open_deal(server)
    try:
        await db.add(
            GoalEvent(
                id=uuid.uuid4(),
                room_id=uuid.UUID(d.room_id),
                goal_key="new-offer",
                from_status="open",
                to_status="abandoned",
                by_pane="host",
                agent="persona",
                reason="Dev Raman declined.",
                created_at=server.clock.now(),
            )
        )
        await db.commit()
    finally:
        await db.close()

    for line in (OPENING.format(upfront="50% upfront"), BID, AGREE):
        await post(d.visitor, d.room_id, line)
        await settle(server)

    assert await room_offers(db, d.room_id) == []
    rooms = [e["node"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]]
    siblings = [r["id"] for r in rooms if r["kind"] == "DEAL" and r["id"] != d.room_id]
    assert len(siblings) == 1, rooms
    assert len(await room_offers(db, siblings[0])) == 1


async def _after_silence(server: Server, db: Db, days: int) -> tuple[Deal, str, dict[str, str]]:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    listed = (await d.host.query(ROOMS))["rooms"]["edges"]
    rooms = {e["node"]["id"]: e["node"]["kind"] for e in listed}
    server.clock.advance(timedelta(days=days))
    await post(d.visitor, d.room_id, "New campaign! Could we do $7,700 for a sponsored post?")
    await agree_until_met(server, db, d)
    return d, offer_id, rooms


async def test_a_new_campaign_after_seven_days_of_silence_opens_a_sibling_room(
    server: Server, db: Db
) -> None:
    """O11: the old room's live offer is not re-versioned; the new one is drawn in a new deal
    room for the pair, seeded like any new room and linked to the old one."""
    d, offer_id, rooms_before = await _after_silence(server, db, days=8)

    old = await offer_as(d.visitor, offer_id)
    assert (old["version"], old["terms"]["fee"]["amount"]) == (1, "8000.00")
    assert [str(o.id) for o in await room_offers(db, d.room_id)] == [offer_id]
    rooms = {e["node"]["id"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]}
    (sibling_id,) = rooms - set(rooms_before)
    (new,) = await room_offers(db, sibling_id)
    assert new.terms["fee"]["amount"].replace(",", "") == "7700.00"
    assert (await memory(db, sibling_id))["deal"]["continuesFromRoom"] == d.room_id


async def test_new_terms_after_six_days_are_a_new_version_in_the_same_room(
    server: Server, db: Db
) -> None:
    d, offer_id, rooms_before = await _after_silence(server, db, days=6)

    assert (await offer_as(d.visitor, offer_id))["version"] == 2
    rooms = {e["node"]["id"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]}
    assert rooms == set(rooms_before)
