"""Operator resolvers behind the fields of OpsRoom and OpsAccount: check the page size, read
through ``services/ops`` (which checks the operator flag again), map."""

from __future__ import annotations

import uuid
from typing import Any

import strawberry

from dealroom.domain.cursors import room_cursor
from dealroom.persistence.models import AgentRun
from dealroom.schema.context import Info
from dealroom.schema.link_types import OpsLink
from dealroom.schema.ops_room_view import (
    OpsDispatch,
    OpsDispatchConnection,
    OpsOffer,
    OpsRoomRead,
    OpsRoomReadConnection,
    RoomMemoryChangeConnection,
    memory_history_connection,
)
from dealroom.schema.ops_types import (
    Flag,
    OpsFlagConnection,
    OpsGoalEvent,
    OpsGoalEventConnection,
    OpsRun,
    OpsRunConnection,
    OpsVerdict,
    OpsVerdictConnection,
    PaneTakeover,
    Spend,
    SpendBy,
)
from dealroom.services.ops import reads as ops_reads
from dealroom.services.ops import room_memory, room_view
from dealroom.services.ops import spend as spend_reads


def _cap(info: Info, first: int) -> int:
    return ops_reads.page_size(first, info.context.app.settings.max_page_size)


async def _runs(
    info: Info, room_id: uuid.UUID, first: int, after: str | None, agent: str | None
) -> tuple[ops_reads.Page[ops_reads.RunRow], AgentRun | None]:
    identity = await info.context.identity()
    page = await ops_reads.runs(
        info.context.db, identity, room_id, first=_cap(info, first), after=after, agent=agent
    )
    return page, page.rows[-1].run if page.rows else None


async def runs(
    info: Info, room_id: uuid.UUID, first: int, after: str | None, agent: str | None
) -> OpsRunConnection:
    page, end = await _runs(info, room_id, first, after, agent)
    return OpsRunConnection(
        nodes=[OpsRun.from_row(r, ops_reads.verdict_of(r.run, r.guard)) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


async def verdicts(
    info: Info, room_id: uuid.UUID, first: int, after: str | None, agent: str | None
) -> OpsVerdictConnection:
    page, end = await _runs(info, room_id, first, after, agent)
    return OpsVerdictConnection(
        nodes=[
            OpsVerdict(
                run_id=strawberry.ID(str(r.run.id)),
                agent=r.run.agent,
                pane=r.pane,
                verdict=ops_reads.verdict_of(r.run, r.guard),
                detail=ops_reads.verdict_detail(r.run, r.guard),
                at=r.run.finished_at or r.run.created_at,
            )
            for r in page.rows
        ],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


async def goal_events(
    info: Info, room_id: uuid.UUID, first: int, after: str | None
) -> OpsGoalEventConnection:
    identity = await info.context.identity()
    page = await ops_reads.goal_events(
        info.context.db, identity, room_id, first=_cap(info, first), after=after
    )
    end = page.rows[-1] if page.rows else None
    return OpsGoalEventConnection(
        nodes=[OpsGoalEvent.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


async def flags(info: Info, room_id: uuid.UUID, first: int, after: str | None) -> OpsFlagConnection:
    identity = await info.context.identity()
    page = await ops_reads.flags(
        info.context.db, identity, room_id, first=_cap(info, first), after=after
    )
    end = page.rows[-1] if page.rows else None
    return OpsFlagConnection(
        nodes=[
            Flag(
                id=strawberry.ID(str(f.id)),
                level=f.level,
                evidence=f.evidence,
                created_at=f.created_at,
            )
            for f in page.rows
        ],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


async def spend(
    info: Info,
    by: SpendBy,
    *,
    room_id: uuid.UUID | None = None,
    account_id: uuid.UUID | None = None,
) -> list[Spend]:
    """A room's spend, or that of the rooms an account hosts."""
    identity = await info.context.identity()
    ops_reads.require_operator(identity)
    rows = await spend_reads.spend(
        info.context.db,
        by=spend_reads.SpendBy(by.value),
        room_id=room_id,
        account_id=account_id,
    )
    return [Spend.from_spend(r, r.key) for r in rows]


async def takeovers(info: Info, room_id: uuid.UUID) -> list[PaneTakeover]:
    identity = await info.context.identity()
    rows = await ops_reads.takeovers(info.context.db, identity, room_id)
    return [PaneTakeover.from_row(seat, row) for seat, row in rows]


async def pane_keys(info: Info, room_id: uuid.UUID) -> list[str]:
    identity = await info.context.identity()
    return await room_view.pane_keys(info.context.db, identity, room_id)


async def memory(info: Info, room_id: uuid.UUID) -> tuple[dict[str, Any], int]:
    """The whole room memory and its version."""
    identity = await info.context.identity()
    return await room_view.memory(info.context.db, identity, room_id)


async def memory_history(
    info: Info, room_id: uuid.UUID, first: int, after: str | None
) -> RoomMemoryChangeConnection:
    identity = await info.context.identity()
    ops_reads.require_operator(identity)
    page = await room_memory.history(
        info.context.db, identity, room_id, first=_cap(info, first), after=after
    )
    return memory_history_connection(page)


async def dispatches(
    info: Info, room_id: uuid.UUID, first: int, after: str | None
) -> OpsDispatchConnection:
    identity = await info.context.identity()
    page, seats = await room_view.dispatches(
        info.context.db, identity, room_id, first=_cap(info, first), after=after
    )
    end = page.rows[-1] if page.rows else None
    return OpsDispatchConnection(
        nodes=[OpsDispatch.from_row(d, seats) for d in page.rows],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


async def offers(info: Info, room_id: uuid.UUID, first: int) -> list[OpsOffer]:
    identity = await info.context.identity()
    found = await room_view.offers(info.context.db, identity, room_id, first=_cap(info, first))
    return [OpsOffer.from_row(offer, payments) for offer, payments in found]


async def links(info: Info, room_id: uuid.UUID, first: int) -> list[OpsLink]:
    identity = await info.context.identity()
    found = await room_view.links(info.context.db, identity, room_id, first=_cap(info, first))
    return [OpsLink.from_row(row, seat) for row, seat in found]


async def reads(
    info: Info, room_id: uuid.UUID, first: int, after: str | None
) -> OpsRoomReadConnection:
    identity = await info.context.identity()
    page = await room_view.reads(
        info.context.db, identity, room_id, first=_cap(info, first), after=after
    )
    end = page.rows[-1] if page.rows else None
    return OpsRoomReadConnection(
        nodes=[OpsRoomRead.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.created_at, end.id) if end else None,
    )


async def account_rooms(
    info: Info, handle: str, first: int, after: str | None
) -> ops_reads.Page[ops_reads.OpsRoomRow]:
    """The rooms an account hosts (OpsAccount.rooms maps them: OpsRoom is built above here)."""
    identity = await info.context.identity()
    return await ops_reads.ops_rooms(
        info.context.db,
        identity,
        ops_reads.RoomFilter(host_handle=handle),
        first=_cap(info, first),
        after=after,
    )
