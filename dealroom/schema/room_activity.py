"""The room list's live hints (``Subscription.roomEvents``): which room changed and how, never
what it says; the client re-reads the room (``node``, ``room``, ``rooms``)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import strawberry

from dealroom.domain.cursors import event_cursor

if TYPE_CHECKING:
    from dealroom.services.live.room_activity import Activity


@strawberry.enum(description="What changed in the reader's room list.")
class RoomActivityKind(Enum):
    NEW_ROOM = strawberry.enum_value(
        "NEW_ROOM",
        description="A room joined the reader's list: opened with the reader as host, or "
        "joined through an invitation.",
    )
    PEOPLE_CHANGED = strawberry.enum_value(
        "PEOPLE_CHANGED",
        description="Someone joined or left one of the reader's rooms (or the reader left it): "
        "re-read its participants and panes.",
    )
    MESSAGE = strawberry.enum_value(
        "MESSAGE", description="A message or system line in a pane the reader reads (unread)."
    )
    STAGE_CHANGED = strawberry.enum_value(
        "STAGE_CHANGED", description="The room's written offer changed stage."
    )
    RESYNC = strawberry.enum_value(
        "RESYNC",
        description="Re-read the whole list: sent first on every (re)subscription, and when "
        "hints may have been lost (nothing is replayed).",
    )


@strawberry.type(description="A change in one of the reader's rooms (a hint: re-read the room).")
class RoomActivity:
    kind: RoomActivityKind = strawberry.field(description="What happened.")
    room_id: strawberry.ID | None = strawberry.field(description="The room; null for RESYNC.")
    cursor: str | None = strawberry.field(
        description="The stored event's cursor in the room (MESSAGE, STAGE_CHANGED): compare "
        "with the last cursor the reader saw to mark the room unread."
    )

    @classmethod
    def from_activity(cls, activity: Activity) -> RoomActivity:
        kind = RoomActivityKind[activity.kind.name]
        return cls(
            kind=kind,
            room_id=strawberry.ID(str(activity.room_id)) if activity.room_id else None,
            cursor=event_cursor(activity.cursor) if activity.cursor is not None else None,
        )


__all__ = ["RoomActivity", "RoomActivityKind"]
