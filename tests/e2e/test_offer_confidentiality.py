"""What the agents are shown about a written offer, and what the offer is drawn from.

Seed 000 "Deals move through explicit physical stages" (the Sophie Bell reversal): a brand
asked the agent to "confirm Sophie's acceptance" and was told the deal was booked, because a
planner read the offers row's APPROVED label as the talent's sign-off. Here the brand asks
the same of Dev Raman's agent while the offer waits on the brand: the persona's request ends
with the live DEAL STAGE block, its system text holds the one vocabulary, no request to any
agent shows an offers-system label as a stage, the reply claims nothing, and only the two
approvals, in order, move the stage.

Seed 002 layers 1-3 carried to the offer: the written offer and its agreement draft are shown
to the visitor, so Offer-Gen reads only the visitor's side and the agreement only the offer's
commercial fields. Canaries planted in the host's private rules, its private room memory and
its own pane never reach them, nor anything stored or streamed about the offer; the host-side
requests carry every canary, so a broken planting cannot pass for confidentiality.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

import pytest
from sqlalchemy import select

from dealroom.agents.models.base import AgentName, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.domain.cursors import event_cursor, parse_event_cursor
from dealroom.domain.offer_stage import GLOSSES, Stage, deal_stage_block, vocabulary
from dealroom.persistence.db import Db
from dealroom.persistence.models import Agreement, Offer, OfferEvent
from tests.conftest import Server
from tests.support.graphql import Client, GraphQLErrors, open_room, post, subscribe, ws_init_for
from tests.support.offers import (
    ADD,
    AGREE,
    APPROVE,
    BID,
    COUNTER,
    OFFER_STAGE,
    OPENING,
    ROOM_STAGE,
    approve_as_read,
    negotiate_to_offer,
    offer_as,
    offer_events,
    stages,
)
from tests.support.recording import (
    RecordingClient,
    canary,
    everything_sent,
    room_memory,
    trigger_kind,
    write_room_memory,
)
from tests.support.turns import (
    PANE_EVENTS_FULL,
    RULES,
    deal,
    host_with_rules,
    messages_in,
    visitor_client,
)

HOST_NAME = "Dev Raman"

SOPHIE = f"Please confirm {HOST_NAME}'s acceptance of these terms"
"""The brand's request that once became a false booking (seed 000)."""

OFFERS_LABEL = re.compile(r"(?<![A-Za-z0-9_])(?:APPROVED|ACCEPTED)(?![A-Za-z0-9_])")
"""The offers row's status labels as bare words. Case-sensitive: the vocabulary's own
warning ("never call terms ... 'accepted', 'approved'") is lower case, and no stage name
contains either word."""

CLAIM = re.compile(
    r"(?<!not )(?<!n't )(?<!never )\b(?:booked|accepts|accepted|confirms|confirmed)\b",
    re.IGNORECASE,
)
"""Saying the deal is booked, accepted or confirmed (not: that it is not, or not yet)."""

TALENT_SIGNED = re.compile(
    rf"{HOST_NAME} (?:has )?(?:approved|accepted|accepts|confirmed|signed)", re.IGNORECASE
)

PANE_EVENTS = PANE_EVENTS_FULL.replace(
    "... on MessageDelta",
    "... on StageChanged { cursor offerId stage stageGloss version }\n    ... on MessageDelta",
)


@pytest.fixture
def model() -> RecordingClient:
    return RecordingClient(OfflineClient())


def persona_turn(requests: Iterable[ModelRequest], body: str) -> ModelRequest:
    """The visitor persona's request answering the visitor's message ``body``."""
    found = [
        r
        for r in requests
        if r.agent is AgentName.PERSONA
        and r.visitor_facing
        and trigger_kind(r) == "message"
        and r.context["trigger"]["body"] == body
    ]
    assert len(found) == 1, [r.context.get("trigger") for r in requests]
    return found[0]


