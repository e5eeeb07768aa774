"""GraphQL types of the operators' room and account views. Every field that
reads the database checks the operator flag again (``services/ops/reads.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, cast

import strawberry
from strawberry.scalars import JSON

from dealroom.domain.cursors import room_cursor
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat
from dealroom.resolvers import ops_queue, ops_room, ops_transcripts
from dealroom.schema.context import Info
from dealroom.schema.link_types import OpsLink
from dealroom.schema.ops_queue_types import OpsQueueHistory
from dealroom.schema.ops_room_view import (
    OpsDispatchConnection,
    OpsOffer,
    OpsRoomReadConnection,
    OpsTranscript,
    RoomMemoryChangeConnection,
)
from dealroom.schema.ops_types import (
    OpsFlagConnection,
    OpsGoalEventConnection,
    OpsRunConnection,
    OpsVerdictConnection,
    PaneTakeover,
    Spend,
    SpendBy,
)

if TYPE_CHECKING:
    from dealroom.services.ops.reads import OpsRoomRow, Page


First = Annotated[int, strawberry.argument(description="Page size, 1-100.")]
After = Annotated[str | None, strawberry.argument(description="endCursor of the previous page.")]


@strawberry.type(description="A room as operators see it. Never shown to an agent.")
class OpsRoom:
    id: strawberry.ID = strawberry.field(description="The room id.")
    title: str = strawberry.field(description="The room's title.")
    kind: str = strawberry.field(description="home or deal.")
    mode: str = strawberry.field(description="live, demo or scripted.")
    host_handle: str = strawberry.field(description="The host account's handle.")
    stage: Stage = strawberry.field(description="The live offer stage.")
    last_activity_at: datetime = strawberry.field(description="Last event (UTC).")
    flag_count: int = strawberry.field(description="Frustration flags raised.")
    total_spend: Spend = strawberry.field(description="All its model calls.")
    model_picks: JSON = strawberry.field(
        description="Models picked for this room, by agent (setRoomModels)."
    )
    _id: strawberry.Private[uuid.UUID]

    @classmethod
    def from_row(cls, row: OpsRoomRow) -> OpsRoom:
        return cls(
            id=strawberry.ID(str(row.room.id)),
            title=row.room.title,
            kind=row.room.kind,
            mode=row.room.mode,
            host_handle=row.host_handle,
            stage=Stage(row.stage),
            last_activity_at=row.room.last_activity_at,
            flag_count=row.flag_count,
            total_spend=Spend.from_spend(row.spend),
            model_picks=cast(JSON, dict(row.room.model_picks or {})),  # an opaque NewType
            _id=row.room.id,
        )

    @strawberry.field(description="Every agent run, newest first (optionally one agent's).")
    async def runs(
        self,
        info: Info,
        first: First = 20,
        after: After = None,
        agent: Annotated[
            str | None, strawberry.argument(description="Only this agent's runs.")
        ] = None,
    ) -> OpsRunConnection:
        return await ops_room.runs(info, self._id, first, after, agent)

    @strawberry.field(description="Goal status flips, newest first.")
    async def goal_events(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsGoalEventConnection:
        return await ops_room.goal_events(info, self._id, first, after)

    @strawberry.field(
        description="Each run's verdict, newest first (optionally one agent's): a Guard "
        "run's is its audit's verdict (healthy, repaired or unrepaired)."
    )
    async def verdicts(
        self,
        info: Info,
        first: First = 20,
        after: After = None,
        agent: Annotated[
            str | None, strawberry.argument(description="Only this agent's verdicts.")
        ] = None,
    ) -> OpsVerdictConnection:
        return await ops_room.verdicts(info, self._id, first, after, agent)

    @strawberry.field(description="Frustration flags, newest first.")
    async def flags(self, info: Info, first: First = 20, after: After = None) -> OpsFlagConnection:
        return await ops_room.flags(info, self._id, first, after)

    @strawberry.field(description="Spend grouped by agent, model or UTC day.")
    async def spend(
        self, info: Info, by: Annotated[SpendBy, strawberry.argument(description="Grouping.")]
    ) -> list[Spend]:
        return await ops_room.spend(info, by, room_id=self._id)

    @strawberry.field(description="Panes an operator has taken over.")
    async def takeovers(self, info: Info) -> list[PaneTakeover]:
        return await ops_room.takeovers(info, self._id)

    @strawberry.field(
        description="Every pane's participant key, host first (host, host_2 …, visitor, "
        "visitor_2 …): what `transcript(key:)` reads."
    )
    async def pane_keys(self, info: Info) -> list[str]:
        return await ops_room.pane_keys(info, self._id)

    @strawberry.field(description="One pane's transcript, newest first, paged by `before`.")
    async def transcript(
        self,
        info: Info,
        seat: Annotated[
            Seat | None,
            strawberry.argument(description="Whose pane, by side (its lead's). Or `key`."),
        ] = None,
        first: First = 50,
        before: Annotated[
            int | None, strawberry.argument(description="`before` of the previous page.")
        ] = None,
        key: Annotated[
            str | None,
            strawberry.argument(description="Whose pane, by participant key (`paneKeys`)."),
        ] = None,
    ) -> OpsTranscript:
        return await ops_transcripts.room_transcript(info, self._id, seat, key, first, before)

    @strawberry.field(description="The whole room memory, every branch (never an agent's view).")
    async def memory(self, info: Info) -> JSON:
        document, _ = await ops_room.memory(info, self._id)
        return cast(JSON, document)  # an opaque NewType

    @strawberry.field(description="The room memory's version.")
    async def memory_version(self, info: Info) -> int:
        _, version = await ops_room.memory(info, self._id)
        return version

    @strawberry.field(description="Room memory's changed leaves, newest first.")
    async def memory_history(
        self, info: Info, first: First = 20, after: After = None
    ) -> RoomMemoryChangeConnection:
        return await ops_room.memory_history(info, self._id, first, after)

    @strawberry.field(description="The dispatch record (what each pane sent), newest first.")
    async def dispatches(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsDispatchConnection:
        return await ops_room.dispatches(info, self._id, first, after)

    @strawberry.field(description="The room's offers, newest first, with their payments.")
    async def offers(self, info: Info, first: First = 10) -> list[OpsOffer]:
        return await ops_room.offers(info, self._id, first)

    @strawberry.field(
        description="Links pasted in the room's panes, newest read first: what each pane's "
        "agent could read of them and why not (never the pages' text)."
    )
    async def links(self, info: Info, first: First = 50) -> list[OpsLink]:
        return await ops_room.links(info, self._id, first)

    @strawberry.field(description="Operators' reads of this room (who, when, what), newest first.")
    async def reads(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsRoomReadConnection:
        return await ops_room.reads(info, self._id, first, after)

    @strawberry.field(
        description="Queue items operators resolved about this room, newest first: each "
        "with its note and who resolved it."
    )
    async def queue_history(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsQueueHistory:
        return await ops_queue.room_history(info, self._id, first, after)


@strawberry.type(description="A page of rooms, most recently active first.")
class OpsRoomConnection:
    nodes: list[OpsRoom] = strawberry.field(description="The rooms.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")


@strawberry.input(description="Which rooms to list; every field narrows.")
class OpsRoomFilter:
    host_handle: str | None = strawberry.field(default=None, description="The host's handle.")
    stage: Stage | None = strawberry.field(default=None, description="The live offer stage.")
    flagged: bool | None = strawberry.field(
        default=None, description="true: with frustration flags; false: without."
    )
    min_spend_usd: str | None = strawberry.field(
        default=None, description="At least this much priced spend (USD, decimal string)."
    )


@strawberry.type(description="An account as operators see it.")
class OpsAccount:
    id: strawberry.ID = strawberry.field(description="The account id.")
    handle: str = strawberry.field(description="The handle.")
    display_name: str = strawberry.field(description="The display name.")
    is_operator: bool = strawberry.field(description="Whether it is an operator.")
    _id: strawberry.Private[uuid.UUID]

    @strawberry.field(description="Spend of the rooms it hosts, grouped by agent, model or day.")
    async def spend(
        self, info: Info, by: Annotated[SpendBy, strawberry.argument(description="Grouping.")]
    ) -> list[Spend]:
        return await ops_room.spend(info, by, account_id=self._id)

    @strawberry.field(description="The rooms it hosts, most recently active first.")
    async def rooms(self, info: Info, first: First = 20, after: After = None) -> OpsRoomConnection:
        page = await ops_room.account_rooms(info, self.handle, first, after)
        return room_connection(page)


def room_connection(page: Page[OpsRoomRow]) -> OpsRoomConnection:
    end = page.rows[-1].room if page.rows else None
    return OpsRoomConnection(
        nodes=[OpsRoom.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=room_cursor(end.last_activity_at, end.id) if end else None,
    )
