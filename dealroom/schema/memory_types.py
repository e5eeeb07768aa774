"""GraphQL types of durable account memory: the owner's document with leaf dates and its change
history (the kind of a system line, MEMORY_MERGED for a merge, is in ``schema/enums.py``)."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, cast

import strawberry
from strawberry.scalars import JSON

from dealroom.domain import durable
from dealroom.domain.cursors import memory_change_cursor
from dealroom.persistence import models
from dealroom.schema.paging import DEPRECATED_FLAT, PageInfo, forward_page_info

if TYPE_CHECKING:
    from dealroom.services.memory.durable import DurableView


@strawberry.type(description="One leaf of the durable document and when it last changed.")
class MemoryLeaf:
    path: str = strawberry.field(description="Dotted path of the leaf.")
    value: JSON = strawberry.field(description="The leaf's value (a string, number or list).")
    changed_on: date | None = strawberry.field(
        description="When the value last changed (written by code on a real change); null for "
        "a leaf written before dates were recorded."
    )


@strawberry.type(description="The account's long-term (durable) memory, curated by Arvist.")
class DurableMemory:
    document: JSON = strawberry.field(description="The whole document.")
    version: int = strawberry.field(description="Grows by one on every change.")
    updated_at: datetime | None = strawberry.field(description="When it last changed (UTC).")
    leaves: list[MemoryLeaf] = strawberry.field(description="Every leaf with its date, by path.")

    @classmethod
    def from_view(cls, view: DurableView) -> DurableMemory:
        leaves = durable.leaves(view.document)
        return cls(
            document=cast(JSON, view.document),  # JSON is an opaque NewType
            version=view.version,
            updated_at=view.updated_at,
            leaves=[
                MemoryLeaf(path=path, value=cast(JSON, value), changed_on=view.dates.get(path))
                for path, value in sorted(leaves.items())
            ],
        )


@strawberry.type(description="One changed leaf of a durable document.")
class MemoryChange:
    id: strawberry.ID = strawberry.field(description="The change id (revertMemoryChange).")
    path: str = strawberry.field(description="The leaf's dotted path.")
    old_value: JSON | None = strawberry.field(description="Before; null when it was absent.")
    new_value: JSON | None = strawberry.field(description="After; null when it was removed.")
    version: int = strawberry.field(description="The document version this change made.")
    agent: str = strawberry.field(description="Who changed it: arvist, or operator (a revert).")
    room_id: strawberry.ID | None = strawberry.field(description="The room it was promoted from.")
    run_id: strawberry.ID | None = strawberry.field(description="The agent run that wrote it.")
    reverts_id: strawberry.ID | None = strawberry.field(
        description="For a revert, the change it undid."
    )
    created_at: datetime = strawberry.field(description="When it changed (UTC).")

    @classmethod
    def from_row(cls, row: models.MemoryChange) -> MemoryChange:
        def ident(value: object) -> strawberry.ID | None:
            return strawberry.ID(str(value)) if value is not None else None

        return cls(
            id=strawberry.ID(str(row.id)),
            path=row.path,
            old_value=cast(JSON, row.old_value),
            new_value=cast(JSON, row.new_value),
            version=row.version,
            agent=row.agent,
            room_id=ident(row.room_id),
            run_id=ident(row.run_id),
            reverts_id=ident(row.reverts_id),
            created_at=row.created_at,
        )


@strawberry.type(description="An edge in the memory history.")
class MemoryChangeEdge:
    cursor: str = strawberry.field(description="The change's cursor.")
    node: MemoryChange = strawberry.field(description="The change.")

    @classmethod
    def from_row(cls, row: models.MemoryChange) -> MemoryChangeEdge:
        return cls(
            cursor=memory_change_cursor(row.created_at, row.id), node=MemoryChange.from_row(row)
        )


@strawberry.type(description="A page of durable-memory changes, newest first.")
class MemoryChangeConnection:
    edges: list[MemoryChangeEdge] = strawberry.field(description="The changes, newest first.")
    has_next_page: bool = strawberry.field(
        description="Older changes follow the last edge.", deprecation_reason=DEPRECATED_FLAT
    )
    end_cursor: str | None = strawberry.field(
        description="Pass as `after` for the next page.", deprecation_reason=DEPRECATED_FLAT
    )

    @strawberry.field(description="Relay page info.")
    def page_info(self) -> PageInfo:
        cursors = [edge.cursor for edge in self.edges]
        # hasPreviousPage false: Relay allows it when paging forward.
        return forward_page_info(cursors, self.has_next_page, None)
