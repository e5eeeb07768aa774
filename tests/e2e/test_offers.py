"""From agreed terms to a booking: the written offer, its one stage vocabulary, and the approvals
in order (ARCHITECTURE "Offers and the stage vocabulary"; rules O1-O9 in ``domain/offers.py``).

Agreement in chat makes the ``new-offer`` goal met and Offer-Gen mints the written offer;
memory keeps only its id, never a stage. The brand (visitor) approves first, then the
talent's (host's) approval is the booking; out of order, a stale version, or after the
booking is a CONFLICT naming the stage, and double clicks from both sides at once end in
exactly one valid state. Counter, Reject and Add only post a line into the reader's own pane;
the agents then redraw (a new version the brand must approve again), close (DECLINED), or,
after the booking, draw the new terms in a sibling deal room. Only participants see an offer.

Tests on the ``server`` fixture (workers=0) run the agents themselves (``settle``), so they
can read the rows between a click and the agents' answer to it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from dealroom.domain.offer_stage import OfferStatus, Stage
from dealroom.domain.seats import AuthorKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import Message
from tests.conftest import Server
from tests.support.factories import written_offer
from tests.support.graphql import Client, open_room, post, sign_up
from tests.support.offers import (
    ADD,
    AGREE,
    APPROVE,
    COUNTER,
    MINTED,
    OFFER,
    REJECT,
    ROOM_STAGE,
    flips,
    goal_events,
    goal_status,
    negotiate_to_offer,
    offer_as,
    offer_events,
    offer_row,
    open_deal,
    room_offers,
    settle,
    stages,
)
from tests.support.rooms import grant
from tests.support.turns import Deal, memory, messages_in

pytestmark = pytest.mark.asyncio

WAB = Stage.WRITTEN_AWAITING_BRAND.value
ACKED = Stage.BRAND_ACKED_AWAITING_TALENT.value
BOOKED = Stage.BOOKED_AWAITING_PAYMENT.value
DECLINED = Stage.DECLINED.value

COUNTER_TEXT = "$7,700 for the sponsored post"
ROOMS = "{ rooms(first: 100) { edges { node { id kind stage } } } }"
ROOM = "query($id: ID!) { room(id: $id) { id kind readerSeat stage offer { id } } }"
ME = "{ me { id } }"


# --- reading what happened ------------------------------------------------------------------


def only_error(body: dict[str, Any]) -> dict[str, Any]:
    errors: list[dict[str, Any]] = body.get("errors") or []
    assert len(errors) == 1, f"expected one error, got {body}"
    assert body.get("data") is None, body
    return errors[0]


def assert_conflict(body: dict[str, Any], stage: str, version: int) -> None:
    """O4: a move out of order is a CONFLICT naming where the offer stands."""
    extensions = only_error(body)["extensions"]
    assert extensions["code"] == "CONFLICT", body
    assert (extensions["stage"], extensions["version"]) == (stage, version), body


def assert_not_found(body: dict[str, Any]) -> None:
    assert only_error(body)["extensions"]["code"] == "NOT_FOUND", body


async def approve(client: Client, offer_id: str, version: int | None = None) -> dict[str, Any]:
    return await client.raw(APPROVE, {"offerId": offer_id, "version": version})


async def approved(client: Client, offer_id: str, version: int | None = None) -> dict[str, Any]:
    body = await approve(client, offer_id, version)
    assert not body.get("errors"), body
    offer: dict[str, Any] = body["data"]["approveOffer"]
    return offer


async def snapshot(db: Db, offer_id: str) -> tuple[Any, ...]:
    """Every column a click or an agent could change."""
    row = await offer_row(db, offer_id)
    return (
        row.status,
        row.brand_approved_at,
        row.version,
        row.fingerprint,
        row.terms,
        row.open_questions,
        row.updated_at,
    )


async def lines(db: Db, room_id: str, key: str) -> list[tuple[str, str]]:
    return [(m.author_kind, m.body) for m in await messages_in(db, room_id, key)]


async def participant_lines(db: Db, room_id: str, key: str) -> list[Message]:
    return [
        m for m in await messages_in(db, room_id, key) if m.author_kind == AuthorKind.PARTICIPANT
    ]


def walk(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (path, leaf) of a JSON document; keys are yielded as leaves too."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield f"{path}.{key}", key
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, f"{path}[{index}]")
    else:
        yield path, node


async def agree_until_met(server: Server, db: Db, d: Deal) -> None:
    """Drive the chat like the visitor's client would until ``new-offer`` is met again: when
    the agent asks whether a counter works, say yes."""
    await settle(server)
    for _ in range(3):
        if await goal_status(db, d.room_id) == "met":
            return
        said = [b for k, b in await lines(db, d.room_id, "visitor") if k == AuthorKind.AGENT]
        assert said, d.room_id
        assert said[-1].endswith("Does that work for you?"), said[-3:]
        await post(d.visitor, d.room_id, AGREE)
        await settle(server)
    raise AssertionError(f"new-offer never met again: {await memory(db, d.room_id)}")


async def another_visitor(server: Server, host: Deal) -> Deal:
    """A new visitor (a signed-in brand: a guest's terms wait on sign-in) opening a deal room
    with the same host."""
    visitor = server.client()
    await sign_up(visitor, f"brand{uuid.uuid4().hex[:8]}", "Another Brand")
    opened = await open_room(visitor, "devraman")
    return Deal(host.host, visitor, host.home_id, opened["room"]["id"])


# --- minting --------------------------------------------------------------------------------


async def test_agreement_in_chat_mints_the_written_offer_with_the_agreed_terms(
    agent_server: Server, db: Db
) -> None:
    d = await open_deal(agent_server)
    offer_id = await negotiate_to_offer(agent_server, d)

    offer = await offer_as(d.visitor, offer_id)
    assert (offer["stage"], offer["version"], offer["brandApprovedAt"]) == (WAB, 1, None)
    assert offer["stageGloss"] == "written offer drawn; the brand has not approved it"
    assert offer["room"] == {"id": d.room_id}
    terms = offer["terms"]
    assert terms["deliverables"] == ["sponsored post"]
    assert terms["fee"] == {"amount": "8000.00", "currency": "USD"}
    assert terms["dates"] == ["2027-03-15"]
    assert terms["dueSlicePercent"] == "50"
    # Offer-Gen names what the chat did not settle; it invents nothing.
    assert (terms["usageRights"], terms["exclusivity"]) == (None, None)
    questions = [q.lower() for q in terms["openQuestions"]]
    assert len(questions) == 2, questions
    assert "usage rights" in questions[0], questions
    assert "exclusivity" in questions[1], questions
    assert terms["seller"]["handle"] == "devraman"
    assert terms["buyer"]["handle"] == "acmebrand"  # the signed-in brand
    assert offer["payment"] == {
        "currency": "USD",
        "fee": "8000.00",
        "duePercent": "50",
        "due": "4000.00",
        "platformFee": "800.00",
        "total": "4800.00",
        "remaining": "4000.00",
        "defaultSchedule": False,
    }
    assert offer["payments"] == []
    agreement = offer["agreement"]
    assert (agreement["version"], agreement["current"]) == (1, True)
    assert "$8,000" in agreement["text"]
    assert "2027-03-15" in agreement["text"]
    assert offer["viewerActions"] == ["APPROVE", "COUNTER", "REJECT", "ADD"]  # the brand
    assert (await offer_as(d.host, offer_id))["viewerActions"] == ["COUNTER", "REJECT", "ADD"]

    # Memory keeps only the offer's id: no stage, no offers-system label, anywhere.
    document = await memory(db, d.room_id)
    assert document["offers"] == {"new-offer": {"offerId": offer_id}}
    labels = {s.value for s in Stage} | {s.value for s in OfferStatus}
    for path, leaf in walk(document):
        assert "stage" not in path.lower(), path
        if isinstance(leaf, str):
            assert not [label for label in labels if label in leaf], (path, leaf)

    events = await goal_events(db, d.room_id)
    assert flips(events) == MINTED
    met = events[-1]
    assert (met.by_pane, met.agent) == ("visitor", "persona")
    written = await offer_events(db, offer_id)
    assert [(e.stage, e.version, e.actor) for e in written] == [(WAB, 1, "offer_gen")]

    for reader in (d.visitor, d.host):
        room = (await reader.query(ROOM_STAGE, {"id": d.room_id}))["room"]
        assert room["stage"] == WAB
        assert room["offer"] == {"id": offer_id, "stage": WAB, "version": 1}
        assert [e["node"]["id"] for e in room["offers"]["edges"]] == [offer_id]


# --- approvals ------------------------------------------------------------------------------


async def test_the_brand_approves_first_and_the_talents_approval_is_the_booking(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)

    # O3/O4: the talent cannot go first.
    assert_conflict(await approve(d.host, offer_id), WAB, 1)
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1)]

    # O2: the brand's approval stamps this version.
    acked = await approved(d.visitor, offer_id)
    assert (acked["stage"], acked["version"]) == (ACKED, 1)
    assert acked["brandApprovedAt"] is not None
    assert acked["viewerActions"] == ["COUNTER", "REJECT", "ADD"]
    assert (await offer_as(d.host, offer_id))["viewerActions"] == [
        "APPROVE",
        "COUNTER",
        "REJECT",
        "ADD",
    ]
    again = await approved(d.visitor, offer_id, 1)  # a double click: no-op
    assert (again["stage"], again["brandApprovedAt"]) == (ACKED, acked["brandApprovedAt"])
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1), (ACKED, 1)]

    # The talent's chat "yes" is an instruction for the agent, never an approval.
    await post(d.host, d.room_id, "yes, approve it")
    await settle(server)
    assert (await offer_as(d.host, offer_id))["stage"] == ACKED
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1), (ACKED, 1)]

    booked = await approved(d.host, offer_id)
    assert (booked["stage"], booked["version"]) == (BOOKED, 1)
    assert booked["stageGloss"] == "talent approved the written offer: booked"
    assert booked["viewerActions"] == []
    assert (await offer_as(d.visitor, offer_id))["viewerActions"] == ["PAY"]
    assert (await approved(d.host, offer_id))["stage"] == BOOKED  # no-op
    assert (await approved(d.visitor, offer_id))["stage"] == BOOKED  # no-op
    written = await offer_events(db, offer_id)
    assert [(e.stage, e.version, e.actor) for e in written] == [
        (WAB, 1, "offer_gen"),
        (ACKED, 1, "visitor"),
        (BOOKED, 1, "host"),
    ]
    for reader in (d.visitor, d.host):
        assert (await reader.query(ROOM_STAGE, {"id": d.room_id}))["room"]["stage"] == BOOKED

    # O7: once booked, the shortcuts are refused and post nothing.
    before = {key: await lines(db, d.room_id, key) for key in ("visitor", "host")}
    for reader in (d.visitor, d.host):
        for document in (COUNTER, REJECT, ADD):
            body = await reader.raw(document, {"offerId": offer_id, "text": COUNTER_TEXT})
            assert_conflict(body, BOOKED, 1)
    assert {key: await lines(db, d.room_id, key) for key in ("visitor", "host")} == before
    assert len(await offer_events(db, offer_id)) == 3


async def test_concurrent_approvals_from_both_sides_end_in_one_valid_state(
    agent_server: Server, db: Db
) -> None:
    server = agent_server
    first = await open_deal(server)
    outcomes: set[str] = set()
    for round_no in range(5):
        d = first if round_no == 0 else await another_visitor(server, first)
        offer_id = await written_offer(server, d.room_id)
        # Double clicks on both sides at once, interleaved.
        clicks = [d.visitor, d.host] * 3
        bodies = await asyncio.gather(*(approve(c, offer_id) for c in clicks))
        brand = [b for c, b in zip(clicks, bodies, strict=True) if c is d.visitor]
        talent = [b for c, b in zip(clicks, bodies, strict=True) if c is d.host]

        final = await offer_as(d.visitor, offer_id)
        outcomes.add(final["stage"])
        written = await offer_events(db, offer_id)
        assert (final["version"], final["brandApprovedAt"]) != (1, None)
        # The brand's clicks all succeed and share one stamp.
        for body in brand:
            assert not body.get("errors"), body
            assert body["data"]["approveOffer"]["stage"] in (ACKED, BOOKED), body
            assert body["data"]["approveOffer"]["brandApprovedAt"] == final["brandApprovedAt"]
        # A talent click either booked (or found it booked), or ran before the stamp.
        booked_by_talent = 0
        for body in talent:
            if body.get("errors"):
                assert_conflict(body, WAB, 1)
            else:
                assert body["data"]["approveOffer"]["stage"] == BOOKED, body
                booked_by_talent += 1
        if final["stage"] == BOOKED:
            assert booked_by_talent >= 1
            assert [(e.stage, e.actor) for e in written] == [
                (WAB, "offer_gen"),
                (ACKED, "visitor"),
                (BOOKED, "host"),
            ]
        else:
            assert final["stage"] == ACKED, final
            assert booked_by_talent == 0
            assert [(e.stage, e.actor) for e in written] == [(WAB, "offer_gen"), (ACKED, "visitor")]
        assert [e.version for e in written] == [1] * len(written)
        assert [e.seq for e in written] == sorted({e.seq for e in written})
    assert outcomes <= {ACKED, BOOKED}


async def test_a_counter_racing_the_booking_is_either_before_it_or_refused(
    server: Server, db: Db
) -> None:
    first = await open_deal(server)
    for round_no in range(4):
        d = first if round_no == 0 else await another_visitor(server, first)
        offer_id = await negotiate_to_offer(server, d)
        await approved(d.visitor, offer_id)
        talent_a, counter, talent_b = await asyncio.gather(
            approve(d.host, offer_id),
            d.visitor.raw(COUNTER, {"offerId": offer_id, "text": COUNTER_TEXT}),
            approve(d.host, offer_id),
        )
        for body in (talent_a, talent_b):
            assert body["data"]["approveOffer"]["stage"] == BOOKED, body
        written = await offer_events(db, offer_id)
        assert stages(written) == [(WAB, 1), (ACKED, 1), (BOOKED, 1)]
        booking_seq = written[-1].seq
        countered = [
            m
            for m in await participant_lines(db, d.room_id, "visitor")
            if m.body.startswith("Counter to the written offer:")
        ]
        if counter.get("errors"):
            assert_conflict(counter, BOOKED, 1)
            assert countered == []
        else:
            # O7: a counter is allowed only before the booking, so its line comes before it.
            assert [m.body for m in countered] == [f"Counter to the written offer: {COUNTER_TEXT}"]
            assert countered[0].seq < booking_seq, (countered[0].seq, booking_seq)
            assert counter["data"]["counterOffer"]["offer"]["stage"] == ACKED, counter
        assert (await offer_row(db, offer_id)).version == 1


# --- Counter, Reject, Add -------------------------------------------------------------------


async def test_a_counter_after_the_brands_approval_needs_a_fresh_brand_approval(
    server: Server, db: Db
) -> None:
    """A material rewrite after the brand's stamp clears it."""
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    stamped = await approved(d.visitor, offer_id, 1)
    assert stamped["stage"] == ACKED
    before = await snapshot(db, offer_id)
    visitor_before = await lines(db, d.room_id, "visitor")
    host_before = await lines(db, d.room_id, "host")

    payload = (await d.visitor.query(COUNTER, {"offerId": offer_id, "text": COUNTER_TEXT}))[
        "counterOffer"
    ]
    # O7: one line in the reader's own pane, as the reader; the row is untouched.
    message = payload["message"]
    assert message["body"] == f"Counter to the written offer: {COUNTER_TEXT}"
    assert (message["seat"], message["authorKind"], message["roomId"]) == (
        "VISITOR",
        "PARTICIPANT",
        d.room_id,
    )
    assert (payload["offer"]["stage"], payload["offer"]["version"]) == (ACKED, 1)
    assert await lines(db, d.room_id, "visitor") == [
        *visitor_before,
        (AuthorKind.PARTICIPANT, message["body"]),
    ]
    assert await lines(db, d.room_id, "host") == host_before
    assert await snapshot(db, offer_id) == before
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1), (ACKED, 1)]

    # The host side rules on the new amount and the goal is met again: Offer-Gen redraws.
    await agree_until_met(server, db, d)
    redrawn = await offer_as(d.visitor, offer_id)
    assert (redrawn["stage"], redrawn["version"], redrawn["brandApprovedAt"]) == (WAB, 2, None)
    assert redrawn["terms"]["fee"] == {"amount": "7700.00", "currency": "USD"}
    assert redrawn["payment"]["total"] == "4620.00"
    assert (redrawn["agreement"]["version"], redrawn["agreement"]["current"]) == (2, True)
    assert "$7,700" in redrawn["agreement"]["text"]
    assert flips(await goal_events(db, d.room_id)) == [
        *MINTED,
        ("new-offer", "met", "open"),
        ("new-offer", "open", "met"),
    ]

    # The brand's stamp on version 1 does not carry over.
    assert_conflict(await approve(d.host, offer_id), WAB, 2)
    assert_conflict(await approve(d.visitor, offer_id, 1), WAB, 2)
    assert (await approved(d.visitor, offer_id, 2))["stage"] == ACKED
    booked = await approved(d.host, offer_id, 2)
    assert (booked["stage"], booked["version"]) == (BOOKED, 2)
    assert stages(await offer_events(db, offer_id)) == [
        (WAB, 1),
        (ACKED, 1),
        (WAB, 2),
        (ACKED, 2),
        (BOOKED, 2),
    ]
    assert [o.id for o in await room_offers(db, d.room_id)] == [uuid.UUID(offer_id)]


