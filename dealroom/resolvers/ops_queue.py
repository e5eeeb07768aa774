"""The operators' queue resolvers: parse input, call ``services/ops/queue.py``, map."""

from __future__ import annotations

import uuid

import strawberry

from dealroom.domain.ops_queue import ItemKind, Level
from dealroom.schema.context import Info
from dealroom.schema.ops_queue_types import (
    OpsQueueConnection,
    OpsQueueEdge,
    OpsQueueHistory,
    OpsQueueItem,
)
from dealroom.schema.paging import forward_page_info
from dealroom.services.ops import queue
from dealroom.services.ops import reads as ops_reads


async def queue_page(
    info: Info, first: int, after: str | None, level: Level | None, kind: ItemKind | None
) -> OpsQueueConnection:
    ctx = info.context
    identity = await ctx.identity()
    page = await queue.page(
        ctx.db,
        ctx.app.clock,
        identity,
        first=ops_reads.page_size(first, ctx.app.settings.max_page_size),
        after=after,
        level=Level(level) if level is not None else None,
        kind=ItemKind(kind) if kind is not None else None,
    )
    now = ctx.app.clock.now()
    edges = [
        OpsQueueEdge(cursor=queue.cursor_of(row), node=OpsQueueItem.from_row(row, now))
        for row in page.rows
    ]
    return OpsQueueConnection(
        edges=edges,
        nodes=[e.node for e in edges],
        page_info=forward_page_info([e.cursor for e in edges], page.has_next, after),
    )


async def acknowledge(info: Info, item_id: strawberry.ID) -> OpsQueueItem:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await queue.acknowledge(db, ctx.app.clock, identity, str(item_id))
    return OpsQueueItem.from_row(row, ctx.app.clock.now())


async def assign(info: Info, item_id: strawberry.ID, operator: str) -> OpsQueueItem:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await queue.assign(db, ctx.app.clock, identity, str(item_id), operator)
    return OpsQueueItem.from_row(row, ctx.app.clock.now())


async def resolve(info: Info, item_id: strawberry.ID, note: str) -> OpsQueueItem:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await queue.resolve(db, ctx.app.clock, identity, str(item_id), note)
    account = identity.account
    return OpsQueueItem.from_row(
        row, ctx.app.clock.now(), resolver=account.handle if account else None
    )


async def room_history(
    info: Info, room_id: uuid.UUID, first: int, after: str | None
) -> OpsQueueHistory:
    ctx = info.context
    identity = await ctx.identity()
    page = await queue.room_history(
        ctx.db,
        identity,
        room_id,
        first=ops_reads.page_size(first, ctx.app.settings.max_page_size),
        after=after,
    )
    people = [a for r in page.rows for a in (r.assigned_to, r.resolved_by) if a is not None]
    handles = await queue.handles(ctx.db, people)
    now = ctx.app.clock.now()
    end = page.rows[-1] if page.rows else None
    return OpsQueueHistory(
        nodes=[OpsQueueItem.from_history(r, now, handles) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=(
            ops_reads.cursor_of(end.resolved_at, end.id)
            if end is not None and end.resolved_at is not None
            else None
        ),
    )
