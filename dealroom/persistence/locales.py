"""Accounts' locales (``domain/locale.py``): the one write and the batch read webhooks use.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import cast

from sqlalchemy import select, update

from dealroom.persistence.db import Db
from dealroom.persistence.models import Account


class LocaleRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def set_locale(self, account_id: uuid.UUID, locale: str | None) -> None:
        """Store ``account_id``'s locale (already canonical; None clears it)."""
        await self.db.execute(update(Account).where(Account.id == account_id).values(locale=locale))

    async def locales_of(self, account_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str | None]:
        """Each account's stored locale: one statement (none for no ids)."""
        if not account_ids:
            return {}
        rows = await self.db.execute(
            select(Account.id, Account.locale).where(Account.id.in_(list(set(account_ids))))
        )
        # the statement selects exactly these two columns
        found = [cast(tuple[uuid.UUID, str | None], tuple(row)) for row in rows.all()]
        return dict(found)
