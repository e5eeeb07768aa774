"""Model spend summed from the ledger (``model_calls``): by agent, model or UTC day, per room,
per run, or for an account's rooms. A call whose model is missing from the price table is
counted as ``unpriced``, never summed as free. Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any, NamedTuple

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


class RunSpend(NamedTuple):
    """A run's spend and the model time it took (the sum over its calls)."""

    spend: Spend
    latency_ms: int


class RoomUsage(NamedTuple):
    """A room's model calls summed (priced or not)."""

    calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    price_usd: Decimal


def _spend_columns() -> list[Any]:
    return [
        func.count(ModelCall.id),
        func.coalesce(func.sum(ModelCall.input_tokens), 0),
        func.coalesce(func.sum(ModelCall.output_tokens), 0),
        func.coalesce(func.sum(ModelCall.cached_tokens), 0),
        func.coalesce(func.sum(ModelCall.price_usd), 0),
        func.coalesce(func.sum(case((ModelCall.price_usd.is_(None), 1), else_=0)), 0),
    ]


def _spend(key: object, row: Sequence[Any]) -> Spend:
    return Spend(
        key=str(key),
        calls=int(row[0]),
        input_tokens=int(row[1]),
        output_tokens=int(row[2]),
        cached_tokens=int(row[3]),
        price_usd=Decimal(str(row[4])),
        unpriced_calls=int(row[5]),
    )


class SpendRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def grouped(
        self,
        by: SpendBy,
        *,
        room_id: uuid.UUID | None,
        account_id: uuid.UUID | None,
        limit: int,
    ) -> list[Spend]:
        """Spend grouped by agent, model or UTC day (newest day first), for one room or for
        all rooms an account hosts."""
        group: Any = {
            SpendBy.AGENT: ModelCall.agent,
            SpendBy.MODEL: ModelCall.model,
            SpendBy.DAY: func.date(ModelCall.created_at),
        }[by]
        statement = select(group, *_spend_columns()).group_by(group)
        if room_id is not None:
            statement = statement.where(ModelCall.room_id == room_id)
        if account_id is not None:
            statement = statement.join(Room, Room.id == ModelCall.room_id).where(
                Room.host_account_id == account_id
            )
        statement = statement.order_by(group.desc() if by is SpendBy.DAY else group).limit(limit)
        found = (await self.db.execute(statement)).all()
        return [_spend(t[0], t[1:]) for t in (tuple(r) for r in found)]

    async def for_rooms(self, room_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Spend]:
        """Each room's spend, by room id (a room without calls is missing)."""
        if not room_ids:
            return {}
        statement = (
            select(ModelCall.room_id, *_spend_columns())
            .where(ModelCall.room_id.in_(room_ids))
            .group_by(ModelCall.room_id)
        )
        found: list[tuple[Any, ...]] = [tuple(r) for r in (await self.db.execute(statement)).all()]
        return {t[0]: _spend(t[0], t[1:]) for t in found}

    async def for_runs(self, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, RunSpend]:
        """Each run's spend and model time, by run id (a run without calls is missing)."""
        if not run_ids:
            return {}
        statement = (
            select(
                ModelCall.run_id,
                *_spend_columns(),
                func.coalesce(func.sum(ModelCall.latency_ms), 0),
            )
            .where(ModelCall.run_id.in_(run_ids))
            .group_by(ModelCall.run_id)
        )
        spent: dict[uuid.UUID, RunSpend] = {}
        for found in (await self.db.execute(statement)).all():
            row: tuple[Any, ...] = tuple(found)
            spent[row[0]] = RunSpend(_spend(row[0], row[1:7]), int(row[7]))
        return spent

    async def room_usage(self, room_id: uuid.UUID) -> RoomUsage:
        totals: tuple[int, int, int, int, Decimal | int] = tuple(
            (
                await self.db.execute(
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
        return RoomUsage(
            calls=int(totals[0]),
            input_tokens=int(totals[1]),
            output_tokens=int(totals[2]),
            cached_tokens=int(totals[3]),
            price_usd=Decimal(str(totals[4])),
        )
