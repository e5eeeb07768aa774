"""The operators' searches: rooms, offers and accounts, paged newest first (NOT_FOUND to anyone
but an operator, and to an API key without ops:read). Merged into the root by
``schema/root.py``."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import ops_search
from dealroom.schema.context import Info
from dealroom.schema.ops_rooms import OpsRoomConnection
from dealroom.schema.ops_search_types import (
    OpsAccountHitConnection,
    OpsOfferHitConnection,
    OpsOfferSearch,
    OpsRoomSearch,
)

First = Annotated[int, strawberry.argument(description="Page size, 1-100.")]
After = Annotated[str | None, strawberry.argument(description="endCursor of the previous page.")]


@strawberry.type
class OpsSearchQuery:
    @strawberry.field(
        description="Operators only: rooms by host, visitor, stage, flag level, spend range and "
        "last activity, most recently active first. BAD_USER_INPUT (naming the filter) for a "
        "malformed or oversized filter or an empty range."
    )
    async def ops_search_rooms(
        self,
        info: Info,
        search: Annotated[
            OpsRoomSearch | None, strawberry.argument(description="What to find.")
        ] = None,
        first: First = 20,
        after: After = None,
    ) -> OpsRoomConnection:
        return await ops_search.rooms(info, search, first, after)

    @strawberry.field(
        description="Operators only: written offers by stage and fee range, newest first. "
        "BAD_USER_INPUT for a malformed filter or an empty range."
    )
    async def ops_search_offers(
        self,
        info: Info,
        search: Annotated[
            OpsOfferSearch | None, strawberry.argument(description="What to find.")
        ] = None,
        first: First = 20,
        after: After = None,
    ) -> OpsOfferHitConnection:
        return await ops_search.offers(info, search, first, after)

    @strawberry.field(
        description="Operators only: accounts by handle prefix, or by whole email when the "
        "query has an @, newest first. BAD_USER_INPUT for an empty or oversized query."
    )
    async def ops_search_accounts(
        self,
        info: Info,
        query: Annotated[str, strawberry.argument(description="A handle prefix or an email.")],
        first: First = 20,
        after: After = None,
    ) -> OpsAccountHitConnection:
        return await ops_search.accounts(info, query, first, after)
