"""The replay run: a claimed room's held effects performed in ``seq`` order (seed 002
"Incognito & Mid-Session Claiming": ``flushPendingEffects``).

Consecutive held sends from one pane to another are performed as one send composed of what
was said, in order, the latest last (``effects.coalesced``): the recipient answers the current
position once. The replay performs held rows in ``seq`` order through the choke point's
``perform``, one row per transaction under the room lock (held → performed with its effect,
so a row is performed exactly once however often a replay is re-run or raced). A row whose
effect queued runs (a delivery, Offer-Gen) is waited for before the next row goes out, so the
recipients see them in the original order. A replay cut off by a dead worker is re-queued when
its lease expires; the workers' sweep also re-queues the replay of any claimed room with rows
left and no replay run.
"""

from __future__ import annotations

import uuid

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.models.base import AgentName
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.effects import PendingEffectRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import RunRepository
from dealroom.persistence.seats import SeatRepository
from dealroom.services.clock import Clock
from dealroom.services.gate import effects, held_sends
from dealroom.services.gate.claims import LEFT, OUTSTANDING, replay_run
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, fence
from dealroom.services.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)


class ReplayTurn:
    """Performs a claimed room's held effects in ``seq`` order (a ``replay`` run)."""

    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def __call__(self, run: RunSnapshot) -> None:
        while await self._step(run):
            pass

    async def _step(self, run: RunSnapshot) -> bool:
        """One held row, in its own transaction. True when the next row may go now."""
        deps = self.deps
        async with deps.unit() as uow:
            db = uow.db
            row = await fence(db, run)
            now = deps.clock.now()
            await RoomRepository(db).lock(run.room_id)
            visitor = await SeatRepository(db).account_of(run.participant_id)
            left = await PendingEffectRepository(db).all_in(run.room_id, LEFT)
            head = left[0] if left else None
            if visitor is None or head is None:
                row.status, row.finished_at = RunStatus.DONE.value, now  # nothing (left) to do
                return False
            if head.status == effects.PERFORMED:
                if await _still_working(db, head.spawned_run_ids or []):
                    # The next row waits for this one's runs: finish, and look again shortly
                    # in a fresh run (a stale worker's claim can never pass for it).
                    row.status, row.finished_at = RunStatus.DONE.value, now
                    await db.add(
                        replay_run(
                            run.room_id,
                            run.participant_id,
                            deps.clock,
                            deps.settings.replay_poll_seconds,
                        )
                    )
                    return False
                head.status = effects.REPLAYED
                return True
            outbound = effects.Outbound(
                run.room_id, head.source_run_id, now, deps.settings, replay=True
            )
            # A held send was composed before the claim: the firewall screens it again against the
            # room as it is now, and the principal decides any match.
            room = await RoomRepository(db).by_id(run.room_id)
            seats = await RoomRepository(db).participants(run.room_id)
            outbound.screen = held_sends.screener(
                room.memory if room else {},
                {p.id: p.key for p in seats},
                await DispatchRepository(db).held(run.room_id),  # F6, as for live sends
                band_percent=deps.settings.firewall_band_percent,
            )
            # Consecutive held notes from one pane to another go as one: what the sender said,
            # in order, the latest last (a replay is one conversation, not a history).
            folded, effect = effects.coalesced(left)
            for row_folded in folded:
                row_folded.status, row_folded.performed_at = effects.REPLAYED, now
            if folded:
                head = left[len(folded)]
            await effects.perform(db, outbound, effect)
            host = next((p for p in seats if p.key == Seat.HOST.value), None)
            if outbound.screened and host is not None:
                held = held_sends.held_of(
                    outbound, {d.to_participant_id: "them" for d, _ in outbound.screened}
                )
                uow.publish(*await held_sends.notify(db, run.room_id, host, run.id, held, now))
            head.status = effects.PERFORMED if outbound.runs else effects.REPLAYED
            head.spawned_run_ids = [str(r.id) for r in outbound.runs]
            head.performed_at = now
            await db.add(*outbound.runs)
            uow.publish(*outbound.published)
            if outbound.runs:
                uow.announce()
            log.info("effect_replayed", room_id=str(run.room_id), seq=head.seq, kind=head.kind)
        return True


async def _still_working(db: Db, run_ids: list[str]) -> bool:
    if not run_ids:
        return False
    return await RunRepository(db).any_in([uuid.UUID(i) for i in run_ids], statuses=OUTSTANDING)


async def resume_replays(sessionmaker: async_sessionmaker[AsyncSession], clock: Clock) -> int:
    """The workers' sweep: a claimed room with rows left and no replay run queued or running
    gets one (its replay failed for good, or the claim's run was lost). A replay run cut off
    by a dead worker is re-queued by its lease, like any run."""
    async with UnitOfWork(sessionmaker) as unit:
        db = unit.db
        rows = await PendingEffectRepository(db).claimed_rooms_without_run(
            LEFT, AgentName.REPLAY.value, running=OUTSTANDING
        )
        for room_id, visitor_id in rows:
            await db.add(replay_run(room_id, visitor_id, clock))
        return len(rows)
