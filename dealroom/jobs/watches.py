"""Room watches: the debounced "room went quiet" signal (seed 000 "A guard audits quiet
rooms"; ARCHITECTURE "Background jobs").

- QW1  Every reply re-arms its room's watch in the reply's own transaction (``arm``): the
       generation goes up and the quiet window restarts. A reply caused by the Guard's own
       push does not re-arm (the caller skips it), so the Guard cannot wake itself.
- QW2  A step fires only when its window has passed since the last arming and the
       generation it was claimed for is still the row's; it is decided under the row lock,
       so a stale or duplicated timer — in any process — fires nothing.
- QW3  One chain per room: the Guard first (``DEALROOM_GUARD_QUIET_SECONDS``), then the
       curator step (``DEALROOM_CURATOR_QUIET_SECONDS``), then nothing until the next reply.
- QW4  Watches are rows, so a restart loses none; the injected clock decides what is due.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.domain.seats import RoomMode, Seat
from dealroom.jobs.curator import CuratorStep, Quiet, arvist_step
from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, RoomWatch
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.watches import CURATOR, DONE, GUARD, WatchRepository
from dealroom.services.turns.queue import new_run

log = structlog.get_logger(__name__)

CLAIM_BATCH = 50


def arm(db: Db, room_id: uuid.UUID, now: datetime) -> None:
    """QW1: re-arm the room's watch; the caller holds the room's row lock. Sent with the
    unit's deferred writes (``Db.defer``): by its next statement or its commit."""
    WatchRepository(db).arm_later(room_id, now)


class WatchFirer:
    """Fires due watch steps as ``agent_runs`` rows; runs as a sweep of every runner."""

    def __init__(self, runner: TurnRunner, curator: CuratorStep | None = None) -> None:
        self.runner = runner
        self.deps = runner.deps
        self.curator = curator or arvist_step(runner.handles)

    def _windows(self, now: datetime) -> tuple[datetime, datetime]:
        settings = self.deps.settings
        return (
            now - timedelta(seconds=settings.guard_quiet_seconds),
            now - timedelta(seconds=settings.curator_quiet_seconds),
        )

    async def poll(self) -> int:
        """Claim the due watches and fire them, in batches; returns how many steps fired."""
        fired = 0
        while True:
            async with self.deps.unit() as unit:
                now = self.deps.clock.now()
                guard_before, curator_before = self._windows(now)
                due = await WatchRepository(unit.db).claim_due(
                    guard_before=guard_before, curator_before=curator_before, limit=CLAIM_BATCH
                )
                for watch in due:
                    if await self._fire(unit.db, watch, watch.generation, now):
                        unit.announce()
            fired += len(due)
            if len(due) < CLAIM_BATCH:
                return fired

    async def fire(self, room_id: uuid.UUID, generation: int) -> bool:
        """QW2: fire the room's due step for ``generation`` (a timer that was set for it).
        False — and nothing queued — when the watch moved on or nothing is due."""
        async with self.deps.unit() as unit:
            db = unit.db
            watch = await WatchRepository(db).locked(room_id)
            if watch is None:
                unit.discard()
                return False
            now = self.deps.clock.now()
            guard_before, curator_before = self._windows(now)
            due = (watch.step == GUARD and watch.armed_at <= guard_before) or (
                watch.step == CURATOR and watch.armed_at <= curator_before
            )
            if not due or watch.generation != generation:
                unit.discard()
                return False
            if await self._fire(db, watch, generation, now):
                unit.announce()
        return True

    async def _fire(
        self, db: Db, watch: RoomWatch, generation: int, now: datetime
    ) -> list[AgentRun]:
        """One step of the chain, under the watch's row lock (QW2, QW3)."""
        if watch.generation != generation:
            return []
        participants = await RoomRepository(db).participants(watch.room_id)
        runs: list[AgentRun] = []
        if watch.step == GUARD:
            host = next((p for p in participants if p.key == Seat.HOST.value), None)
            if host is not None:
                # The Guard runs in the host's pane: one at a time per room, like Offer-Gen.
                runs.append(
                    new_run(
                        room_id=watch.room_id,
                        participant_id=host.id,
                        agent=AgentName.GUARD,
                        now=now,
                        watch_generation=generation,
                    )
                )
            watch.step = CURATOR
        elif watch.step == CURATOR:
            mode = await RoomRepository(db).mode(watch.room_id)
            assert mode is not None  # the watch is the room's (a cascading foreign key)
            quiet = Quiet(watch.room_id, RoomMode(mode), generation, participants, now)
            runs = self.curator(quiet)
            watch.step = DONE
        watch.fired_at = now
        if runs:
            await db.add(*runs)
        else:
            await db.flush()
        log.info(
            "room_watch_fired",
            room_id=str(watch.room_id),
            generation=generation,
            next_step=watch.step,
            runs=len(runs),
        )
        return runs
