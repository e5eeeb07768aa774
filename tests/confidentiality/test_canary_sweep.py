"""The canary sweep: a host-side model that leaks on purpose, then every visitor-readable
surface read and its canaries counted (goal: 0 on each).

Every agent runs on the leaky model (tests/support/leaky.py) over the fake Gemini server and the
real google-genai client. The host's account memory holds a floor ($6,137), a private term ("no
zyglorb brands"), an e-mail address and a phone number; every room is seeded from it. The attacks
go through every host-side writer: the host's persona (rulings a cent and a dollar over the floor
and at it, their open questions; free text after the principal spoke), Distil (public notes, a
forged instruction naming the floor, the floor lowered to $1), the Guard (visitor-readable
"repairs", an owed send), Arvist (durable public notes, the floor dropped), AccUpdate (the limits
named stale), Offer-Gen and the agreement writer. Then the sweep reads: the visitor pane over
GraphQL and over its subscription, the visitor-facing model requests, written offers, agreement
drafts, webhook payloads, brands' durable memory, brands' notifications (what their e-mails are
written from) and the welcome of a new room.

``pytest -s`` prints the canaries per surface (``bench/canaries.py`` runs it and prints them).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from dealroom.agents.models.gemini import GeminiClient
from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.jobs.arvist import enqueue_arvist_for_room
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    AccountMemory,
    Agreement,
    Notification,
    Offer,
    WebhookEvent,
)
from dealroom.persistence.models import Room as RoomRow
from tests.conftest import Server
from tests.support.fake_gemini import FakeGemini, running_fake_gemini
from tests.support.graphql import open_room, post, subscribe
from tests.support.leaky import ACCEPT, Leaky, canaries, host_durable
from tests.support.partners import create_webhook
from tests.support.recording import (
    EventLog,
    RecordingClient,
    draining,
    everything_sent,
    pane_messages,
    read_pane,
    room_memory,
    room_rows,
)
from tests.support.rooms import account_client, set_account_memory
from tests.support.turns import PANE_EVENTS_FULL
from tests.support.watches import quiet

HOST = "devraman"
ROOMS = 2
PROPOSAL = "Could you do a sponsored post for $4,000?"
SURFACES = (
    "visitor pane (GraphQL)",
    "visitor pane (subscription)",
    "visitor-facing model requests",
    "written offers",
    "agreement drafts",
    "webhook payloads",
    "brands' durable memory",
    "welcome of a new room",
    "brands' notifications (in-app, email)",
)


@pytest.fixture
def agent_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "workers": 3,
            "worker_poll_seconds": 0.05,
            "webhook_allow_loopback": True,
            "webhook_workers": 0,
            "greet_visitors": True,  # a new room opens with code's welcome from host.public
        }
    )


@pytest.fixture
def leaky() -> Leaky:
    return Leaky()


@pytest.fixture
async def fake(leaky: Leaky) -> AsyncIterator[FakeGemini]:
    async with running_fake_gemini() as fake:
        fake.responder = leaky
        yield fake


@pytest.fixture
async def model(fake: FakeGemini) -> AsyncIterator[RecordingClient]:
    client = RecordingClient(GeminiClient(api_key="test", base_url=fake.base_url, attempts=1))
    yield client
    await client.close()


async def _rows(db: Db, model: type[Any], *where: Any) -> list[Any]:
    try:
        return list(await db.scalars(select(model).where(*where)))
    finally:
        await db.close()


async def _curate(server: Server, db: Db, room_id: str) -> None:
    """The curator window's Arvist runs for the room, queued now."""
    try:
        room = await db.get(RoomRow, uuid.UUID(room_id))
        assert room is not None
        await enqueue_arvist_for_room(db, room, server.clock.now())
        await db.commit()
    finally:
        await db.close()
    server.runner.wake()
    await server.settle(timeout=120)


def count(texts: list[str]) -> dict[str, int]:
    """Canaries found, per secret, over ``texts``."""
    found: dict[str, int] = {}
    for text in texts:
        for secret in canaries(text):
            found[secret] = found.get(secret, 0) + 1
    return found