async def replies_to(db: Db, room_id: str, body: str) -> list[str]:
    """The agent lines in the visitor pane after the visitor's message ``body``."""
    lines = await messages_in(db, room_id, "visitor")
    at = max(i for i, m in enumerate(lines) if m.body == body and m.author_kind == "participant")
    replies = [m.body for m in lines[at + 1 :] if m.author_kind == "agent"]
    assert replies, f"nobody answered {body!r}"
    return replies


def assert_tail(request: ModelRequest, stage: Stage) -> None:
    """The DEAL STAGE block, live, is the very end of the prompt (seed 002 layer 3)."""
    assert request.prompt.endswith(deal_stage_block(stage)), request.prompt[-400:]
    assert request.context["stage"] == {"stage": stage.value, "gloss": GLOSSES[stage]}
    assert vocabulary() in request.system


async def current_stage(client: Client, room_id: str) -> str:
    stage: str = (await client.query(ROOM_STAGE, {"id": room_id}))["room"]["stage"]
    return stage


# --- 6. the Sophie Bell reversal -------------------------------------------------------------


async def test_asking_to_confirm_the_talents_acceptance_moves_nothing(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    d = await deal(server)
    offer_id = await negotiate_to_offer(server, d)
    assert await current_stage(d.visitor, d.room_id) == "WRITTEN_AWAITING_BRAND"

    mark = len(model.requests)
    await post(d.visitor, d.room_id, SOPHIE)
    await server.settle()
    request = persona_turn(model.requests[mark:], SOPHIE)
    assert_tail(request, Stage.WRITTEN_AWAITING_BRAND)
    for reply in await replies_to(db, d.room_id, SOPHIE):
        assert not CLAIM.search(reply), reply
        assert not TALENT_SIGNED.search(reply), reply
    assert await current_stage(d.visitor, d.room_id) == "WRITTEN_AWAITING_BRAND"

    # The talent saying yes in chat is an instruction to its agent, never the booking.
    await post(d.host, d.room_id, "Yes, I accept these terms. Tell them it's confirmed.")
    await server.settle()
    assert await current_stage(d.visitor, d.room_id) == "WRITTEN_AWAITING_BRAND"
    assert {s for s, _ in stages(await offer_events(db, offer_id))} == {"WRITTEN_AWAITING_BRAND"}
    for line in await messages_in(db, d.room_id, "visitor"):
        if line.author_kind == "agent":
            assert not CLAIM.search(line.body), line.body
            assert not TALENT_SIGNED.search(line.body), line.body

    # Out of order: the talent cannot book before the brand approved this version.
    body = await d.host.raw(APPROVE, {"offerId": offer_id, "version": None})
    assert [(e["extensions"]["code"], e["extensions"]["stage"]) for e in body["errors"]] == [
        ("CONFLICT", "WRITTEN_AWAITING_BRAND")
    ]

    assert (await approve_as_read(d.visitor, offer_id))["stage"] == "BRAND_ACKED_AWAITING_TALENT"
    again = f"{SOPHIE}, now that I've approved."
    mark = len(model.requests)
    await post(d.visitor, d.room_id, again)
    await server.settle()
    assert_tail(persona_turn(model.requests[mark:], again), Stage.BRAND_ACKED_AWAITING_TALENT)
    for reply in await replies_to(db, d.room_id, again):
        assert not CLAIM.search(reply), reply
        assert not TALENT_SIGNED.search(reply), reply
    assert await current_stage(d.visitor, d.room_id) == "BRAND_ACKED_AWAITING_TALENT"

    # The talent's approval of the written offer is the booking; the next request shows it.
    assert (await approve_as_read(d.host, offer_id))["stage"] == "BOOKED_AWAITING_PAYMENT"
    mark = len(model.requests)
    await post(d.visitor, d.room_id, "Is it booked now?")
    await server.settle()
    after = model.requests[mark:]
    assert_tail(persona_turn(after, "Is it booked now?"), Stage.BOOKED_AWAITING_PAYMENT)
    # Now it is true, and said (the checks above can tell a claim when they see one).
    booked = " ".join(await replies_to(db, d.room_id, "Is it booked now?"))
    assert CLAIM.search(booked), booked
    assert TALENT_SIGNED.search(booked), booked
    tails = [r for r in after if r.agent in (AgentName.PERSONA, AgentName.DISTIL)]
    assert tails
    for request in tails:
        assert request.prompt.endswith(deal_stage_block(Stage.BOOKED_AWAITING_PAYMENT))

    assert stages(await offer_events(db, offer_id)) == [
        ("WRITTEN_AWAITING_BRAND", 1),
        ("BRAND_ACKED_AWAITING_TALENT", 1),
        ("BOOKED_AWAITING_PAYMENT", 1),
    ]
    # The offers row said APPROVED and then ACCEPTED while these requests were made; no
    # agent was ever shown either label.
    agents = {r.agent for r in model.requests}
    assert {AgentName.PERSONA, AgentName.DISTIL, AgentName.OFFER_GEN} <= agents
    for request in model.requests:
        shown = OFFERS_LABEL.findall(everything_sent(request))
        assert not shown, (request.agent, request.context.get("pane"), shown)


# --- 7. canaries never reach the offer -------------------------------------------------------


def leaked(text: str, canaries: Iterable[str]) -> set[str]:
    """Canaries in ``text``, in any case (a writer may lower-case what it records)."""
    folded = text.lower()
    return {c for c in canaries if c.lower() in folded}


def dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


async def stored_offer_rows(db: Db, room_id: str) -> str:
    """Every row the offer flow stored for the room (offers, stage events, agreements)."""
    room = uuid.UUID(room_id)
    try:
        offers = list(await db.scalars(select(Offer).where(Offer.room_id == room)))
        events = list(await db.scalars(select(OfferEvent).where(OfferEvent.room_id == room)))
        agreements = list(
            await db.scalars(
                select(Agreement).where(Agreement.offer_id.in_([o.id for o in offers]))
            )
        )
        assert offers
        assert events
        assert agreements
        return dumped(
            [
                [(o.key, o.status, o.terms, o.open_questions, o.fingerprint) for o in offers],
                [(e.stage, e.version, e.actor) for e in events],
                [(a.version, a.fingerprint, a.text) for a in agreements],
            ]
        )
    finally:
        await db.close()


async def stream_of(server: Server, client: Client, room_id: str, seat: str, last: int) -> str:
    """A pane's stored events replayed over a subscription, up to cursor ``last``."""
    events: list[dict[str, Any]] = []
    variables = {"roomId": room_id, "seat": seat, "after": event_cursor(0)}
    async with subscribe(server.ws_url, PANE_EVENTS, variables, init=ws_init_for(client)) as sub:
        while not events or parse_event_cursor(events[-1]["cursor"]) < last:
            events.append(await sub.event(timeout=10))
    changes = [e for e in events if e["__typename"] == "StageChanged"]
    assert changes, f"no StageChanged in the {seat} pane"
    return dumped(changes)


async def partner_stream(server: Server, client: Client, offer_id: str, count: int) -> str:
    variables = {"offerId": offer_id, "after": event_cursor(0)}
    seen: list[dict[str, Any]] = []
    async with subscribe(server.ws_url, OFFER_STAGE, variables, init=ws_init_for(client)) as sub:
        for _ in range(count):
            payload = await sub.next(timeout=10)
            if payload.get("errors"):
                raise GraphQLErrors(payload["errors"])
            seen.append(payload["data"]["offerStage"])
    return dumped(seen)


async def test_no_host_secret_reaches_the_written_offer_or_its_agreement(
    agent_server: Server, db: Db, model: RecordingClient
) -> None:
    server = agent_server
    secret = {
        p: canary(p)
        for p in ("rule", "note", "plan", "question", "instruction", "unknown", "floor")
    }
    canaries = set(secret.values())

    # The host's standing rules, told in its home room, seed the deal room's host branch.
    host, _home = await host_with_rules(
        server, rules=f"{RULES} I also never work with {secret['rule']} brands."
    )
    visitor = await visitor_client(server)  # a signed-in brand: a guest's terms wait
    room_id: str = (await open_room(visitor, "devraman"))["room"]["id"]
    seeded = await room_memory(db, room_id)
    assert leaked(dumped(seeded.get("host")), canaries) == {secret["rule"]}  # the planting took
    # The host-side parts a room holds (as the host's agents would have written them).
    seeded["host"]["private_note"] = secret["note"]
    seeded["plans"] = {"host": secret["plan"]}
    seeded["pendingPrincipalDecisions"] = {
        "usage_rights": {
            "side": "host",
            "question": secret["question"],
            "principalInstruction": secret["instruction"],
        }
    }
    seeded["internalNotes"] = {"note": secret["unknown"]}
    await write_room_memory(db, room_id, seeded)

    # The negotiation, with the host confiding in its own agent half-way.
    for author, line in (
        (visitor, OPENING.format(upfront="50% upfront")),
        (visitor, BID),
        (host, f"Between us, my floor is {secret['floor']}."),
        (visitor, AGREE),
    ):
        await post(author, room_id, line)
        await server.settle()
    offer = (await visitor.query(ROOM_STAGE, {"id": room_id}))["room"]["offer"]
    assert offer is not None
    offer_id: str = offer["id"]

    # Counter, then Add and the host's yes: each redraws the offer (a new version).
    await visitor.query(
        COUNTER, {"offerId": offer_id, "text": "Could we do $7,200 for the sponsored post?"}
    )
    await server.settle()
    await visitor.query(ADD, {"offerId": offer_id, "text": "usage rights for 6 months"})
    await server.settle()
    await post(host, room_id, "Yes, go ahead.")
    await server.settle()
    written = await offer_as(visitor, offer_id)
    assert written["version"] >= 2, "the offer was never rewritten"
    assert written["agreement"]["current"]
    # And the two clicks: booked.
    assert (await approve_as_read(visitor, offer_id))["stage"] == "BRAND_ACKED_AWAITING_TALENT"
    assert (await approve_as_read(host, offer_id))["stage"] == "BOOKED_AWAITING_PAYMENT"
    await server.settle()

    # Offer-Gen is the visitor's: every call is marked so and none holds a secret.
    offer_gen = model.where(AgentName.OFFER_GEN)
    assert len(offer_gen) >= 2  # the mint and at least one rewrite
    for request in offer_gen:
        assert request.visitor_facing
        assert not leaked(everything_sent(request), canaries), request.context.get("memory")
    agreement = model.where(AgentName.AGREEMENT)
    assert len(agreement) >= 2
    for request in agreement:
        assert not leaked(everything_sent(request), canaries)
    for request in model.where(visitor_facing=True):
        assert not leaked(everything_sent(request), canaries), request.agent

    # The offer as the visitor reads it: terms, open questions, agreement draft.
    read = await offer_as(visitor, offer_id)
    assert read["agreement"]["text"]
    assert not leaked(dumped(read), canaries)
    assert not leaked(dumped(await visitor.query(ROOM_STAGE, {"id": room_id})), canaries)
    # The talent reads the same document: nothing of the host's went into it either.
    assert not leaked(dumped(await offer_as(host, offer_id)), canaries)
    # What was stored and what was streamed about it.
    assert not leaked(await stored_offer_rows(db, room_id), canaries)
    changes = await offer_events(db, offer_id)
    last = max(e.seq for e in changes)
    streams = await asyncio.gather(
        stream_of(server, visitor, room_id, "VISITOR", last),
        stream_of(server, host, room_id, "HOST", last),
        partner_stream(server, visitor, offer_id, len(changes)),
    )
    for streamed in streams:
        assert not leaked(streamed, canaries)

    # Positive control: the host's own agents were shown every secret.
    host_side = [r for r in model.where(AgentName.PERSONA) if not r.visitor_facing]
    assert host_side
    assert leaked("\n".join(everything_sent(r) for r in host_side), canaries) == canaries
