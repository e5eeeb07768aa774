"""GraphQL types of the operators' room and account views. Every field that
reads the database checks the operator flag again (``services/ops/reads.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, cast

import strawberry
from strawberry.scalars import JSON

from dealroom.domain.errors import bad_input
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import Seat, side_of
from dealroom.persistence import models
from dealroom.persistence.models import AgentRun
from dealroom.resolvers import ops_queue
from dealroom.schema.context import Info
from dealroom.schema.link_types import OpsLink
from dealroom.schema.ops_queue_types import OpsQueueHistory
from dealroom.schema.ops_room_view import (
    OpsDispatch,
    OpsDispatchConnection,
    OpsOffer,
    OpsRoomRead,
    OpsRoomReadConnection,
    OpsTranscript,
    RoomMemoryChange,
    RoomMemoryChangeConnection,
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
from dealroom.schema.pane_types import Message
from dealroom.services.live.events import MessageView
from dealroom.services.ops import reads as ops_reads
from dealroom.services.ops import room_memory, room_view
from dealroom.services.ops import spend as spend_reads
from dealroom.services.ops.spend import SpendBy as SpendGrouping


def _cap(info: Info, first: int) -> int:
    return ops_reads.page_size(first, info.context.app.settings.max_page_size)


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
    def from_row(cls, row: ops_reads.OpsRoomRow) -> OpsRoom:
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

    async def _runs(
        self, info: Info, first: int, after: str | None, agent: str | None
    ) -> tuple[ops_reads.Page[ops_reads.RunRow], AgentRun | None]:
        identity = await info.context.identity()
        page = await ops_reads.runs(
            info.context.db, identity, self._id, first=_cap(info, first), after=after, agent=agent
        )
        return page, page.rows[-1].run if page.rows else None

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
        page, end = await self._runs(info, first, after, agent)
        return OpsRunConnection(
            nodes=[OpsRun.from_row(r) for r in page.rows],
            has_next_page=page.has_next,
            end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
        )

    @strawberry.field(description="Goal status flips, newest first.")
    async def goal_events(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsGoalEventConnection:
        identity = await info.context.identity()
        page = await ops_reads.goal_events(
            info.context.db, identity, self._id, first=_cap(info, first), after=after
        )
        end = page.rows[-1] if page.rows else None
        return OpsGoalEventConnection(
            nodes=[OpsGoalEvent.from_row(r) for r in page.rows],
            has_next_page=page.has_next,
            end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
        )

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
        page, end = await self._runs(info, first, after, agent)
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
            end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
        )

    @strawberry.field(description="Frustration flags, newest first.")
    async def flags(self, info: Info, first: First = 20, after: After = None) -> OpsFlagConnection:
        identity = await info.context.identity()
        page = await ops_reads.flags(
            info.context.db, identity, self._id, first=_cap(info, first), after=after
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
            end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
        )

    @strawberry.field(description="Spend grouped by agent, model or UTC day.")
    async def spend(
        self, info: Info, by: Annotated[SpendBy, strawberry.argument(description="Grouping.")]
    ) -> list[Spend]:
        identity = await info.context.identity()
        ops_reads.require_operator(identity)
        rows = await spend_reads.spend(
            info.context.db, by=SpendGrouping(by.value), room_id=self._id
        )
        return [Spend.from_spend(r, r.key) for r in rows]

    @strawberry.field(description="Panes an operator has taken over.")
    async def takeovers(self, info: Info) -> list[PaneTakeover]:
        identity = await info.context.identity()
        rows = await ops_reads.takeovers(info.context.db, identity, self._id)
        return [PaneTakeover.from_row(seat, row) for seat, row in rows]

    @strawberry.field(
        description="Every pane's participant key, host first (host, host_2 …, visitor, "
        "visitor_2 …): what `transcript(key:)` reads."
    )
    async def pane_keys(self, info: Info) -> list[str]:
        identity = await info.context.identity()
        return await room_view.pane_keys(info.context.db, identity, self._id)

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
        identity = await info.context.identity()
        if (seat is None) == (key is None):
            raise bad_input("Give seat or key, not both.", "key")
        pane = key if key is not None else Seat(str(seat)).value
        page = await room_view.transcript(
            info.context.db, identity, self._id, pane, first=_cap(info, first), before=before
        )
        side = side_of(pane) or Seat.VISITOR
        return OpsTranscript(
            seat=pane,
            nodes=[
                Message.from_view(MessageView.from_row(m, pane), side, operator_shown=True)
                for m in page.rows
            ],
            has_next_page=page.has_next,
            before=page.rows[-1].seq if page.rows else None,
        )

    @strawberry.field(description="The whole room memory, every branch (never an agent's view).")
    async def memory(self, info: Info) -> JSON:
        identity = await info.context.identity()
        document, _ = await room_view.memory(info.context.db, identity, self._id)
        return cast(JSON, document)  # an opaque NewType

    @strawberry.field(description="The room memory's version.")
    async def memory_version(self, info: Info) -> int:
        identity = await info.context.identity()
        _, version = await room_view.memory(info.context.db, identity, self._id)
        return version

    @strawberry.field(description="Room memory's changed leaves, newest first.")
    async def memory_history(
        self, info: Info, first: First = 20, after: After = None
    ) -> RoomMemoryChangeConnection:
        identity = await info.context.identity()
        ops_reads.require_operator(identity)
        page = await room_memory.history(
            info.context.db, identity, self._id, first=_cap(info, first), after=after
        )
        return memory_history_connection(page)

    @strawberry.field(description="The dispatch record (what each pane sent), newest first.")
    async def dispatches(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsDispatchConnection:
        identity = await info.context.identity()
        page, seats = await room_view.dispatches(
            info.context.db, identity, self._id, first=_cap(info, first), after=after
        )
        end = page.rows[-1] if page.rows else None
        return OpsDispatchConnection(
            nodes=[OpsDispatch.from_row(d, seats) for d in page.rows],
            has_next_page=page.has_next,
            end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
        )

    @strawberry.field(description="The room's offers, newest first, with their payments.")
    async def offers(self, info: Info, first: First = 10) -> list[OpsOffer]:
        identity = await info.context.identity()
        found = await room_view.offers(info.context.db, identity, self._id, first=_cap(info, first))
        return [OpsOffer.from_row(offer, payments) for offer, payments in found]

    @strawberry.field(
        description="Links pasted in the room's panes, newest read first: what each pane's "
        "agent could read of them and why not (never the pages' text)."
    )
    async def links(self, info: Info, first: First = 50) -> list[OpsLink]:
        identity = await info.context.identity()
        found = await room_view.links(info.context.db, identity, self._id, first=_cap(info, first))
        return [OpsLink.from_row(row, seat) for row, seat in found]

    @strawberry.field(description="Operators' reads of this room (who, when, what), newest first.")
    async def reads(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsRoomReadConnection:
        identity = await info.context.identity()
        page = await room_view.reads(
            info.context.db, identity, self._id, first=_cap(info, first), after=after
        )
        end = page.rows[-1] if page.rows else None
        return OpsRoomReadConnection(
            nodes=[OpsRoomRead.from_row(r) for r in page.rows],
            has_next_page=page.has_next,
            end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
        )

    @strawberry.field(
        description="Queue items operators resolved about this room, newest first: each "
        "with its note and who resolved it."
    )
    async def queue_history(
        self, info: Info, first: First = 20, after: After = None
    ) -> OpsQueueHistory:
        return await ops_queue.room_history(info, self._id, first, after)


def memory_history_connection(
    page: ops_reads.Page[models.RoomMemoryChange],
) -> RoomMemoryChangeConnection:
    end = page.rows[-1] if page.rows else None
    return RoomMemoryChangeConnection(
        nodes=[RoomMemoryChange.from_row(c) for c in page.rows],
        has_next_page=page.has_next,
        end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
    )


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
        identity = await info.context.identity()
        ops_reads.require_operator(identity)
        rows = await spend_reads.spend(
            info.context.db, by=SpendGrouping(by.value), account_id=self._id
        )
        return [Spend.from_spend(r, r.key) for r in rows]

    @strawberry.field(description="The rooms it hosts, most recently active first.")
    async def rooms(self, info: Info, first: First = 20, after: After = None) -> OpsRoomConnection:
        identity = await info.context.identity()
        page = await ops_reads.ops_rooms(
            info.context.db,
            identity,
            ops_reads.RoomFilter(host_handle=self.handle),
            first=_cap(info, first),
            after=after,
        )
        return room_connection(page)


def room_connection(page: ops_reads.Page[ops_reads.OpsRoomRow]) -> OpsRoomConnection:
    end = page.rows[-1].room if page.rows else None
    return OpsRoomConnection(
        nodes=[OpsRoom.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=ops_reads.cursor_of(end.last_activity_at, end.id) if end else None,
    )
