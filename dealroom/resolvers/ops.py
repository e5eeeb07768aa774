"""Operator resolvers: parse input, check the operator flag (in the service), map."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import cast

import strawberry
from strawberry.scalars import JSON

from dealroom.domain import memory as memdoc
from dealroom.domain.errors import bad_input
from dealroom.domain.seats import Seat, side_of
from dealroom.schema.context import Info
from dealroom.schema.ops_room_view import (
    MemoryOp,
    RoomMemoryChange,
    RoomMemoryChangeConnection,
    RoomMemoryWrite,
    memory_history_connection,
)
from dealroom.schema.ops_rooms import (
    OpsAccount,
    OpsRoom,
    OpsRoomConnection,
    OpsRoomFilter,
    room_connection,
)
from dealroom.schema.ops_types import (
    AgentPrompt,
    GoalOverride,
    ModelPickInput,
    OpsActionConnection,
    OpsActionRecord,
    OpsGoalEvent,
    PaneTakeover,
)
from dealroom.schema.pane_types import Message
from dealroom.services.live.events import MessageView
from dealroom.services.live.publish import publish_after_commit
from dealroom.services.ops import actions as ops_actions
from dealroom.services.ops import metrics, room_memory, room_view
from dealroom.services.ops import reads as ops_reads
from dealroom.services.rooms.service import parse_id


def _filter(raw: OpsRoomFilter | None) -> ops_reads.RoomFilter:
    if raw is None:
        return ops_reads.RoomFilter()
    minimum = None
    if raw.min_spend_usd is not None:
        try:
            minimum = Decimal(raw.min_spend_usd)
        except InvalidOperation:
            raise bad_input("minSpendUsd must be a decimal number.", "minSpendUsd") from None
    return ops_reads.RoomFilter(
        host_handle=raw.host_handle,
        stage=raw.stage,
        flagged=raw.flagged,
        min_spend_usd=minimum,
    )


async def ops_rooms(
    info: Info, room_filter: OpsRoomFilter | None, first: int, after: str | None
) -> OpsRoomConnection:
    ctx = info.context
    identity = await ctx.identity()
    page = await ops_reads.ops_rooms(
        ctx.db,
        identity,
        _filter(room_filter),
        first=ops_reads.page_size(first, ctx.app.settings.max_page_size),
        after=after,
    )
    return room_connection(page)


def _parts_read(info: Info) -> list[str]:
    """What this read of a room selects, as the read record names it: each field of the room
    (a transcript with its pane's seat)."""
    parts = ["room"]
    for selected in info.selected_fields:
        for sub in selected.selections:
            name = getattr(sub, "name", None)
            if name is None or name in parts:
                continue
            seat = getattr(sub, "arguments", {}).get("seat")
            parts.append(f"{name}:{str(seat).lower()}" if seat is not None else name)
    return parts[:40]


async def ops_room(info: Info, room_id: strawberry.ID) -> OpsRoom:
    ctx = info.context
    identity = await ctx.identity()
    parsed = parse_id(room_id, "room")
    row = await ops_reads.ops_room(ctx.db, identity, parsed)
    # Operators are trusted, not invisible: the read is recorded before anything is shown.
    async with ctx.transaction() as db:
        await room_view.record_read(db, ctx.app.clock, identity, parsed, _parts_read(info))
    return OpsRoom.from_row(row)


async def room_memory_history(
    info: Info, room_id: strawberry.ID, first: int, after: str | None
) -> RoomMemoryChangeConnection:
    ctx = info.context
    identity = await ctx.identity()
    parsed = parse_id(room_id, "room")
    page = await room_memory.history(
        ctx.db,
        identity,
        parsed,
        first=ops_reads.page_size(first, ctx.app.settings.max_page_size),
        after=after,
    )
    if identity.account is not None and identity.account.is_operator:
        async with ctx.transaction() as db:
            await room_view.record_read(db, ctx.app.clock, identity, parsed, ["memoryHistory"])
    return memory_history_connection(page)


async def edit_room_memory(
    info: Info,
    room_id: strawberry.ID,
    op: MemoryOp,
    path: str,
    value: str | None,
    reason: str,
) -> RoomMemoryWrite:
    ctx = info.context
    identity = await ctx.identity()
    settings = ctx.app.settings
    async with ctx.transaction() as db:
        written = await room_memory.edit(
            db,
            ctx.app.clock,
            identity,
            parse_id(room_id, "room"),
            memdoc.Change(memdoc.Op(MemoryOp(op).value), path.strip(), value),
            reason=reason,
            lease_seconds=settings.memory_lease_seconds,
            band_percent=settings.firewall_band_percent,
        )
    return _written(written)


async def revert_room_memory_change(
    info: Info, change_id: strawberry.ID, reason: str
) -> RoomMemoryWrite:
    ctx = info.context
    identity = await ctx.identity()
    settings = ctx.app.settings
    async with ctx.transaction() as db:
        written = await room_memory.revert(
            db,
            ctx.app.clock,
            identity,
            parse_id(change_id, "change"),
            reason=reason,
            lease_seconds=settings.memory_lease_seconds,
            band_percent=settings.firewall_band_percent,
        )
    return _written(written)


def _written(written: room_memory.Written) -> RoomMemoryWrite:
    return RoomMemoryWrite(
        memory=cast(JSON, written.memory),  # an opaque NewType
        version=written.version,
        changes=[RoomMemoryChange.from_row(c) for c in written.changes],
    )


async def agent_prompts(info: Info) -> list[AgentPrompt]:
    identity = await info.context.identity()
    return [
        AgentPrompt(name=p.name, text=p.text, sha256=p.sha256)
        for p in ops_reads.agent_prompts(identity)
    ]


async def ops_account(info: Info, handle: str) -> OpsAccount:
    identity = await info.context.identity()
    account = await ops_reads.ops_account(info.context.db, identity, handle)
    return OpsAccount(
        id=strawberry.ID(str(account.id)),
        handle=account.handle,
        display_name=account.display_name,
        is_operator=account.is_operator,
        _id=account.id,
    )


async def ops_actions_page(
    info: Info, room_id: strawberry.ID | None, first: int, after: str | None
) -> OpsActionConnection:
    ctx = info.context
    identity = await ctx.identity()
    page = await ops_reads.ops_actions(
        ctx.db,
        identity,
        room_id=parse_id(room_id, "room") if room_id is not None else None,
        first=ops_reads.page_size(first, ctx.app.settings.max_page_size),
        after=after,
    )
    end = page.rows[-1] if page.rows else None
    return OpsActionConnection(
        nodes=[OpsActionRecord.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
    )


# --- actions --------------------------------------------------------------------------------


async def set_room_models(
    info: Info, room_id: strawberry.ID, picks: list[ModelPickInput]
) -> OpsRoom:
    ctx = info.context
    identity = await ctx.identity()
    parsed = parse_id(room_id, "room")
    async with ctx.transaction() as db:
        await ops_actions.set_room_models(
            db, ctx.app.clock, identity, parsed, [(p.agent, p.model) for p in picks]
        )
    return await ops_room(info, room_id)


async def override_goal(
    info: Info, room_id: strawberry.ID, key: str, status: str, reason: str
) -> GoalOverride:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        done = await ops_actions.override_goal(
            db,
            ctx.app.clock,
            identity,
            parse_id(room_id, "room"),
            key=key,
            status=status,
            reason=reason,
        )
        publish_after_commit(db, ctx.app.broker, done.effects.published)
        if done.effects.runs:
            db.after_commit(ctx.app.runner.announce)
    return GoalOverride(
        goal_event=OpsGoalEvent.from_row(done.event) if done.event else None,
        queued_runs=[r.agent for r in done.effects.runs],
        closed_offer=bool(done.effects.published),
    )


async def take_over_pane(info: Info, room_id: strawberry.ID, key: str) -> PaneTakeover:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await ops_actions.take_over_pane(
            db, ctx.app.clock, identity, parse_id(room_id, "room"), key
        )
    return PaneTakeover.from_row(key, row)


async def release_pane(info: Info, room_id: strawberry.ID, key: str) -> bool:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        released = await ops_actions.release_pane(
            db, ctx.app.clock, identity, parse_id(room_id, "room"), key
        )
        if released.publish is not None:
            publish_after_commit(db, ctx.app.broker, [released.publish])
    return released.was_taken


async def operator_post(
    info: Info, room_id: strawberry.ID, key: str, body: str, client_message_id: str
) -> Message:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        message, publish = await ops_actions.operator_post(
            db,
            ctx.app.clock,
            identity,
            parse_id(room_id, "room"),
            key,
            body=body,
            client_message_id=client_message_id,
        )
        if publish is not None:
            publish_after_commit(db, ctx.app.broker, [publish])
            metrics.POSTS.labels("operator").inc()
    return Message.from_view(
        MessageView.from_row(message, key), side_of(key) or Seat.VISITOR, operator_shown=True
    )
