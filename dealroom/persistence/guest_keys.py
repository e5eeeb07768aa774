"""Queries for the guest keys handed out (``guest_key_mints``), by the client address's hash:
minting is rate limited per address. (What a guest key's posts are charged against the cap:
``guest_posts``.) Repositories flush, never commit."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import GuestKeyMint


class GuestKeyRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def minted_since(self, ip_hash: str, since: datetime) -> int:
        """How many guest keys the address was handed from ``since``."""
        return int(
            await self.db.scalar(
                select(func.count(GuestKeyMint.id)).where(
                    GuestKeyMint.ip_hash == ip_hash, GuestKeyMint.created_at >= since
                )
            )
            or 0
        )
