"""Operator resolvers: parse input, check the operator flag (in the service), map."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import strawberry

from dealroom.domain.errors import bad_input
from dealroom.domain.seats import Seat
from dealroom.schema.context import Info
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
from dealroom.services.ops import metrics
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


async def ops_room(info: Info, room_id: strawberry.ID) -> OpsRoom:
    identity = await info.context.identity()
    row = await ops_reads.ops_room(info.context.db, identity, parse_id(room_id, "room"))
    return OpsRoom.from_row(row)


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


async def take_over_pane(info: Info, room_id: strawberry.ID, seat: Seat) -> PaneTakeover:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await ops_actions.take_over_pane(
            db, ctx.app.clock, identity, parse_id(room_id, "room"), Seat(seat)
        )
    return PaneTakeover.from_row(Seat(seat).value, row)


async def release_pane(info: Info, room_id: strawberry.ID, seat: Seat) -> bool:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        return await ops_actions.release_pane(
            db, ctx.app.clock, identity, parse_id(room_id, "room"), Seat(seat)
        )


async def operator_post(
    info: Info, room_id: strawberry.ID, seat: Seat, body: str, client_message_id: str
) -> Message:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        message, publish = await ops_actions.operator_post(
            db,
            ctx.app.clock,
            identity,
            parse_id(room_id, "room"),
            Seat(seat),
            body=body,
            client_message_id=client_message_id,
        )
        if publish is not None:
            publish_after_commit(db, ctx.app.broker, [publish])
            metrics.POSTS.labels("operator").inc()
    return Message.from_view(MessageView.from_row(message, Seat(seat)), Seat(seat))
