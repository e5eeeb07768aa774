"""The operators' audit trail (``ops_actions``) read whole, for its JSON-lines export: newest
first in keyset batches, so an export of any length holds one batch in memory at a time.
Repositories flush, never commit."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, OpsAction
from dealroom.persistence.paging import After, after


class OpsAuditRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def batch(
        self, *, room_id: uuid.UUID | None, limit: int, after_row: After | None
    ) -> list[tuple[OpsAction, str | None]]:
        """Up to ``limit`` records after ``after_row``, newest first, each with its operator's
        handle (None once the account is gone)."""
        statement = (
            select(OpsAction, Account.handle)
            .outerjoin(Account, Account.id == OpsAction.operator_account_id)
            .order_by(OpsAction.created_at.desc(), OpsAction.id.desc())
            .limit(limit)
        )
        if room_id is not None:
            statement = statement.where(OpsAction.room_id == room_id)
        statement = after(statement, OpsAction.created_at, OpsAction.id, after_row)
        rows = (await self.db.execute(statement)).all()
        return [(row[0], row[1]) for row in (tuple(r) for r in rows)]
