"""Partner fields (API keys, webhooks), merged into the root types by ``schema/root.py``."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import partners
from dealroom.schema.context import Info
from dealroom.schema.partner_types import ApiKey, CreatedApiKey


@strawberry.type
class PartnerQuery:
    @strawberry.field(description="The signed-in account's API keys, newest first (sessions only).")
    async def api_keys(self, info: Info) -> list[ApiKey]:
        return await partners.list_api_keys(info)


@strawberry.type
class PartnerMutation:
    @strawberry.mutation(
        description="Make an API key for the signed-in account with the given scopes "
        "(offers:read, webhooks:manage; operators also ops:read, ops:write). The key is in "
        "the answer once and stored only hashed. Sessions only: a key cannot make keys."
    )
    async def create_api_key(
        self,
        info: Info,
        name: Annotated[str, strawberry.argument(description="A name, 1-80 characters.")],
        scopes: Annotated[list[str], strawberry.argument(description="The scopes it carries.")],
    ) -> CreatedApiKey:
        return await partners.create_api_key(info, name, scopes)

    @strawberry.mutation(description="Revoke one of the signed-in account's API keys at once.")
    async def revoke_api_key(
        self,
        info: Info,
        id: Annotated[strawberry.ID, strawberry.argument(description="The key's id.")],
    ) -> ApiKey:
        return await partners.revoke_api_key(info, id)
