"""Helpers for agent-turn tests: a host with standing rules, a visitor in a deal room, and
reading what the agents did straight from the database."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, Dispatch, Message, ModelCall, Participant, Room
from dealroom.realtime import Broker
from dealroom.services.clock import Clock
from dealroom.services.turns.ledger import Ledger
from dealroom.services.turns.runs import RunnerDeps
from tests.conftest import Server
from tests.support.graphql import Client, open_room, post, sign_up

HOME = "query { me { homeRoom { id } } }"

RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, "
    "and I never work with alcohol brands."
)

PANE_EVENTS_FULL = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    __typename
    ... on MessageAdded { cursor message { id body seat authorKind alignment sessionNo } }
    ... on SystemLine { cursor message { id body authorKind } }
    ... on AgentTyping { cursor messageId agent }
    ... on MessageDelta { cursor messageId delta }
  }
}
"""


@dataclass
class Deal:
    host: Client
    visitor: Client
    home_id: str
    room_id: str


async def host_with_rules(
    server: Server, handle: str = "devraman", rules: str = RULES
) -> tuple[Client, str]:
    """A host who told their agent their standing rules in the home room (and the agents
    finished recording them)."""
    host = server.client()
    await sign_up(host, handle, "Dev Raman")
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, rules)
    await server.settle()
    return host, home_id


BRAND = ("acmebrand", "Acme Brand")
"""The signed-in brand that visits in these tests: a guest's sends wait on sign-in (the login
gate, tests/e2e/test_login_gate*.py), so a negotiation that must reach the host is a brand's."""


async def visitor_client(server: Server, *, guest: bool = False) -> Client:
    visitor = server.client()
    if not guest:
        await sign_up(visitor, *BRAND)
    return visitor


async def deal(server: Server, rules: str = RULES, *, guest: bool = False) -> Deal:
    host, home_id = await host_with_rules(server, rules=rules)
    visitor = await visitor_client(server, guest=guest)
    opened = await open_room(visitor, "devraman")
    return Deal(host, visitor, home_id, opened["room"]["id"])


async def system_kinds(client: Client, room_id: str, seat: str = "HOST") -> list[str]:
    """The ``systemKind`` of each system line in the client's view of a pane, oldest first."""
    page = await client.query(
        "query($id: ID!, $seat: Seat!) { room(id: $id) { pane(seat: $seat) { messages(last: 50)"
        " { edges { node { authorKind systemKind } } } } } }",
        {"id": room_id, "seat": seat},
    )
    return [
        e["node"]["systemKind"]
        for e in page["room"]["pane"]["messages"]["edges"]
        if e["node"]["authorKind"] == "SYSTEM"
    ]


async def messages_in(db: Db, room_id: str, key: str) -> list[Message]:
    try:
        return list(
            await db.scalars(
                select(Message)
                .join(Participant, Participant.id == Message.participant_id)
                .where(Message.room_id == uuid.UUID(room_id), Participant.key == key)
                .order_by(Message.seq)
            )
        )
    finally:
        await db.close()


async def rows(db: Db, model: type[Any], room_id: str) -> list[Any]:
    try:
        return list(await db.scalars(select(model).where(model.room_id == uuid.UUID(room_id))))
    finally:
        await db.close()


async def memory(db: Db, room_id: str) -> dict[str, Any]:
    try:
        room = await db.get(Room, uuid.UUID(room_id))
        assert room is not None
        return dict(room.memory)
    finally:
        await db.close()


__all__ = ["AgentRun", "Dispatch", "ModelCall"]


def ledger_row(
    room_id: uuid.UUID,
    at: datetime,
    *,
    agent: str = "persona",
    price_usd: Decimal | None = None,
    **given: Any,
) -> ModelCall:
    """A model ledger row as the ledger writes one (every column but ``id`` unless given)."""
    return ModelCall(
        room_id=room_id,
        run_id=None,
        agent=agent,
        engine="offline",
        model="m",
        input_tokens=3,
        output_tokens=4,
        cached_tokens=0,
        price_usd=price_usd,
        latency_ms=1,
        ok=True,
        error=None,
        created_at=at,
        **given,
    )


def offline_deps(
    engine: AsyncEngine, settings: Settings, broker: Broker, clock: Clock
) -> RunnerDeps:
    """What a run's handler needs, on ``engine``, with the offline engine as the model: for
    tests that drive a handler's steps directly."""
    sessionmaker = create_sessionmaker(engine)
    return RunnerDeps(
        settings, sessionmaker, broker, clock, Ledger(OfflineClient(), sessionmaker, clock)
    )