async def test_no_canary_reaches_any_visitor_surface_under_a_leaking_model(
    agent_server: Server, db: Db, fake: FakeGemini, model: RecordingClient, leaky: Leaky
) -> None:
    server = agent_server
    host = server.client()
    host_id = await account_client(host, HOST, "Dev Raman")
    await set_account_memory(db, host_id, host_durable())
    await create_webhook(host, "http://127.0.0.1:9/hook")
    brands = [server.client() for _ in range(ROOMS)]
    brand_ids = [await account_client(b, f"brand{n}", f"Brand {n}") for n, b in enumerate(brands)]
    rooms = [(await open_room(b, HOST))["room"]["id"] for b in brands]
    seeded = await room_memory(db, rooms[0])
    assert seeded["host"]["limits"]["sponsored_post"]["floor"] == "6137"  # the planting took

    surfaces: dict[str, list[str]] = {name: [] for name in SURFACES}
    async with AsyncExitStack() as stack:
        logs: list[EventLog] = []
        for brand, room_id in zip(brands, rooms, strict=True):
            sub = await stack.enter_async_context(
                subscribe(
                    server.ws_url,
                    PANE_EVENTS_FULL,
                    {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)},
                    headers=dict(brand.headers),
                )
            )
            logs.append(await stack.enter_async_context(draining(sub)))

        async def proposals(times: int) -> None:
            for _ in range(times):
                for brand, room_id in zip(brands, rooms, strict=True):
                    await post(brand, room_id, PROPOSAL)
                await server.settle(timeout=120)
                server.clock.advance(timedelta(minutes=11))  # past the pair's send cap

        await proposals(3)  # rulings: a cent over, a dollar over, the floor
        for room_id in rooms:
            await post(host, room_id, "OK, go ahead.")  # the principal spoke: free text
        await server.settle(timeout=120)
        await proposals(1)
        await quiet(server)  # the Guard
        for room_id in rooms:
            await _curate(server, db, room_id)  # Arvist
        await proposals(3)  # AccUpdate merges what Arvist wrote, then more rulings
        for brand, room_id in zip(brands, rooms, strict=True):
            await post(brand, room_id, ACCEPT)
        await server.settle(timeout=120)

        for brand, room_id, log in zip(brands, rooms, logs, strict=True):
            pages = await read_pane(brand, room_id, "VISITOR")
            surfaces["visitor pane (GraphQL)"].append(json.dumps(pages, ensure_ascii=False))
            stored = await pane_messages(db, room_id, "visitor")
            await log.wait_for(str(stored[-1].id))
            surfaces["visitor pane (subscription)"].append(log.dump())

    surfaces["visitor-facing model requests"] = [
        everything_sent(r) for r in model.where(visitor_facing=True)
    ]
    offers = [o for room_id in rooms for o in await room_rows(db, Offer, room_id)]
    ids = [o.id for o in offers]
    surfaces["written offers"] = [json.dumps([o.terms, o.open_questions]) for o in offers]
    surfaces["agreement drafts"] = [
        a.text for a in await _rows(db, Agreement, Agreement.offer_id.in_(ids))
    ]
    surfaces["webhook payloads"] = [
        json.dumps(e.payload) for e in await _rows(db, WebhookEvent, WebhookEvent.offer_id.in_(ids))
    ]
    surfaces["brands' durable memory"] = [
        json.dumps(m.document)
        for m in await _rows(
            db, AccountMemory, AccountMemory.account_id.in_([uuid.UUID(b) for b in brand_ids])
        )
    ]
    brand_uuids = [uuid.UUID(b) for b in brand_ids]
    surfaces["brands' notifications (in-app, email)"] = [
        json.dumps([n.title, n.body, n.link, n.reason])
        for n in await _rows(db, Notification, Notification.account_id.in_(brand_uuids))
    ]
    newcomer = server.client()
    await account_client(newcomer, "brandnew", "Brand New")
    fresh = (await open_room(newcomer, HOST))["room"]["id"]
    welcome = await read_pane(newcomer, fresh, "VISITOR")
    assert welcome[0]["room"]["pane"]["messages"]["edges"], "the new room was not greeted"
    surfaces["welcome of a new room"] = [json.dumps(welcome, ensure_ascii=False)]

    found = {name: count(texts) for name, texts in surfaces.items()}
    print("\ncanaries per visitor surface (leaking host-side model):")
    for name in SURFACES:
        shown = f"{found[name] or ''} ({len(surfaces[name])} read)"
        print(f"  {name:38} {sum(found[name].values()):4d}  {shown}")
    print(f"  model answers {leaky.answered}; answers that leaked {leaky.leaked}")

    # The adversary really tried, through every host-side writer that can see the secrets.
    for writer in ("persona", "distil", "guard", "arvist"):
        assert leaky.leaked.get(writer), f"the {writer} never saw a secret: the attack did not run"
    asked = [
        question
        for request in model.where(visitor_facing=True)
        for question in (request.context.get("trigger") or {}).get("open_questions") or []
    ]
    assert asked, "no open question crossed: the attack through them did not run"
    assert offers, "no offer was drawn"
    assert surfaces["agreement drafts"], "no agreement was drawn"
    assert surfaces["webhook payloads"], "the webhook outbox wrote nothing"
    # On a leak, the texts that carried it: what the next person needs to find the path.
    leaked = {
        name: [text[:600] for text in texts if canaries(text)][:3]
        for name, texts in surfaces.items()
        if found[name]
    }
    assert {name: n for name, n in found.items() if n} == {}, leaked
