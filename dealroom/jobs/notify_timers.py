"""The reminder and escalation timers of waits on a principal (rules NW1-NW3 in
``services/notify/waits.py``): a sweep of every runner, like the room watches. Due waits are
claimed under their row locks (``FOR UPDATE SKIP LOCKED``), checked against the rows they are
about, and stepped; a step that queues the escalation's delivery run wakes the workers."""

from __future__ import annotations

from datetime import timedelta

import structlog

from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.notifications import NotificationRepository
from dealroom.services.notify import waits

log = structlog.get_logger(__name__)

CLAIM_BATCH = 50


class WaitTimers:
    def __init__(self, runner: TurnRunner) -> None:
        self.deps = runner.deps

    async def poll(self) -> int:
        """Step every due wait, in batches; returns how many steps fired."""
        settings = self.deps.settings
        fired = 0
        while True:
            async with self.deps.unit() as unit:
                db = unit.db
                now = self.deps.clock.now()
                due = await NotificationRepository(db).waits_due(
                    remind_before=now - timedelta(hours=settings.remind_after_hours),
                    escalate_before=now - timedelta(hours=settings.escalate_after_hours),
                    limit=CLAIM_BATCH,
                )
                for wait in due:
                    stepped = await waits.step(db, settings, wait, now)
                    if stepped.runs:
                        await db.add(*stepped.runs)
                        unit.announce()
                    unit.publish(*stepped.published)
                    if stepped.fired:
                        fired += 1
                        log.info("wait_stepped", id=str(wait.id), state=wait.wait_state)
                await db.flush()
            if len(due) < CLAIM_BATCH:
                return fired
