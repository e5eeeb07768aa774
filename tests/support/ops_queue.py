"""Row factories for the ops queue's sources (the state a queue test is not about) and the
queue's GraphQL documents."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    AgentRun,
    Flag,
    GuardVerdict,
    Notification,
    Offer,
    Participant,
    Payment,
    Room,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from tests.conftest import Server
from tests.support.graphql import Client, open_room, sign_up

QUEUE = """
query($first: Int = 20, $after: String, $level: QueueLevel, $kind: QueueItemKind) {
  opsQueue(first: $first, after: $after, level: $level, kind: $kind) {
    edges { cursor node { id } }
    nodes {
      id kind level summary roomId roomTitle link raisedAt ageSeconds
      acknowledgedAt acknowledgedById assignee resolvedAt note
    }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}
"""
ACK = "mutation($id: ID!) { acknowledgeQueueItem(itemId: $id) { id acknowledgedAt } }"
ASSIGN = """
mutation($id: ID!, $op: String!) { assignQueueItem(itemId: $id, operator: $op) { id assignee } }
"""
RESOLVE = """
mutation($id: ID!, $note: String!) {
  resolveQueueItem(itemId: $id, note: $note) { id resolvedAt resolvedBy note }
}
"""
HISTORY = """
query($room: ID!) {
  opsRoom(roomId: $room) { queueHistory { nodes { id kind note resolvedBy assignee } } }
}
"""


@dataclass(frozen=True, slots=True)
class QueueRoom:
    room_id: uuid.UUID
    host_account_id: uuid.UUID
    host_pane: uuid.UUID
    visitor_pane: uuid.UUID
    host: Client


async def queue_room(server: Server, db: Db, handle: str = "devraman") -> QueueRoom:
    """A deal room with its two panes (a host and a signed-in visitor), no agent run."""
    host = server.client()
    await sign_up(host, handle, "Dev Raman")
    visitor = server.client()
    await sign_up(visitor, f"brand{handle}", "Acme")
    opened = await open_room(visitor, handle)
    room_id = uuid.UUID(opened["room"]["id"])
    try:
        room = await db.get(Room, room_id)
        assert room is not None
        panes = {
            p.key: p.id
            for p in await db.scalars(select(Participant).where(Participant.room_id == room_id))
        }
        return QueueRoom(room_id, room.host_account_id, panes["host"], panes["visitor"], host)
    finally:
        await db.close()


async def _added(db: Db, *rows: Any) -> None:
    try:
        await db.add(*rows)
        await db.commit()
    finally:
        await db.close()


async def add_flag(db: Db, room: QueueRoom, level: str, at: datetime, evidence: str = "") -> str:
    flag = Flag(
        id=uuid.uuid4(),
        room_id=room.room_id,
        participant_id=room.visitor_pane,
        level=level,
        evidence=evidence or f"a {level} frustration",
        created_at=at,
    )
    await _added(db, flag)
    return f"flag:{flag.id}"


async def add_run(db: Db, room: QueueRoom, status: str, at: datetime) -> AgentRun:
    run = AgentRun(
        id=uuid.uuid4(),
        room_id=room.room_id,
        participant_id=room.visitor_pane,
        agent="persona",
        status=status,
        attempts=3,
        error="model unavailable" if status == "failed" else None,
        created_at=at,
        not_before=at,
        finished_at=at,
    )
    await _added(db, run)
    return run


async def add_verdict(db: Db, room: QueueRoom, verdict: str, at: datetime) -> str:
    run = await add_run(db, room, "done", at)
    row = GuardVerdict(
        id=uuid.uuid4(), room_id=room.room_id, run_id=run.id, verdict=verdict, created_at=at
    )
    await _added(db, row)
    return f"verdict:{row.id}"


async def add_payment(db: Db, room: QueueRoom, status: str, at: datetime) -> str:
    offer = Offer(
        id=uuid.uuid4(),
        room_id=room.room_id,
        key="new-offer",
        seller_account_id=room.host_account_id,
        status="PAYMENT_HELD" if status != "pending" else "PENDING_PAY_CAPTURE",
        terms={"fee": {"amount": "1000", "currency": "USD"}},
        open_questions=[],
        version=1,
        fingerprint="arranged",
        created_at=at,
        updated_at=at,
    )
    payment = Payment(
        id=uuid.uuid4(),
        offer_id=offer.id,
        idempotency_key=f"k-{uuid.uuid4().hex[:8]}",
        method="test_card_ok",
        provider="test",
        status=status,
        currency="USD",
        due=Decimal("500"),
        platform_fee=Decimal("100"),
        total=Decimal("600"),
        offer_version=1,
        created_at=at,
        updated_at=at,
    )
    await _added(db, offer)
    await _added(db, payment)
    return f"payment:{payment.id}"


async def add_escalation(db: Db, room: QueueRoom, at: datetime) -> str:
    """A host decision its principal left unanswered past the escalation window."""
    wait = Notification(
        id=uuid.uuid4(),
        account_id=room.host_account_id,
        room_id=room.room_id,
        kind="decision",
        audience="host",
        source=f"decision:{uuid.uuid4()}",
        title="Your agent asks: may we do 3 reels?",
        body="The brand asked for three reels.",
        link=f"/r/{room.room_id}",
        reason="You are the host.",
        status="kept",
        next_attempt_at=at,
        wait_state="escalated",
        waiting_since=at,
        wait={"host": str(room.host_pane)},
        created_at=at,
    )
    await _added(db, wait)
    return f"escalation:{wait.id}"


async def add_failing_webhook(db: Db, room: QueueRoom, since: datetime) -> str:
    hook = Webhook(
        id=uuid.uuid4(),
        account_id=room.host_account_id,
        url="https://partner.example/hook",
        events=["offer.created"],
        secret="whsec_test",
        status="active",
        created_at=since,
    )
    event = WebhookEvent(id=uuid.uuid4(), type="offer.created", source=f"s-{uuid.uuid4()}")
    delivery = WebhookDelivery(
        id=uuid.uuid4(),
        webhook_id=hook.id,
        event_id=event.id,
        status="pending",
        attempts=6,
        next_attempt_at=since,
        last_status=503,
        created_at=since,
        first_attempt_at=since,
    )
    await _added(db, hook, event)
    await _added(db, delivery)
    return f"webhook:{hook.id}"