@pytest.mark.parametrize("seat", ["visitor", "host"])
async def test_a_reject_posts_in_the_readers_pane_and_the_agent_closes_the_offer(
    server: Server, db: Db, seat: str
) -> None:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    reader = d.visitor if seat == "visitor" else d.host
    other = "host" if seat == "visitor" else "visitor"
    before = await snapshot(db, offer_id)
    other_before = await participant_lines(db, d.room_id, other)

    payload = (await reader.query(REJECT, {"offerId": offer_id, "text": "Not this time."}))[
        "rejectOffer"
    ]
    line = "I reject the written offer. Not this time."
    assert (payload["message"]["body"], payload["message"]["seat"]) == (line, seat.upper())
    assert payload["message"]["authorKind"] == "PARTICIPANT"
    assert [m.body for m in await participant_lines(db, d.room_id, seat)][-1] == line
    assert [m.id for m in await participant_lines(db, d.room_id, other)] == [
        m.id for m in other_before
    ]
    assert await snapshot(db, offer_id) == before  # unchanged until an agent closes it
    assert payload["offer"]["stage"] == WAB

    await settle(server)
    closed = await offer_as(d.visitor, offer_id)
    assert (closed["stage"], closed["stageGloss"]) == (DECLINED, "the written offer is closed")
    assert closed["viewerActions"] == []
    assert (await offer_as(d.host, offer_id))["viewerActions"] == []
    assert flips(await goal_events(db, d.room_id)) == [*MINTED, ("new-offer", "met", "abandoned")]
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1), (DECLINED, 1)]
    for client in (d.visitor, d.host):
        assert (await client.query(ROOM_STAGE, {"id": d.room_id}))["room"]["stage"] == DECLINED
    # A closed offer can be neither approved nor changed.
    assert_conflict(await approve(d.visitor, offer_id), DECLINED, 1)
    body = await d.visitor.raw(COUNTER, {"offerId": offer_id, "text": COUNTER_TEXT})
    assert_conflict(body, DECLINED, 1)


