"""``node``/``nodes``: refetch any Node by id, through the same reads (and so the same access
rules) as the type's own query. A node the reader may not see reads exactly like one that does
not exist: null, never an error that would confirm it exists."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import strawberry

from dealroom.domain.errors import DomainError, ErrorCode, bad_input
from dealroom.resolvers import accounts, offers, rooms
from dealroom.schema.context import Info
from dealroom.schema.node import Node

Fetch = Callable[[Info, strawberry.ID], Awaitable[Node]]


async def _account(info: Info, id: strawberry.ID) -> Node:
    return await accounts.account_by_id(info, id)


FETCHES: tuple[Fetch, ...] = (rooms.room, offers.offer, _account)
"""Each Node type's own read, tried in turn: ids are UUIDs unique across types, so at most one
finds a row."""


async def node(info: Info, id: strawberry.ID) -> Node | None:
    try:
        uuid.UUID(str(id))
    except ValueError:
        return None
    for fetch in FETCHES:
        try:
            return await fetch(info, id)
        except DomainError as error:
            if error.code is not ErrorCode.NOT_FOUND:
                raise
    return None


async def nodes(info: Info, ids: list[strawberry.ID]) -> list[Node | None]:
    cap = info.context.app.settings.max_page_size
    if len(ids) > cap:
        raise bad_input(f"ids may name at most {cap} nodes.", "ids")
    return [await node(info, id) for id in ids]
