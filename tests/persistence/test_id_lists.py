"""``id_lists.rows_for``: a read keyed by thousands of ids is one statement on PostgreSQL (the ids
as one array) and one per chunk of ``CHUNK`` on SQLite, with the same rows either way."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence import id_lists
from dealroom.persistence.db import Db
from dealroom.persistence.stream_ends import pane_ends
from tests.support.clock import ManualClock
from tests.support.rooms import guest_pane


async def test_a_read_of_many_ids_is_one_statement_on_postgresql_and_chunks_on_sqlite(
    engine: AsyncEngine, db: Db, clock: ManualClock, count_statements: Callable[[], Any]
) -> None:
    pane = await guest_pane(engine, clock, "idlists")
    strangers = [uuid.uuid4() for _ in range(2 * id_lists.CHUNK + 1)]
    with count_statements() as seen:
        ends = await pane_ends(db, [*strangers, pane.id])
    assert ends == {pane.id: 0}
    on_postgresql = engine.dialect.name == "postgresql"
    assert len(seen) == (1 if on_postgresql else 3)
    if on_postgresql:
        assert "ANY" in seen[0]