async def test_add_posts_once_per_click_and_leaves_the_offer_until_an_agent_redraws_it(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    before = await snapshot(db, offer_id)
    posted = len(await participant_lines(db, d.room_id, "visitor"))
    text = "usage rights for 6 months"
    line = f"Please add to the written offer: {text}"

    # A double click (no clientMessageId): the same line on the same version posts once.
    first, second = await asyncio.gather(
        d.visitor.raw(ADD, {"offerId": offer_id, "text": text}),
        d.visitor.raw(ADD, {"offerId": offer_id, "text": text}),
    )
    assert not first.get("errors"), first
    assert not second.get("errors"), second
    message = first["data"]["addToOffer"]["message"]
    assert second["data"]["addToOffer"]["message"]["id"] == message["id"]
    assert (message["body"], message["seat"], message["authorKind"]) == (
        line,
        "VISITOR",
        "PARTICIPANT",
    )
    mine = await participant_lines(db, d.room_id, "visitor")
    assert [m.body for m in mine[posted:]] == [line]
    assert await snapshot(db, offer_id) == before
    assert first["data"]["addToOffer"]["offer"]["version"] == 1

    # An explicit key: its retry posts nothing, another key posts again.
    keyed = await d.visitor.query(ADD, {"offerId": offer_id, "text": text, "cid": "add-1"})
    retried = await d.visitor.query(ADD, {"offerId": offer_id, "text": text, "cid": "add-1"})
    other = await d.visitor.query(ADD, {"offerId": offer_id, "text": text, "cid": "add-2"})
    keyed_id = keyed["addToOffer"]["message"]["id"]
    assert retried["addToOffer"]["message"]["id"] == keyed_id
    assert len({message["id"], keyed_id, other["addToOffer"]["message"]["id"]}) == 3
    mine = await participant_lines(db, d.room_id, "visitor")
    assert [(m.body, m.client_message_id) for m in mine[posted + 1 :]] == [
        (line, "add-1"),
        (line, "add-2"),
    ]
    assert await snapshot(db, offer_id) == before
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1)]


