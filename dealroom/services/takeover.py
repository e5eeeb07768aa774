"""A pane an operator has taken over gets no agent reply (issue 16): the persona's runs there,
and the login gate's line, finish at once as no-ops, recorded as silenced. Distil still
records the pane as usual."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.persistence.db import Db
from dealroom.persistence.runs import RunRepository
from dealroom.services.clock import Clock
from dealroom.services.ops_actions import taken_over
from dealroom.services.turn_context import RunSnapshot
from dealroom.services.turns import Handler, RunStatus

SILENCED = "silenced: an operator has taken over this pane"


def silenced_when_taken_over(
    handler: Handler, sessionmaker: async_sessionmaker[AsyncSession], clock: Clock
) -> Handler:
    async def run(snapshot: RunSnapshot) -> None:
        if snapshot.loaded is not None and not snapshot.loaded.taken_over:
            await handler(snapshot)  # the claim read that no operator holds the pane
            return
        db = Db(sessionmaker)
        try:
            if await taken_over(db, snapshot.participant_id):
                row = await RunRepository(db).by_id(snapshot.id, lock=True)
                if (
                    row is not None
                    and row.status == RunStatus.RUNNING
                    and row.attempts == snapshot.attempts
                ):
                    row.status, row.finished_at = RunStatus.DONE.value, clock.now()
                    row.no_op, row.error = True, SILENCED
                await db.commit()
                return
            await db.rollback()
        finally:
            await db.close()
        await handler(snapshot)

    return run
