"""Relay paging: the page info every connection carries, and the connections of lists short
enough to be read whole and paged in memory (an account's API keys, webhooks, managed
accounts; docs/DECISIONS.md "Relay")."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import TypeVar

import strawberry

from dealroom.domain.errors import bad_input


@strawberry.type(description="Relay page info.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="More items follow the last edge.")
    has_previous_page: bool = strawberry.field(description="More items precede the first edge.")
    start_cursor: str | None = strawberry.field(description="Cursor of the first edge.")
    end_cursor: str | None = strawberry.field(description="Cursor of the last edge.")


def forward_page_info(cursors: Sequence[str], has_next: bool, after: str | None) -> PageInfo:
    """Page info of a page read forward (``first``/``after``): a previous page exists when
    the reader passed ``after``."""
    return PageInfo(
        has_next_page=has_next,
        has_previous_page=after is not None,
        start_cursor=cursors[0] if cursors else None,
        end_cursor=cursors[-1] if cursors else None,
    )


T = TypeVar("T")


def item_cursor(key: str) -> str:
    """An opaque cursor naming one item of an in-memory page (its id)."""
    return base64.urlsafe_b64encode(f"i:{key}".encode()).decode()


def page_in_memory(
    items: Sequence[T], key: Callable[[T], str], first: int, after: str | None, cap: int
) -> tuple[list[tuple[str, T]], PageInfo]:
    """``first`` items after the one ``after`` names, each with its cursor, and the page info.
    BAD_USER_INPUT for a page size out of 1..cap or a cursor naming no item (it was deleted:
    start again from the first page)."""
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    start = 0
    if after is not None:
        cursors = [item_cursor(key(item)) for item in items]
        if after not in cursors:
            raise bad_input("That cursor names no item; read from the first page.", "after")
        start = cursors.index(after) + 1
    chosen = [(item_cursor(key(item)), item) for item in items[start : start + first]]
    info = forward_page_info([c for c, _ in chosen], start + first < len(items), after)
    return chosen, info


FIRST_DESCRIPTION = "Page size, 1-100."
AFTER_DESCRIPTION = "endCursor of the previous page."
DEPRECATED_FLAT = "Use pageInfo; removed in the next release."
