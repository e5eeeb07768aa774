"""GraphQL types for partners: API keys and webhooks (issue 16)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dealroom.persistence import models


@strawberry.type(description="An API key of the signed-in account. The key itself is shown once.")
class ApiKey:
    id: strawberry.ID = strawberry.field(description="The key's id (for revokeApiKey).")
    name: str = strawberry.field(description="What the owner called it.")
    prefix: str = strawberry.field(description="The key's first characters, to tell keys apart.")
    scopes: list[str] = strawberry.field(description="What it may do (offers:read, …).")
    created_at: datetime = strawberry.field(description="When it was made (UTC).")
    last_used_at: datetime | None = strawberry.field(
        description="When it last authenticated a request (to the minute), if ever."
    )
    revoked_at: datetime | None = strawberry.field(description="When it was revoked, if it was.")

    @classmethod
    def from_row(cls, row: models.ApiKey) -> ApiKey:
        return cls(
            id=strawberry.ID(str(row.id)),
            name=row.name,
            prefix=row.prefix,
            scopes=list(row.scopes or []),
            created_at=row.created_at,
            last_used_at=row.last_used_at,
            revoked_at=row.revoked_at,
        )


@strawberry.type(description="A new API key: `key` is shown only here, never again.")
class CreatedApiKey:
    api_key: ApiKey = strawberry.field(description="The stored key's record.")
    key: str = strawberry.field(
        description="The key: send it as 'Authorization: Bearer dr_…'. Stored only hashed."
    )
