"""Operator views: frustration flags and model spend per room (seed 000 "Frustration is
flagged to operators"; "Cost and latency, measured"). Operators only; no agent reads these."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import func, select

from dealroom.domain.errors import forbidden, not_found
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Flag, GuardVerdict, ModelCall, Room
from dealroom.services.accounts.identity import Identity


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
    if identity.account is None or not identity.account.is_operator:
        raise forbidden("Operators only.")
    if await db.get(Room, room_id) is None:
        raise not_found("Room")
    rows = list(
        await db.scalars(
            select(Flag)
            .where(Flag.room_id == room_id)
            .order_by(Flag.created_at.desc(), Flag.id.desc())
            .limit(flags)
        )
    )
    totals: tuple[int, int, int, int, Decimal | int] = tuple(
        (
            await db.execute(
                select(
                    func.count(ModelCall.id),
                    func.coalesce(func.sum(ModelCall.input_tokens), 0),
                    func.coalesce(func.sum(ModelCall.output_tokens), 0),
                    func.coalesce(func.sum(ModelCall.cached_tokens), 0),
                    func.coalesce(func.sum(ModelCall.price_usd), 0),
                ).where(ModelCall.room_id == room_id)
            )
        ).one()
    )
    failed = await db.scalar(
        select(func.count(AgentRun.id)).where(
            AgentRun.room_id == room_id, AgentRun.status == "failed"
        )
    )
    return RoomOps(
        room_id=room_id,
        flags=rows,
        usage=Usage(
            calls=int(totals[0]),
            input_tokens=int(totals[1]),
            output_tokens=int(totals[2]),
            cached_tokens=int(totals[3]),
            price_usd=Decimal(str(totals[4])),
        ),
        failed_runs=int(failed or 0),
        verdicts=list(
            await db.scalars(
                select(GuardVerdict)
                .where(GuardVerdict.room_id == room_id)
                .order_by(GuardVerdict.created_at.desc(), GuardVerdict.id.desc())
                .limit(flags)
            )
        ),
    )
