"""The operators' fields, merged into the root types by ``schema/root.py``.
NOT_FOUND to anyone but operators, and to an API key without ops:read / ops:write."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.domain.seats import Seat
from dealroom.resolvers import ops
from dealroom.resolvers.ops_transcripts import pane_key
from dealroom.schema.context import Info
from dealroom.schema.ops_room_view import (
    MemoryOp,
    RoomMemoryChangeConnection,
    RoomMemoryWrite,
)
from dealroom.schema.ops_rooms import (
    OpsAccount,
    OpsRoom,
    OpsRoomConnection,
    OpsRoomFilter,
)
from dealroom.schema.ops_types import (
    AgentPrompt,
    GoalOverride,
    ModelPickInput,
    OpsActionConnection,
    PaneTakeover,
)
from dealroom.schema.pane_types import Message

RoomId = Annotated[strawberry.ID, strawberry.argument(description="The room.")]
First = Annotated[int, strawberry.argument(description="Page size, 1-100.")]
After = Annotated[str | None, strawberry.argument(description="endCursor of the previous page.")]

PaneSeat = Annotated[
    Seat | None,
    strawberry.argument(description="Whose pane, by side (that side's lead's). Or `key`."),
]
PaneKey = Annotated[
    str | None,
    strawberry.argument(
        description="Whose pane, by participant key (OpsRoom.paneKeys: host_2, visitor_2 …)."
    ),
]


@strawberry.type
class OpsQuery:
    @strawberry.field(
        description="Operators only: rooms by host, stage, flags and spend, most recently "
        "active first."
    )
    async def ops_rooms(
        self,
        info: Info,
        filter: Annotated[
            OpsRoomFilter | None, strawberry.argument(description="Narrow the list.")
        ] = None,
        first: First = 20,
        after: After = None,
    ) -> OpsRoomConnection:
        return await ops.ops_rooms(info, filter, first, after)

    @strawberry.field(
        description="Operators only: one room's runs, goal events, verdicts, flags, spend."
    )
    async def ops_room(self, info: Info, room_id: RoomId) -> OpsRoom:
        return await ops.ops_room(info, room_id)

    @strawberry.field(description="Operators only: every agent's prompt, read-only, hashed.")
    async def agent_prompts(self, info: Info) -> list[AgentPrompt]:
        return await ops.agent_prompts(info)

    @strawberry.field(description="Operators only: an account's spend and hosted rooms.")
    async def ops_account(
        self, info: Info, handle: Annotated[str, strawberry.argument(description="The handle.")]
    ) -> OpsAccount:
        return await ops.ops_account(info, handle)

    @strawberry.field(
        description="Operators only: the audit trail, newest first: every operator action and "
        "every operator read (read:<field>). Also GET /ops/actions.jsonl as JSON lines."
    )
    async def ops_actions(
        self,
        info: Info,
        room_id: Annotated[
            strawberry.ID | None, strawberry.argument(description="Only this room's.")
        ] = None,
        first: First = 20,
        after: After = None,
    ) -> OpsActionConnection:
        return await ops.ops_actions_page(info, room_id, first, after)

    @strawberry.field(
        description="Room memory's changed leaves (old, new, which run or operator, when), "
        "newest first. Operators read every leaf; the room's host reads its own branch's "
        "(host.*). NOT_FOUND to anyone else."
    )
    async def room_memory_history(
        self, info: Info, room_id: RoomId, first: First = 20, after: After = None
    ) -> RoomMemoryChangeConnection:
        return await ops.room_memory_history(info, room_id, first, after)


@strawberry.type
class OpsMutation:
    @strawberry.mutation(
        description="Operators only: pick models per agent for a room (models from the price "
        "table; an empty model clears the pick). Audited."
    )
    async def set_room_models(
        self,
        info: Info,
        room_id: RoomId,
        picks: Annotated[list[ModelPickInput], strawberry.argument(description="The picks.")],
    ) -> OpsRoom:
        return await ops.set_room_models(info, room_id, picks)

    @strawberry.mutation(
        description="Operators only: set a goal's status as 'operator'. A flip is a goal event "
        "and fires the same effect a persona's ruling fires (new-offer met draws the offer; "
        "abandoned closes it), once; the same status again changes nothing. Audited."
    )
    async def override_goal(
        self,
        info: Info,
        room_id: RoomId,
        key: Annotated[str, strawberry.argument(description="The goal (new-offer).")],
        status: Annotated[str, strawberry.argument(description="open, met, blocked or abandoned.")],
        reason: Annotated[str, strawberry.argument(description="Why (kept on the host side).")],
    ) -> GoalOverride:
        return await ops.override_goal(info, room_id, key, status, reason)

    @strawberry.mutation(
        description="Operators only: take over a pane; its agent stays silent there until "
        "releasePane. The answer carries the pane's transcript and its agent's last plan. "
        "Idempotent. Audited."
    )
    async def take_over_pane(
        self,
        info: Info,
        room_id: RoomId,
        seat: PaneSeat = None,
        key: PaneKey = None,
    ) -> PaneTakeover:
        return await ops.take_over_pane(info, room_id, pane_key(seat, key))

    @strawberry.mutation(
        description="Operators only: give a taken-over pane back to its agent, with a system "
        "line in its transcript (the agent's next turn reads it after the operator's lines). "
        "True if it was taken over (false writes nothing). Audited."
    )
    async def release_pane(
        self,
        info: Info,
        room_id: RoomId,
        seat: PaneSeat = None,
        key: PaneKey = None,
    ) -> bool:
        return await ops.release_pane(info, room_id, pane_key(seat, key))

    @strawberry.mutation(
        description="Operators only: one targeted change to a room's memory, with a reason, "
        "through the memory writer's rules: never a reserved part (goals, plans, …), only "
        "under a participant's branch or deal, within the size limits, and a value a "
        "visitor-side pane reads is screened for the host's private values and must already "
        "be on the visitor's side (BAD_USER_INPUT, nothing written). CONFLICT while a memory "
        "writer (Distil, the Guard) holds the room's lease. Each changed leaf is a history "
        "row. Audited."
    )
    async def edit_room_memory(
        self,
        info: Info,
        room_id: RoomId,
        op: Annotated[MemoryOp, strawberry.argument(description="set, append or remove.")],
        path: Annotated[
            str,
            strawberry.argument(description="A dotted path under a participant's branch or deal."),
        ],
        reason: Annotated[str, strawberry.argument(description="Why (kept in the history).")],
        value: Annotated[
            str | None, strawberry.argument(description="The value, for set and append.")
        ] = None,
    ) -> RoomMemoryWrite:
        return await ops.edit_room_memory(info, room_id, op, path, value, reason)

    @strawberry.mutation(
        description="Operators only: undo one room memory change, as a new recorded change. "
        "CONFLICT when the leaf changed again since (revert the later change first) or a "
        "memory writer holds the room; BAD_USER_INPUT for a reserved part, or a restored value "
        "a visitor-side pane would read that states a host private value. Audited."
    )
    async def revert_room_memory_change(
        self,
        info: Info,
        change_id: Annotated[strawberry.ID, strawberry.argument(description="The change.")],
        reason: Annotated[str, strawberry.argument(description="Why.")] = "",
    ) -> RoomMemoryWrite:
        return await ops.revert_room_memory_change(info, change_id, reason)

    @strawberry.mutation(
        description="Operators only: speak in the agent's seat of a taken-over pane; the line "
        "is authored OPERATOR. CONFLICT unless the pane is taken over. Idempotent on "
        "clientMessageId. Audited."
    )
    async def operator_post(
        self,
        info: Info,
        room_id: RoomId,
        body: Annotated[str, strawberry.argument(description="The text.")],
        client_message_id: Annotated[
            str, strawberry.argument(description="Idempotency key, 1-64 characters.")
        ],
        seat: PaneSeat = None,
        key: PaneKey = None,
    ) -> Message:
        return await ops.operator_post(info, room_id, pane_key(seat, key), body, client_message_id)
