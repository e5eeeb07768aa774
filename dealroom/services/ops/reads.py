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
from typing import Generic, TypeVar

from dealroom.agents import (
    acc_update,
    agreement,
    arvist,
    context_filter,
    distil,
    guard,
    link_reader,
    offer_gen,
    persona,
)
from dealroom.domain.cursors import parse_room_cursor, room_cursor
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found
from dealroom.domain.offer_stage import Stage
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AgentRun,
    Flag,
    GoalEvent,
    GuardVerdict,
    OpsAction,
    PaneTakeover,
    Room,
)
from dealroom.persistence.ops import OpsRepository, RunFound
from dealroom.persistence.paging import After
from dealroom.persistence.repositories import AccountRepository
from dealroom.persistence.spend import RunSpend, SpendRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.ops.spend import Spend, total_spend

T = TypeVar("T")


def require_operator(identity: Identity) -> Account:
    if identity.account is None or not identity.account.is_operator:
        raise DomainError(ErrorCode.NOT_FOUND, "Not found.")
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


def _after(cursor: str | None) -> After | None:
    return None if cursor is None else parse_room_cursor(cursor)


def cursor_of(at: datetime, key: uuid.UUID) -> str:
    return room_cursor(at, key)


async def ops_rooms(
    db: Db, identity: Identity, room_filter: RoomFilter, *, first: int, after: str | None
) -> Page[OpsRoomRow]:
    require_operator(identity)
    found = await OpsRepository(db).rooms_page(
        limit=first + 1,
        after_row=_after(after),
        host_handle=room_filter.host_handle.strip().lower() if room_filter.host_handle else None,
        stage=room_filter.stage,
        flagged=room_filter.flagged,
        min_spend_usd=room_filter.min_spend_usd,
    )
    rows = found[:first]
    totals = await total_spend(db, [r.room.id for r in rows])
    return Page(
        rows=[
            OpsRoomRow(
                room=r.room,
                host_handle=r.host_handle,
                stage=r.stage,
                flag_count=r.flag_count,
                spend=totals.get(r.room.id),
            )
            for r in rows
        ],
        has_next=len(found) > first,
    )


async def ops_room(db: Db, identity: Identity, room_id: uuid.UUID) -> OpsRoomRow:
    require_operator(identity)
    row = await OpsRepository(db).room(room_id)
    if row is None:
        raise not_found("Room")
    totals = await total_spend(db, [room_id])
    return OpsRoomRow(
        room=row.room,
        host_handle=row.host_handle,
        stage=row.stage,
        flag_count=row.flag_count,
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
    found = await OpsRepository(db).runs_page(
        room_id, limit=first + 1, after_row=_after(after), agent=agent
    )
    rows = found[:first]
    usage = await SpendRepository(db).for_runs([r.run.id for r in rows])
    return Page(rows=[_run_row(r, usage.get(r.run.id)) for r in rows], has_next=len(found) > first)


def _run_row(found: RunFound, spent: RunSpend | None) -> RunRow:
    return RunRow(
        run=found.run,
        pane=found.pane,
        usage=spent.spend if spent is not None else None,
        latency_ms=spent.latency_ms if spent is not None else 0,
        guard=found.guard,
    )


async def goal_events(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[GoalEvent]:
    require_operator(identity)
    found = await OpsRepository(db).goal_events_page(
        room_id, limit=first + 1, after_row=_after(after)
    )
    return Page(rows=found[:first], has_next=len(found) > first)


async def flags(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[Flag]:
    require_operator(identity)
    found = await OpsRepository(db).flags_page(room_id, limit=first + 1, after_row=_after(after))
    return Page(rows=found[:first], has_next=len(found) > first)


async def takeovers(
    db: Db, identity: Identity, room_id: uuid.UUID
) -> list[tuple[str, PaneTakeover]]:
    require_operator(identity)
    return await OpsRepository(db).takeovers(room_id)


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
    link_reader.AGENT: link_reader.SYSTEM,
}
"""Seed 000 "Prompts are the code, not a setting": read-only, the text that runs (each
agent's ``system`` text, vocabularies included). The login gate speaks with the persona's
prompt and a replay calls no model, so neither has an entry of its own; the link reader is no
run of its own (a call inside a link's perceive job) but its text runs all the same."""


def agent_prompts(identity: Identity) -> list[Prompt]:
    require_operator(identity)
    return [
        Prompt(name, text, hashlib.sha256(text.encode()).hexdigest())
        for name, text in sorted(PROMPTS.items())
    ]


# --- accounts and the audit trail -----------------------------------------------------------


async def ops_account(db: Db, identity: Identity, handle: str) -> Account:
    require_operator(identity)
    account = await AccountRepository(db).by_handle(handle.strip().lower())
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
    found = await OpsRepository(db).actions_page(
        room_id=room_id, limit=first + 1, after_row=_after(after)
    )
    return Page(rows=found[:first], has_next=len(found) > first)


def page_size(first: int, cap: int) -> int:
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    return first
