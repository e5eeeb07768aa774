"""Relay paging state, shared by the connections that page with cursors (rooms, messages)."""

from __future__ import annotations

import strawberry


@strawberry.type(description="Relay page info.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="More items follow the last edge.")
    has_previous_page: bool = strawberry.field(description="More items precede the first edge.")
    start_cursor: str | None = strawberry.field(description="Cursor of the first edge.")
    end_cursor: str | None = strawberry.field(description="Cursor of the last edge.")
