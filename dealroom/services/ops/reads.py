"""What operators read: rooms found by host, stage, flag and spend; a room's run history, goal
events, verdicts and spend; every agent's prompt; an account's spend.

Operators only: every entry point takes the identity and checks the flag (a key's ops scope
never makes an operator, rule K4). Spend is summed from ``model_calls``: a call whose model
is missing from the price table is counted as ``unpriced``, never silently left out."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, Select, and_, func, or_, select

from dealroom.agents import (
    acc_update,
    agreement,
    arvist,
    context_filter,
    distil,
    guard,
    offer_gen,
    persona,
)
from dealroom.domain.cursors import parse_room_cursor, room_cursor
from dealroom.domain.errors import bad_input, forbidden, not_found
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
from dealroom.services.accounts.identity import Identity
from dealroom.services.ops.spend import Spend, spend_columns, spend_row, total_spend

T = TypeVar("T")
AnySelect = Select[*tuple[Any, ...]]
S = TypeVar("S", bound=AnySelect)


def require_operator(identity: Identity) -> Account:
    if identity.account is None or not identity.account.is_operator:
        raise forbidden("Operators only.")
    return identity.account


# --- rooms ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoomFilter:
    host_handle: str | None = None
    stage: Stage | None = None
    flagged: bool | None = None
    min_spend_usd: Decimal | None = None


@dataclass(frozen=True, slots=True)
class OpsRoomRow:
    room: Room
    host_handle: str
    stage: str
    flag_count: int
    spend: Spend | None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    rows: list[T]
    has_next: bool


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


def _after(statement: S, at: Any, key: Any, cursor: str | None) -> S:
    """Keyset paging, newest first, on (timestamp, id)."""
    if cursor is None:
        return statement
    stamp, last_id = parse_room_cursor(cursor)
    return statement.where(or_(at < stamp, and_(at == stamp, key < last_id)))


def cursor_of(at: datetime, key: uuid.UUID) -> str:
    return room_cursor(at, key)


async def ops_rooms(
    db: Db, identity: Identity, room_filter: RoomFilter, *, first: int, after: str | None
) -> Page[OpsRoomRow]:
    require_operator(identity)
    stage = _stage_of_room().label("stage")
    flags = _flags_of_room().label("flags")
    statement = (
        select(Room, Account.handle, stage, flags)
        .join(Account, Account.id == Room.host_account_id)
        .order_by(Room.last_activity_at.desc(), Room.id.desc())
        .limit(first + 1)
    )
    statement = _after(statement, Room.last_activity_at, Room.id, after)
    if room_filter.host_handle:
        statement = statement.where(Account.handle == room_filter.host_handle.strip().lower())
    if room_filter.stage is not None:
        statement = statement.where(_stage_of_room() == room_filter.stage.value)
    if room_filter.flagged is not None:
        has = _flags_of_room() > 0
        statement = statement.where(has if room_filter.flagged else ~has)
    if room_filter.min_spend_usd is not None:
        total = (
            select(func.coalesce(func.sum(ModelCall.price_usd), 0))
            .where(ModelCall.room_id == Room.id)
            .scalar_subquery()
        )
        statement = statement.where(total >= room_filter.min_spend_usd)
    found: list[tuple[Any, ...]] = [tuple(r) for r in (await db.execute(statement)).all()]
    rows = found[:first]
    totals = await total_spend(db, [r[0].id for r in rows])
    return Page(
        rows=[
            OpsRoomRow(
                room=r[0],
                host_handle=r[1],
                stage=r[2],
                flag_count=int(r[3]),
                spend=totals.get(r[0].id),
            )
            for r in rows
        ],
        has_next=len(found) > first,
    )


async def ops_room(db: Db, identity: Identity, room_id: uuid.UUID) -> OpsRoomRow:
    require_operator(identity)
    found = (
        await db.execute(
            select(Room, Account.handle, _stage_of_room(), _flags_of_room())
            .join(Account, Account.id == Room.host_account_id)
            .where(Room.id == room_id)
        )
    ).one_or_none()
    if found is None:
        raise not_found("Room")
    row: tuple[Any, ...] = tuple(found)
    totals = await total_spend(db, [room_id])
    return OpsRoomRow(
        room=row[0],
        host_handle=row[1],
        stage=row[2],
        flag_count=int(row[3]),
        spend=totals.get(room_id),
    )


# --- a room's history -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunRow:
    run: AgentRun
    pane: str
    usage: Spend | None
    latency_ms: int
    """Model time spent by the run (sum over its calls)."""
    guard: GuardVerdict | None = None
    """A Guard run's own verdict row, once its audit has ended."""


