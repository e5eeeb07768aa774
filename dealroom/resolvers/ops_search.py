"""Operators' search resolvers: map the input, call the service, page the answer."""

from __future__ import annotations

from dealroom.schema.context import Info
from dealroom.schema.ops_rooms import OpsRoomConnection, room_connection
from dealroom.schema.ops_search_types import (
    OpsAccountHit,
    OpsAccountHitConnection,
    OpsOfferHit,
    OpsOfferHitConnection,
    OpsOfferSearch,
    OpsRoomSearch,
)
from dealroom.services.ops import reads as ops_reads
from dealroom.services.ops import search


def _first(info: Info, first: int) -> int:
    return ops_reads.page_size(first, info.context.app.settings.max_page_size)


async def rooms(
    info: Info, raw: OpsRoomSearch | None, first: int, after: str | None
) -> OpsRoomConnection:
    ctx = info.context
    asked = search.RoomSearch()
    if raw is not None:
        asked = search.RoomSearch(
            host_handle=raw.host_handle,
            visitor=raw.visitor,
            stage=raw.stage,
            flag_level=raw.flag_level,
            min_spend_usd=raw.min_spend_usd,
            max_spend_usd=raw.max_spend_usd,
            active_from=raw.active_from,
            active_before=raw.active_before,
        )
    page = await search.rooms(
        ctx.db, await ctx.identity(), asked, first=_first(info, first), after=after
    )
    return room_connection(page)


async def offers(
    info: Info, raw: OpsOfferSearch | None, first: int, after: str | None
) -> OpsOfferHitConnection:
    ctx = info.context
    asked = search.OfferSearch()
    if raw is not None:
        asked = search.OfferSearch(
            stages=tuple(raw.stages or ()),
            min_fee=raw.min_fee,
            max_fee=raw.max_fee,
            currency=raw.currency,
        )
    page = await search.offers(
        ctx.db, await ctx.identity(), asked, first=_first(info, first), after=after
    )
    end = page.rows[-1] if page.rows else None
    return OpsOfferHitConnection(
        nodes=[OpsOfferHit.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
    )


async def accounts(
    info: Info, query: str, first: int, after: str | None
) -> OpsAccountHitConnection:
    ctx = info.context
    page = await search.accounts(
        ctx.db, await ctx.identity(), query, first=_first(info, first), after=after
    )
    end = page.rows[-1][0] if page.rows else None
    return OpsAccountHitConnection(
        nodes=[OpsAccountHit.from_row(a, email) for a, email in page.rows],
        has_next_page=page.has_next,
        end_cursor=ops_reads.cursor_of(end.created_at, end.id) if end else None,
    )
