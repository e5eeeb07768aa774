"""A pane an operator has taken over gets no agent reply: the persona's runs there, and the login
gate's line, finish at once as no-ops, recorded as silenced. Distil still records the pane as
usual."""

from __future__ import annotations

from dealroom.jobs.handler import Handler
from dealroom.persistence.runs import RunRepository
from dealroom.services.ops.actions import taken_over
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps

SILENCED = "silenced: an operator has taken over this pane"


def silenced_when_taken_over(handler: Handler, deps: RunnerDeps) -> Handler:
    async def run(snapshot: RunSnapshot) -> None:
        if snapshot.loaded is not None and not snapshot.loaded.taken_over:
            await handler(snapshot)  # the claim read that no operator holds the pane
            return
        async with deps.unit() as uow:
            silenced = await taken_over(uow.db, snapshot.participant_id)
            if not silenced:
                uow.discard()  # only read: the handler runs in its own unit
            else:
                row = await RunRepository(uow.db).by_id(snapshot.id, lock=True)
                if (
                    row is not None
                    and row.status == RunStatus.RUNNING
                    and row.attempts == snapshot.attempts
                ):
                    row.status, row.finished_at = RunStatus.DONE.value, deps.clock.now()
                    row.no_op, row.error = True, SILENCED
        if not silenced:
            await handler(snapshot)

    return run
