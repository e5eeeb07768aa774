"""GraphQL types of the operators' queue of what needs a human (``services/ops/queue.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING

import strawberry

from dealroom.domain.ops_queue import ItemKind, Level, item_key
from dealroom.persistence import models
from dealroom.schema.paging import PageInfo

if TYPE_CHECKING:
    from dealroom.persistence.ops_queue import QueueRow

strawberry.enum(
    ItemKind,
    name="QueueItemKind",
    description="What needs a person: FLAG (a frustration flag), ESCALATION (a principal did "
    "not answer a waiting side), VERDICT (a Guard audit that was not healthy), FAILED_RUN (an "
    "agent run failed past its retries), PAYMENT (a disputed payment, or one pending capture "
    "for a day), WEBHOOK (a partner endpoint failing for a day).",
)
strawberry.enum(
    Level,
    name="QueueLevel",
    description="How urgent: HIGH (escalations, disputes, unrepaired audits, high flags), "
    "MEDIUM, LOW. The queue lists HIGH first, then oldest first.",
)


@strawberry.type(description="One item of the operators' queue.")
class OpsQueueItem:
    id: strawberry.ID = strawberry.field(description="The item: <kind>:<source row id>.")
    kind: ItemKind = strawberry.field(description="What needs a person.")
    level: Level = strawberry.field(description="How urgent.")
    summary: str = strawberry.field(description="What happened, in a line.")
    room_id: strawberry.ID | None = strawberry.field(
        description="The room it is about (null for a webhook endpoint)."
    )
    room_title: str | None = strawberry.field(description="That room's title.")
    link: str | None = strawberry.field(description="The room's ops page (/ops/rooms/<id>).")
    raised_at: datetime = strawberry.field(description="When it arose (UTC).")
    age_seconds: int = strawberry.field(description="How long it has waited, in seconds.")
    acknowledged_at: datetime | None = strawberry.field(description="When first acknowledged.")
    acknowledged_by_id: strawberry.ID | None = strawberry.field(
        description="The operator who first acknowledged it."
    )
    assignee: str | None = strawberry.field(description="The assigned operator's handle.")
    resolved_at: datetime | None = strawberry.field(description="When resolved (UTC).")
    resolved_by: str | None = strawberry.field(description="The resolving operator's handle.")
    note: str | None = strawberry.field(description="The resolution's note.")

    @classmethod
    def from_row(cls, row: QueueRow, now: datetime, resolver: str | None = None) -> OpsQueueItem:
        state = row.state
        return cls(
            id=strawberry.ID(item_key(row.kind, row.source_id)),
            kind=row.kind,
            level=row.level,
            summary=row.summary[:500],
            room_id=strawberry.ID(str(row.room_id)) if row.room_id else None,
            room_title=row.room_title,
            link=f"/ops/rooms/{row.room_id}" if row.room_id else None,
            raised_at=row.raised_at,
            age_seconds=max(0, int((now - row.raised_at).total_seconds())),
            acknowledged_at=state.acknowledged_at if state else None,
            acknowledged_by_id=_id(state.acknowledged_by if state else None),
            assignee=row.assignee_handle,
            resolved_at=state.resolved_at if state else None,
            resolved_by=resolver,
            note=state.note if state else None,
        )

    @classmethod
    def from_history(
        cls, row: models.OpsQueueItem, now: datetime, handles: dict[uuid.UUID, str]
    ) -> OpsQueueItem:
        level = Level(row.level)
        return cls(
            id=strawberry.ID(item_key(ItemKind(row.kind), row.source_id)),
            kind=ItemKind(row.kind),
            level=level,
            summary=row.summary[:500],
            room_id=strawberry.ID(str(row.room_id)) if row.room_id else None,
            room_title=None,
            link=f"/ops/rooms/{row.room_id}" if row.room_id else None,
            raised_at=row.raised_at,
            age_seconds=max(0, int((now - row.raised_at).total_seconds())),
            acknowledged_at=row.acknowledged_at,
            acknowledged_by_id=_id(row.acknowledged_by),
            assignee=handles.get(row.assigned_to) if row.assigned_to else None,
            resolved_at=row.resolved_at,
            resolved_by=handles.get(row.resolved_by) if row.resolved_by else None,
            note=row.note,
        )


def _id(value: uuid.UUID | None) -> strawberry.ID | None:
    return strawberry.ID(str(value)) if value is not None else None


@strawberry.type(description="An edge to a queue item.")
class OpsQueueEdge:
    cursor: str = strawberry.field(description="Pass as `after` for the page after it.")
    node: OpsQueueItem = strawberry.field(description="The item.")


@strawberry.type(description="A page of the operators' queue: most urgent, then oldest, first.")
class OpsQueueConnection:
    edges: list[OpsQueueEdge] = strawberry.field(description="The items, with cursors.")
    nodes: list[OpsQueueItem] = strawberry.field(description="The items.")
    page_info: PageInfo = strawberry.field(description="Relay page info.")


@strawberry.type(description="A page of a room's resolved queue items, newest first.")
class OpsQueueHistory:
    nodes: list[OpsQueueItem] = strawberry.field(description="The resolved items.")
    has_next_page: bool = strawberry.field(description="More follow.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")
