"""Row factories for operators' searches: hosts, visitors, rooms with their panes, flags, model
calls and written offers inserted directly (Core inserts in batches), not through the server.
Used by the search tests and by ``bench/ops_search.py``."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.offer_stage import OfferRow, OfferStatus, derive_stage
from dealroom.persistence.models import (
    Account,
    Credential,
    Flag,
    ModelCall,
    Offer,
    OfferEvent,
    Participant,
    Room,
)

BATCH = 1000


@dataclass
class RoomSpec:
    """One room to insert; the defaults make a quiet room with no offer."""

    host: uuid.UUID
    visitor: uuid.UUID | None
    last_activity_at: datetime
    flags: tuple[str, ...] = ()
    spend_usd: tuple[Decimal, ...] = ()
    offer_status: str | None = None
    brand_approved: bool = False
    fee: str | None = None
    currency: str = "USD"
    id: uuid.UUID = field(default_factory=uuid.uuid4)


async def _insert(engine: AsyncEngine, table: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH):
        async with engine.begin() as conn:
            await conn.execute(insert(table), rows[start : start + BATCH])


async def add_accounts(
    engine: AsyncEngine, people: Sequence[tuple[str, str, str | None]], at: datetime
) -> dict[str, uuid.UUID]:
    """(handle, display name, email or None) each; their ids by handle. Each is a second
    newer than the one before."""
    ids = {handle: uuid.uuid4() for handle, _, _ in people}
    await _insert(
        engine,
        Account.__table__,
        [
            {
                "id": ids[handle],
                "handle": handle,
                "display_name": name,
                "is_operator": False,
                "created_at": at + timedelta(seconds=i),
            }
            for i, (handle, name, _) in enumerate(people)
        ],
    )
    await _insert(
        engine,
        Credential.__table__,
        [
            {"account_id": ids[handle], "email": email, "password_hash": "x", "updated_at": at}
            for handle, _, email in people
            if email is not None
        ],
    )
    return ids


async def add_rooms(engine: AsyncEngine, specs: list[RoomSpec]) -> None:
    rooms: list[dict[str, Any]] = []
    panes: list[dict[str, Any]] = []
    flags: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    offers: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for spec in specs:
        at = spec.last_activity_at
        rooms.append(
            {
                "id": spec.id,
                "kind": "deal",
                "mode": "live",
                "host_account_id": spec.host,
                "title": "Deal",
                "memory": {},
                "model_picks": {},
                "created_at": at,
                "last_activity_at": at,
            }
        )
        host_pane = uuid.uuid4()
        panes.append({"id": host_pane, "room_id": spec.id, "key": "host", "account_id": spec.host})
        visitor_pane = uuid.uuid4()
        panes.append(
            {"id": visitor_pane, "room_id": spec.id, "key": "visitor", "account_id": spec.visitor}
        )
        for level in spec.flags:
            flags.append(
                {
                    "id": uuid.uuid4(),
                    "room_id": spec.id,
                    "participant_id": visitor_pane,
                    "level": level,
                    "evidence": "??",
                    "created_at": at,
                }
            )
        for price in spec.spend_usd:
            calls.append(
                {
                    "id": uuid.uuid4(),
                    "room_id": spec.id,
                    "agent": "persona",
                    "engine": "offline",
                    "model": "offline",
                    "price_usd": price,
                    "created_at": at,
                }
            )
        if spec.offer_status is not None:
            offer_id = uuid.uuid4()
            approved = at if spec.brand_approved else None
            terms = (
                {} if spec.fee is None else {"fee": {"amount": spec.fee, "currency": spec.currency}}
            )
            offers.append(
                {
                    "id": offer_id,
                    "room_id": spec.id,
                    "key": "main",
                    "seller_account_id": spec.host,
                    "buyer_account_id": spec.visitor,
                    "status": spec.offer_status,
                    "brand_approved_at": approved,
                    "terms": terms,
                    "open_questions": [],
                    "version": 1,
                    "fingerprint": "f" * 64,
                    "created_at": at,
                    "updated_at": at,
                }
            )
            stage = derive_stage(OfferRow(OfferStatus(spec.offer_status), approved))
            events.append(
                {
                    "id": uuid.uuid4(),
                    "room_id": spec.id,
                    "offer_id": offer_id,
                    "seq": 1,
                    "stage": stage.value,
                    "version": 1,
                    "actor": "offer_gen",
                    "created_at": at,
                }
            )
    for table, rows in (
        (Room.__table__, rooms),
        (Participant.__table__, panes),
        (Flag.__table__, flags),
        (ModelCall.__table__, calls),
        (Offer.__table__, offers),
        (OfferEvent.__table__, events),
    ):
        if rows:
            await _insert(engine, table, rows)
