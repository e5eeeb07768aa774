"""Claiming a guest's rooms: the errors, all of the key's rooms at once, what a guest may not
do until then, and exactly-once replay under racing claims."""

from __future__ import annotations

import asyncio

from dealroom.persistence.db import Db
from tests.conftest import Server
from tests.support.gate import (
    CLAIM,
    GATE_ROOM,
    arrange_held_sends,
    arrange_offer,
    arrange_standing_counter,
    held,
    room_dispatches,
    room_offers,
    room_runs,
    sign_in_here,
    sign_up_here,
)
from tests.support.graphql import Client, open_room, post, sign_up
from tests.support.offers import APPROVE, PAY
from tests.support.rooms import only_error
from tests.support.turns import host_with_rules, messages_in

BID = "Hi, we'd like a sponsored post on 15 March 2027 and can pay $7,000"


def _same_guest(server: Server, guest: Client) -> Client:
    """A second tab of the same browser: the same guest key."""
    tab = server.client()
    tab.headers["X-Guest-Key"] = guest.headers["X-Guest-Key"]
    return tab


async def test_claim_room_needs_a_session_and_the_key_that_holds_the_room(server: Server) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]

    assert (await only_error(guest, CLAIM, {"id": room_id}))["extensions"]["code"] == (
        "UNAUTHENTICATED"
    )
    stranger = server.client()
    await open_room(stranger, "devraman")  # a guest key of its own
    await sign_up_here(stranger, "sam", "Sam Stranger")
    assert (await only_error(stranger, CLAIM, {"id": room_id}))["extensions"]["code"] == (
        "NOT_FOUND"
    )
    keyless = server.client()
    await sign_up(keyless, "kim", "Kim Keyless")
    assert (await only_error(keyless, CLAIM, {"id": room_id}))["extensions"]["code"] == (
        "NOT_FOUND"
    )


async def test_a_room_bound_to_another_account_is_conflict(server: Server) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    other_tab = _same_guest(server, guest)
    await sign_up_here(guest, "mara", "Mara Ellison")  # claims the room for Mara

    await sign_up(other_tab, "otto", "Otto Other")  # Bearer for Otto, still the same key
    error = await only_error(other_tab, CLAIM, {"id": room_id})

    assert error["extensions"]["code"] == "CONFLICT"
    claimed = (await guest.query(CLAIM, {"id": room_id}))["claimRoom"]  # idempotent for Mara
    assert claimed["title"] == "Mara Ellison × Dev Raman"


async def test_the_host_cannot_claim_its_own_guest_room(server: Server) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    host.headers["X-Guest-Key"] = guest.headers["X-Guest-Key"]

    assert (await only_error(host, CLAIM, {"id": room_id}))["extensions"]["code"] == "CONFLICT"


async def test_sign_in_claims_every_room_of_the_guest_key(server: Server) -> None:
    for handle, name in (("devraman", "Dev Raman"), ("lena", "Lena Park")):
        await sign_up(server.client(), handle, name)
    brand = server.client()
    await sign_up(brand, "mara", "Mara Ellison")
    guest = server.client()
    first = (await open_room(guest, "devraman"))["room"]["id"]
    second = (await open_room(guest, "lena"))["room"]["id"]

    await sign_in_here(guest, "mara")

    titles = [
        (await guest.query(GATE_ROOM, {"id": room_id}))["room"]["title"]
        for room_id in (first, second)
    ]
    assert titles == ["Mara Ellison × Dev Raman", "Mara Ellison × Lena Park"]


async def test_a_guest_may_not_approve_or_pay_until_signed_in(server: Server, db: Db) -> None:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    offer_id = await arrange_offer(db, room_id, server.clock.now())

    approve = await only_error(guest, APPROVE, {"offerId": offer_id})
    pay = await only_error(guest, PAY, {"offerId": offer_id, "method": "test_card_ok", "key": "k1"})

    for error in (approve, pay):
        assert error["extensions"]["code"] == "FORBIDDEN"
        assert error["extensions"]["reason"] == "LOGIN_REQUIRED"
    await sign_up_here(guest, "mara", "Mara Ellison")
    approved = (await guest.query(APPROVE, {"offerId": offer_id}))["approveOffer"]
    assert approved["stage"] == "BRAND_ACKED_AWAITING_TALENT"
    assert approved["terms"]["buyer"] == {"id": approved["terms"]["buyer"]["id"], "handle": "mara"}


