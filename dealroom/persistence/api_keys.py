"""Queries for partners' API keys (``api_keys``). Repositories flush, never commit."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select, update

from dealroom.persistence.db import Db
from dealroom.persistence.models import ApiKey


class ApiKeyRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def live_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this digest, unless it was revoked."""
        return await self.db.scalar(
            select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))
        )

    async def of_account(self, account_id: uuid.UUID) -> list[ApiKey]:
        """The account's keys, revoked ones included, newest first."""
        return list(
            await self.db.scalars(
                select(ApiKey)
                .where(ApiKey.account_id == account_id)
                .order_by(ApiKey.created_at.desc(), ApiKey.id)
            )
        )

    async def mark_used(self, key_id: uuid.UUID, now: datetime) -> None:
        """Stamp the key's ``last_used_at`` (one UPDATE, no row loaded)."""
        await self.db.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_used_at=now))