async def runs(
    db: Db,
    identity: Identity,
    room_id: uuid.UUID,
    *,
    first: int,
    after: str | None,
    agent: str | None = None,
) -> Page[RunRow]:
    """Every agent run of the room, newest first, with its status, tokens, price, model
    latency and, for a Guard run, its verdict row."""
    require_operator(identity)
    statement = (
        select(AgentRun, Participant.key, GuardVerdict)
        .join(Participant, Participant.id == AgentRun.participant_id)
        .outerjoin(GuardVerdict, GuardVerdict.run_id == AgentRun.id)
        .where(AgentRun.room_id == room_id)
        .order_by(AgentRun.created_at.desc(), AgentRun.id.desc())
        .limit(first + 1)
    )
    if agent is not None:
        statement = statement.where(AgentRun.agent == agent)
    statement = _after(statement, AgentRun.created_at, AgentRun.id, after)
    found: list[tuple[Any, ...]] = [tuple(r) for r in (await db.execute(statement)).all()]
    rows = found[:first]
    ids = [r[0].id for r in rows]
    usage: dict[uuid.UUID, tuple[Spend, int]] = {}
    if ids:
        statement_usage = (
            select(
                ModelCall.run_id,
                *spend_columns(),
                func.coalesce(func.sum(ModelCall.latency_ms), 0),
            )
            .where(ModelCall.run_id.in_(ids))
            .group_by(ModelCall.run_id)
        )
        for found_row in (await db.execute(statement_usage)).all():
            row: tuple[Any, ...] = tuple(found_row)
            usage[row[0]] = (spend_row(row[0], row[1:7]), int(row[7]))
    return Page(
        rows=[
            RunRow(
                run=r[0],
                pane=r[1],
                usage=usage.get(r[0].id, (None, 0))[0],
                latency_ms=usage.get(r[0].id, (None, 0))[1],
                guard=r[2],
            )
            for r in rows
        ],
        has_next=len(found) > first,
    )


async def goal_events(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[GoalEvent]:
    require_operator(identity)
    statement = (
        select(GoalEvent)
        .where(GoalEvent.room_id == room_id)
        .order_by(GoalEvent.created_at.desc(), GoalEvent.id.desc())
        .limit(first + 1)
    )
    statement = _after(statement, GoalEvent.created_at, GoalEvent.id, after)
    found = list(await db.scalars(statement))
    return Page(rows=found[:first], has_next=len(found) > first)


async def flags(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[Flag]:
    require_operator(identity)
    statement = (
        select(Flag)
        .where(Flag.room_id == room_id)
        .order_by(Flag.created_at.desc(), Flag.id.desc())
        .limit(first + 1)
    )
    statement = _after(statement, Flag.created_at, Flag.id, after)
    found = list(await db.scalars(statement))
    return Page(rows=found[:first], has_next=len(found) > first)


async def takeovers(
    db: Db, identity: Identity, room_id: uuid.UUID
) -> list[tuple[str, PaneTakeover]]:
    require_operator(identity)
    rows = (
        await db.execute(
            select(Participant.key, PaneTakeover)
            .join(PaneTakeover, PaneTakeover.participant_id == Participant.id)
            .where(Participant.room_id == room_id)
            .order_by(Participant.key)
        )
    ).all()
    return [(str(t[0]), t[1]) for t in (tuple(r) for r in rows)]


def verdict_of(run: AgentRun, guard: GuardVerdict | None = None) -> str:
    """A finished run's outcome. A Guard run with a verdict row says what its audit found
    (``healthy``, ``repaired`` or ``unrepaired``); otherwise it is read from the run row:
    ``failed``, ``refused`` (the writer's changes were refused, see ``error``), ``no-op`` or
    ``applied``; ``pending`` while queued or running."""
    if guard is not None:
        return guard.verdict
    if run.status == "failed":
        return "failed"
    if run.status != "done":
        return "pending"
    if run.error and run.error.startswith("rejected:"):
        return "refused"
    return "no-op" if run.no_op else "applied"


def verdict_detail(run: AgentRun, guard: GuardVerdict | None = None) -> str | None:
    """What a verdict rests on: the Guard's findings (what was wrong, what was refused), or
    the run's error."""
    if guard is not None:
        return "; ".join(guard.findings) or None
    return run.error


# --- prompts --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    text: str
    sha256: str


PROMPTS = {
    "persona": persona.SYSTEM,
    "distil": distil.SYSTEM,
    "context_filter": context_filter.PROMPT,
    "offer_gen": offer_gen.SYSTEM,
    "agreement": agreement.SYSTEM,
    "guard": guard.SYSTEM,
    "arvist": arvist.SYSTEM,
    "acc_update": acc_update.PROMPT,
}
"""Seed 000 "Prompts are the code, not a setting": read-only, the text that runs (each
agent's ``system`` text, vocabularies included). The login gate speaks with the persona's
prompt and a replay calls no model, so neither has an entry of its own."""


def agent_prompts(identity: Identity) -> list[Prompt]:
    require_operator(identity)
    return [
        Prompt(name, text, hashlib.sha256(text.encode()).hexdigest())
        for name, text in sorted(PROMPTS.items())
    ]


# --- accounts and the audit trail -----------------------------------------------------------


async def ops_account(db: Db, identity: Identity, handle: str) -> Account:
    require_operator(identity)
    account = await db.scalar(select(Account).where(Account.handle == handle.strip().lower()))
    if account is None:
        raise not_found("Account")
    return account


async def ops_actions(
    db: Db,
    identity: Identity,
    *,
    room_id: uuid.UUID | None,
    first: int,
    after: str | None,
) -> Page[OpsAction]:
    require_operator(identity)
    statement = select(OpsAction).order_by(OpsAction.created_at.desc(), OpsAction.id.desc())
    if room_id is not None:
        statement = statement.where(OpsAction.room_id == room_id)
    statement = _after(statement.limit(first + 1), OpsAction.created_at, OpsAction.id, after)
    found = list(await db.scalars(statement))
    return Page(rows=found[:first], has_next=len(found) > first)


def page_size(first: int, cap: int) -> int:
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    return first
