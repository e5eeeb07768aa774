"""Model spend summed from the ledger (``model_calls``) for operators: by agent, model or UTC day,
for a room, an account's rooms or a page of runs. A call whose model is missing from the price
table is counted as ``unpriced``, never summed as free (``persistence/spend.py`` sums it)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from dealroom.persistence.db import Db
from dealroom.persistence.spend import Spend, SpendBy, SpendRepository

__all__ = ["Spend", "SpendBy", "spend", "total_spend"]


async def spend(
    db: Db,
    *,
    by: SpendBy,
    room_id: uuid.UUID | None = None,
    account_id: uuid.UUID | None = None,
    limit: int = 366,
) -> list[Spend]:
    """Spend grouped by agent, model or UTC day (newest day first), for one room or for all
    rooms an account hosts."""
    return await SpendRepository(db).grouped(
        by, room_id=room_id, account_id=account_id, limit=limit
    )


async def total_spend(db: Db, room_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Spend]:
    return await SpendRepository(db).for_rooms(room_ids)
