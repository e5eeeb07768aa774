"""What operators read and undo: rooms found by host, stage, flag and spend; a room's runs,
goal events, flags, Guard verdicts, taken-over panes and the audit trail of operator actions.
Pages are newest first (``paging``) and hold up to ``limit`` rows: a caller asking for one row
more than it shows learns whether a next page exists. Repositories flush, never commit."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import ColumnElement, delete, func, select

from dealroom.domain.offer_stage import Stage
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AgentRun,
    Flag,
    GoalEvent,
    GuardVerdict,
    ModelCall,
    OfferEvent,
    OpsAction,
    PaneTakeover,
    Participant,
    Room,
)
from dealroom.persistence.paging import After, after

_Logged = TypeVar("_Logged", GoalEvent, Flag)


class OpsRoomFound(NamedTuple):
    room: Room
    host_handle: str
    stage: str
    """The room's live stage (``Stage``): its latest stage change, or NO_WRITTEN_OFFER."""
    flag_count: int


class RunFound(NamedTuple):
    run: AgentRun
    pane: str
    """The key of the run's pane."""
    guard: GuardVerdict | None
    """A Guard run's own verdict row, once its audit has ended."""


def _stage_of_room() -> ColumnElement[str]:
    """The room's live stage: its latest stage change (each change is recorded), or
    NO_WRITTEN_OFFER."""
    latest = (
        select(OfferEvent.stage)
        .where(OfferEvent.room_id == Room.id)
        .order_by(OfferEvent.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    return func.coalesce(latest, Stage.NO_WRITTEN_OFFER.value)


def _flags_of_room() -> ColumnElement[int]:
    return select(func.count(Flag.id)).where(Flag.room_id == Room.id).scalar_subquery()


def _room_found(row: Any) -> OpsRoomFound:
    found: tuple[Any, ...] = tuple(row)
    return OpsRoomFound(found[0], found[1], found[2], int(found[3]))


class OpsRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def rooms_page(
        self,
        *,
        limit: int,
        after_row: After | None,
        host_handle: str | None,
        stage: Stage | None,
        flagged: bool | None,
        min_spend_usd: Decimal | None,
    ) -> list[OpsRoomFound]:
        """Rooms by last activity, each with its host's handle, stage and flag count, narrowed
        by whichever filters are given."""
        stage_column = _stage_of_room().label("stage")
        flags = _flags_of_room().label("flags")
        statement = (
            select(Room, Account.handle, stage_column, flags)
            .join(Account, Account.id == Room.host_account_id)
            .order_by(Room.last_activity_at.desc(), Room.id.desc())
            .limit(limit)
        )
        statement = after(statement, Room.last_activity_at, Room.id, after_row)
        if host_handle is not None:
            statement = statement.where(Account.handle == host_handle)
        if stage is not None:
            statement = statement.where(_stage_of_room() == stage.value)
        if flagged is not None:
            has = _flags_of_room() > 0
            statement = statement.where(has if flagged else ~has)
        if min_spend_usd is not None:
            total = (
                select(func.coalesce(func.sum(ModelCall.price_usd), 0))
                .where(ModelCall.room_id == Room.id)
                .scalar_subquery()
            )
            statement = statement.where(total >= min_spend_usd)
        return [_room_found(row) for row in (await self.db.execute(statement)).all()]

    async def room(self, room_id: uuid.UUID) -> OpsRoomFound | None:
        """One room as :meth:`rooms_page` reads it."""
        found = (
            await self.db.execute(
                select(Room, Account.handle, _stage_of_room(), _flags_of_room())
                .join(Account, Account.id == Room.host_account_id)
                .where(Room.id == room_id)
            )
        ).one_or_none()
        return None if found is None else _room_found(found)

    async def runs_page(
        self, room_id: uuid.UUID, *, limit: int, after_row: After | None, agent: str | None
    ) -> list[RunFound]:
        """The room's agent runs (of one agent, if given), newest first, each with its pane's
        key and, for a Guard run, its verdict row."""
        statement = (
            select(AgentRun, Participant.key, GuardVerdict)
            .join(Participant, Participant.id == AgentRun.participant_id)
            .outerjoin(GuardVerdict, GuardVerdict.run_id == AgentRun.id)
            .where(AgentRun.room_id == room_id)
            .order_by(AgentRun.created_at.desc(), AgentRun.id.desc())
            .limit(limit)
        )
        if agent is not None:
            statement = statement.where(AgentRun.agent == agent)
        statement = after(statement, AgentRun.created_at, AgentRun.id, after_row)
        found = (await self.db.execute(statement)).all()
        return [RunFound(*tuple(row)) for row in found]

    async def goal_events_page(
        self, room_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[GoalEvent]:
        return await self._newest_first(GoalEvent, room_id, limit=limit, after_row=after_row)

    async def flags_page(
        self, room_id: uuid.UUID, *, limit: int, after_row: After | None = None
    ) -> list[Flag]:
        return await self._newest_first(Flag, room_id, limit=limit, after_row=after_row)

    async def _newest_first(
        self, model: type[_Logged], room_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[_Logged]:
        """A page of a room's log rows, newest first, after a keyset cursor."""
        statement = (
            select(model)
            .where(model.room_id == room_id)
            .order_by(model.created_at.desc(), model.id.desc())
            .limit(limit)
        )
        statement = after(statement, model.created_at, model.id, after_row)
        return list(await self.db.scalars(statement))

    async def takeovers(self, room_id: uuid.UUID) -> list[tuple[str, PaneTakeover]]:
        """The room's taken-over panes, by pane key."""
        rows = (
            await self.db.execute(
                select(Participant.key, PaneTakeover)
                .join(PaneTakeover, PaneTakeover.participant_id == Participant.id)
                .where(Participant.room_id == room_id)
                .order_by(Participant.key)
            )
        ).all()
        return [(str(t[0]), t[1]) for t in (tuple(r) for r in rows)]

    async def release_takeover(self, participant_id: uuid.UUID) -> bool:
        """Give the pane back to its agent; True when it was taken over."""
        result = await self.db.execute(
            delete(PaneTakeover).where(PaneTakeover.participant_id == participant_id)
        )
        return bool(getattr(result, "rowcount", 0))

    async def actions_page(
        self, *, room_id: uuid.UUID | None, limit: int, after_row: After | None
    ) -> list[OpsAction]:
        """The audit trail of operator actions (of one room, if given), newest first."""
        statement = select(OpsAction).order_by(OpsAction.created_at.desc(), OpsAction.id.desc())
        if room_id is not None:
            statement = statement.where(OpsAction.room_id == room_id)
        statement = after(statement.limit(limit), OpsAction.created_at, OpsAction.id, after_row)
        return list(await self.db.scalars(statement))


class VerdictRepository:
    """The Guard's verdict rows (``guard_verdicts``): operators read them, and each audit
    starts where the previous one ended."""

    def __init__(self, db: Db) -> None:
        self.db = db

    async def latest(self, room_id: uuid.UUID, limit: int) -> list[GuardVerdict]:
        """The room's newest ``limit`` Guard verdicts, newest first."""
        return list(
            await self.db.scalars(
                select(GuardVerdict)
                .where(GuardVerdict.room_id == room_id)
                .order_by(GuardVerdict.created_at.desc(), GuardVerdict.id.desc())
                .limit(limit)
            )
        )

    async def last_at(self, room_id: uuid.UUID) -> datetime | None:
        """When the room's latest audit ended (None before its first)."""
        return await self.db.scalar(
            select(GuardVerdict.created_at)
            .where(GuardVerdict.room_id == room_id)
            .order_by(GuardVerdict.created_at.desc())
            .limit(1)
        )