async def test_racing_claims_from_two_tabs_replay_each_held_effect_once(
    agent_server: Server, db: Db
) -> None:
    await host_with_rules(agent_server)
    brand = agent_server.client()
    await sign_up(brand, "mara", "Mara Ellison")
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, BID)
    await agent_server.settle()
    assert [r.status for r in await held(db, room_id)] == ["held"]
    tabs = [guest, _same_guest(agent_server, guest), _same_guest(agent_server, guest)]

    await asyncio.gather(*(sign_in_here(tab, "mara") for tab in tabs))
    await asyncio.gather(*(tab.query(CLAIM, {"id": room_id}) for tab in tabs))
    await agent_server.settle()

    assert [r.status for r in await held(db, room_id)] == ["replayed"]
    notes = [d for d in await room_dispatches(db, room_id) if d.chain_depth == 1]
    assert len(notes) == 1
    delivered = [m for m in await messages_in(db, room_id, "host") if m.relayed_dispatch_id]
    assert [m.relayed_dispatch_id for m in delivered] == [notes[0].id]


async def test_racing_claims_replay_a_held_mint_once_with_the_buyer_set(
    agent_server: Server, db: Db
) -> None:
    """The racing tabs again, with a held Offer-Gen mint ahead of the held note: one written
    offer, drawn once, for the account that claimed, and the note delivered once."""
    await host_with_rules(agent_server)
    brand = agent_server.client()
    mara = (await sign_up(brand, "mara", "Mara Ellison"))["account"]["id"]
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await post(guest, room_id, "Hi, we'd like a sponsored post on 15 March 2027, 50% upfront")
    await agent_server.settle()
    await arrange_standing_counter(db, room_id, agent_server.clock.now())
    await post(guest, room_id, "Yes, that works")
    await agent_server.settle()
    assert [(r.kind, r.status) for r in await held(db, room_id)] == [
        ("offer_mint", "held"),
        ("pane_send", "held"),
    ]
    assert await room_offers(db, room_id) == []
    tabs = [guest, _same_guest(agent_server, guest), _same_guest(agent_server, guest)]

    await asyncio.gather(*(sign_in_here(tab, "mara") for tab in tabs))
    await asyncio.gather(*(tab.query(CLAIM, {"id": room_id}) for tab in tabs))
    await agent_server.settle()

    assert [r.status for r in await held(db, room_id)] == ["replayed", "replayed"]
    offers = await room_offers(db, room_id)
    assert [str(o.buyer_account_id) for o in offers] == [mara]
    assert [r.agent for r in await room_runs(db, room_id)].count("offer_gen") == 1
    notes = [d for d in await room_dispatches(db, room_id) if d.chain_depth == 1]
    assert len(notes) == 1
    delivered = [m for m in await messages_in(db, room_id, "host") if m.relayed_dispatch_id]
    assert [m.relayed_dispatch_id for m in delivered] == [notes[0].id]


async def test_twenty_held_notes_replay_in_order_once_each(agent_server: Server, db: Db) -> None:
    await host_with_rules(agent_server)
    guest = agent_server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await arrange_held_sends(db, room_id, 20, agent_server.clock.now())

    await sign_up_here(guest, "mara", "Mara Ellison")
    await agent_server.settle(timeout=120)

    assert {r.status for r in await held(db, room_id)} == {"replayed"}
    # One run of notes from one pane to another replays as one note of what was said, in
    # order, the latest last: each held note's words reach the host side once, in order.
    notes = [d for d in await room_dispatches(db, room_id) if d.chain_depth == 1]
    assert len(notes) == 1
    said = notes[0].substance
    figures = [f"${7000 + index} " for index in range(20)]
    assert [said.count(figure) for figure in figures] == [1] * 20
    assert [said.index(figure) for figure in figures] == sorted(said.index(f) for f in figures)
    assert "Latest: A visitor offers $7019" in said
    delivered = [m for m in await messages_in(db, room_id, "host") if m.relayed_dispatch_id]
    assert [m.relayed_dispatch_id for m in delivered] == [notes[0].id]