# --- after the booking ----------------------------------------------------------------------


async def test_new_terms_after_the_booking_open_a_sibling_deal_room(server: Server, db: Db) -> None:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    await approved(d.visitor, offer_id)
    await approved(d.host, offer_id)
    booked = await snapshot(db, offer_id)
    rooms_before = {e["node"]["id"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]}

    await post(d.visitor, d.room_id, "Actually, could we do $7,700 for the sponsored post?")
    await agree_until_met(server, db, d)

    # O6: the booked offer is never rewritten in its room.
    assert await snapshot(db, offer_id) == booked
    kept = await offer_as(d.visitor, offer_id)
    assert (kept["stage"], kept["version"]) == (BOOKED, 1)
    assert kept["terms"]["fee"] == {"amount": "8000.00", "currency": "USD"}
    assert stages(await offer_events(db, offer_id)) == [(WAB, 1), (ACKED, 1), (BOOKED, 1)]
    old_room = (await d.visitor.query(ROOM_STAGE, {"id": d.room_id}))["room"]
    assert old_room["stage"] == BOOKED
    assert [e["node"]["id"] for e in old_room["offers"]["edges"]] == [offer_id]

    # The new terms are drawn in one new deal room for the same pair.
    host_rooms = {e["node"]["id"]: e["node"] for e in (await d.host.query(ROOMS))["rooms"]["edges"]}
    new_ids = set(host_rooms) - rooms_before
    assert len(new_ids) == 1, host_rooms
    (sibling_id,) = new_ids
    assert host_rooms[sibling_id]["kind"] == "DEAL"
    visitor_rooms = [
        e["node"]["id"]
        for e in (await d.visitor.query(ROOMS))["rooms"]["edges"]
        if e["node"]["kind"] == "DEAL"  # the brand's own home room aside
    ]
    assert sorted(visitor_rooms) == sorted([d.room_id, sibling_id])
    for client, seat in ((d.visitor, "VISITOR"), (d.host, "HOST")):
        sibling = (await client.query(ROOM, {"id": sibling_id}))["room"]
        assert (sibling["kind"], sibling["readerSeat"], sibling["stage"]) == ("DEAL", seat, WAB)
    sibling_offers = await room_offers(db, sibling_id)
    assert len(sibling_offers) == 1
    new_offer = await offer_as(d.visitor, str(sibling_offers[0].id))
    assert (new_offer["stage"], new_offer["version"], new_offer["brandApprovedAt"]) == (
        WAB,
        1,
        None,
    )
    assert new_offer["terms"]["fee"] == {"amount": "7700.00", "currency": "USD"}
    assert new_offer["terms"]["seller"] == kept["terms"]["seller"]
    assert new_offer["room"] == {"id": sibling_id}
    assert stages(await offer_events(db, new_offer["id"])) == [(WAB, 1)]

    # Both old panes say where the new offer is.
    for key in ("visitor", "host"):
        system = [b for k, b in await lines(db, d.room_id, key) if k == AuthorKind.SYSTEM]
        assert [b for b in system if sibling_id in b], (key, system)


