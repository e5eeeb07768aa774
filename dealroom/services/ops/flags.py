"""Operator views: frustration flags and model spend per room (seed 000 "Frustration is
flagged to operators"; "Cost and latency, measured"). Operators only; no agent reads these."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal

from dealroom.domain.errors import not_found
from dealroom.persistence.db import Db
from dealroom.persistence.models import Flag, GuardVerdict, Room
from dealroom.persistence.ops import OpsRepository, VerdictRepository
from dealroom.persistence.runs import RunRepository
from dealroom.persistence.spend import SpendRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.ops.reads import require_operator


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    price_usd: Decimal


@dataclass(frozen=True, slots=True)
class RoomOps:
    room_id: uuid.UUID
    flags: list[Flag]
    usage: Usage
    failed_runs: int
    verdicts: list[GuardVerdict]


async def room_ops(db: Db, identity: Identity, room_id: uuid.UUID, *, flags: int) -> RoomOps:
    require_operator(identity)
    if await db.get(Room, room_id) is None:
        raise not_found("Room")
    rows = await OpsRepository(db).flags_page(room_id, limit=flags)
    totals = await SpendRepository(db).room_usage(room_id)
    failed = await RunRepository(db).failed_in_room(room_id)
    return RoomOps(
        room_id=room_id,
        flags=rows,
        usage=Usage(
            calls=totals.calls,
            input_tokens=totals.input_tokens,
            output_tokens=totals.output_tokens,
            cached_tokens=totals.cached_tokens,
            price_usd=totals.price_usd,
        ),
        failed_runs=failed,
        verdicts=await VerdictRepository(db).latest(room_id, flags),
    )
