"""Durable-memory resolvers: the owner's document and history, the operator's revert."""

from __future__ import annotations

import uuid

import strawberry

from dealroom.domain.errors import bad_input
from dealroom.schema.context import Info
from dealroom.schema.memory_types import (
    DurableMemory,
    MemoryChange,
    MemoryChangeConnection,
    MemoryChangeEdge,
)
from dealroom.services.memory import durable as durable_memory
from dealroom.services.rooms.service import parse_id


async def memory(info: Info, account_id: uuid.UUID) -> DurableMemory:
    return DurableMemory.from_view(await durable_memory.view(info.context.db, account_id))


async def history(
    info: Info, account_id: uuid.UUID, first: int, after: str | None
) -> MemoryChangeConnection:
    if not 0 < first <= info.context.app.settings.max_page_size:
        raise bad_input("first must be between 1 and 100.", "first")
    page = await durable_memory.history(info.context.db, account_id, first=first, after=after)
    edges = [MemoryChangeEdge.from_row(row) for row in page.rows]
    return MemoryChangeConnection(
        edges=edges,
        has_next_page=page.has_next,
        end_cursor=edges[-1].cursor if edges else None,
    )


async def revert(info: Info, change_id: strawberry.ID) -> MemoryChange:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await durable_memory.revert(
            db, identity, parse_id(change_id, "change"), ctx.app.clock.now()
        )
        return MemoryChange.from_row(row)