# --- who may see and move an offer ----------------------------------------------------------


async def test_only_participants_see_an_offer_and_an_admin_acting_as_the_host_is_the_talent(
    server: Server, db: Db
) -> None:
    d = await open_deal(server)
    offer_id = await written_offer(server, d.room_id)
    before = await snapshot(db, offer_id)

    stranger = server.client()
    await sign_up(stranger, "stranger", "Stranger")
    ops = server.client()
    await sign_up(ops, "opsadmin", "Ops Admin")
    for outsider in (stranger, ops, server.client()):  # an account, an admin, a new guest
        assert_not_found(await outsider.raw(OFFER, {"id": offer_id}))
        assert_not_found(await approve(outsider, offer_id))
        assert_not_found(await outsider.raw(COUNTER, {"offerId": offer_id, "text": COUNTER_TEXT}))
    assert_not_found(await stranger.raw(OFFER, {"id": str(uuid.uuid4())}))
    assert await snapshot(db, offer_id) == before

    # O1: an admin acting for the host holds the host's seat, so approves as the talent.
    await grant(db, "opsadmin", "devraman")
    ops.headers["X-Act-As"] = (await d.host.query(ME))["me"]["id"]
    as_host = await offer_as(ops, offer_id)
    assert as_host["viewerActions"] == ["COUNTER", "REJECT", "ADD"]
    assert_conflict(await approve(ops, offer_id), WAB, 1)
    await approved(d.visitor, offer_id)
    booked = await approved(ops, offer_id)
    assert booked["stage"] == BOOKED
    written = await offer_events(db, offer_id)
    assert [(e.stage, e.actor) for e in written] == [
        (WAB, "offer_gen"),
        (ACKED, "visitor"),
        (BOOKED, "host"),
    ]
    assert isinstance((await offer_row(db, offer_id)).accepted_at, datetime)
