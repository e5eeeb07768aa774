"""The ops queue's alert sweep (``domain/ops_queue.py`` Q6): every runner looks for new high
items and writes each opted-in operator's OPERATOR_ALERT once; the notification's unique source
makes two runners sweeping at once write it once."""

from __future__ import annotations

import structlog

from dealroom.jobs.runner import TurnRunner
from dealroom.services.ops import queue

log = structlog.get_logger(__name__)


class QueueAlerts:
    def __init__(self, runner: TurnRunner) -> None:
        self.deps = runner.deps

    async def poll(self) -> int:
        """Alert operators of the new high items; returns how many alerts were written."""
        async with self.deps.unit() as unit:
            written = await queue.alert_new_high(unit.db, self.deps.clock.now())
            unit.publish(*written.published)
        if written.rows:
            log.info("ops_queue_alerts", written=len(written.rows))
        return len(written.rows)
