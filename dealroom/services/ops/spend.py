"""Model spend summed from the ledger (``model_calls``) for operators: by agent, model or UTC day,
for a room, an account's rooms or a page of runs. A call whose model is missing from the price
table is counted as ``unpriced``, never summed as free."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from sqlalchemy import case, func, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import ModelCall, Room


class SpendBy(StrEnum):
    AGENT = "agent"
    MODEL = "model"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class Spend:
    key: str
    calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    price_usd: Decimal
    """Sum over priced calls only."""
    unpriced_calls: int
    """Calls whose model has no price: their cost is unknown, not zero."""


def spend_columns() -> list[Any]:
    return [
        func.count(ModelCall.id),
        func.coalesce(func.sum(ModelCall.input_tokens), 0),
        func.coalesce(func.sum(ModelCall.output_tokens), 0),
        func.coalesce(func.sum(ModelCall.cached_tokens), 0),
        func.coalesce(func.sum(ModelCall.price_usd), 0),
        func.coalesce(func.sum(case((ModelCall.price_usd.is_(None), 1), else_=0)), 0),
    ]


def spend_row(key: object, row: Sequence[Any]) -> Spend:
    return Spend(
        key=str(key),
        calls=int(row[0]),
        input_tokens=int(row[1]),
        output_tokens=int(row[2]),
        cached_tokens=int(row[3]),
        price_usd=Decimal(str(row[4])),
        unpriced_calls=int(row[5]),
    )


async def spend(
    db: Db,
    *,
    by: SpendBy,
    room_id: uuid.UUID | None = None,
    account_id: uuid.UUID | None = None,
    limit: int = 366,
) -> list[Spend]:
    """Spend grouped by agent, model or UTC day (newest day first), for one room or for all
    rooms an account hosts."""
    group: Any = {
        SpendBy.AGENT: ModelCall.agent,
        SpendBy.MODEL: ModelCall.model,
        SpendBy.DAY: func.date(ModelCall.created_at),
    }[by]
    statement = select(group, *spend_columns()).group_by(group)
    if room_id is not None:
        statement = statement.where(ModelCall.room_id == room_id)
    if account_id is not None:
        statement = statement.join(Room, Room.id == ModelCall.room_id).where(
            Room.host_account_id == account_id
        )
    statement = statement.order_by(group.desc() if by is SpendBy.DAY else group).limit(limit)
    return [spend_row(t[0], t[1:]) for t in (tuple(r) for r in (await db.execute(statement)).all())]


async def total_spend(db: Db, room_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Spend]:
    if not room_ids:
        return {}
    statement = (
        select(ModelCall.room_id, *spend_columns())
        .where(ModelCall.room_id.in_(room_ids))
        .group_by(ModelCall.room_id)
    )
    found: list[tuple[Any, ...]] = [tuple(r) for r in (await db.execute(statement)).all()]
    return {t[0]: spend_row(t[0], t[1:]) for t in found}
