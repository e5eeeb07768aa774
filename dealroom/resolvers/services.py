"""Services resolvers: the account's own list, setting it, and choosing a room's service."""

from __future__ import annotations

import uuid

import strawberry

from dealroom.schema.context import Info
from dealroom.schema.room_types import Room
from dealroom.schema.service_types import OfferedService
from dealroom.services.accounts import offered
from dealroom.services.rooms import room_services
from dealroom.services.rooms.service import parse_id


async def services_of(info: Info, account_id: uuid.UUID) -> list[OfferedService]:
    rows = await offered.services_of(info.context.db, account_id)
    return [OfferedService.from_row(row) for row in rows]


async def set_services(info: Info, names: list[str]) -> list[OfferedService]:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        rows = await offered.set_services(db, identity, names, ctx.app.clock.now())
        return [OfferedService.from_row(row) for row in rows]


async def choose_room_service(info: Info, room_id: strawberry.ID, service: str) -> Room:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await room_services.choose_service(db, identity, parse_id(room_id, "room"), service)
        return Room.for_reader(row)
