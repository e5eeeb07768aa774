"""Partner resolvers: API keys and webhooks."""

from __future__ import annotations

import strawberry

from dealroom.schema.context import Info
from dealroom.schema.partner_types import ApiKey, CreatedApiKey
from dealroom.services import api_keys
from dealroom.services.rooms import parse_id


async def create_api_key(info: Info, name: str, scopes: list[str]) -> CreatedApiKey:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        created = await api_keys.create_api_key(
            db, ctx.app.clock, identity, name=name, scopes=scopes
        )
    return CreatedApiKey(api_key=ApiKey.from_row(created.row), key=created.key)


async def revoke_api_key(info: Info, key_id: strawberry.ID) -> ApiKey:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        row = await api_keys.revoke_api_key(
            db, ctx.app.clock, identity, parse_id(key_id, "API key")
        )
    return ApiKey.from_row(row)


async def list_api_keys(info: Info) -> list[ApiKey]:
    identity = await info.context.identity()
    return [ApiKey.from_row(r) for r in await api_keys.api_keys_of(info.context.db, identity)]
