"""AccUpdate: merge newer durable memory into a room before its next turn, and the batched
``syncStaleAccountMemory`` sweep for rooms with no turn coming (seed 000 "Standing knowledge is
merged in, and announced"; seed 002 layer 1).

Before a turn (``before_turn``) one indexed read tells whether any bound participant of the
room is due: its account's durable version is above ``participants.last_merged_memory_version``.
For each one that may be merged (D5: the host only in a deal room, never a scripted room), the
merge takes the room's memory lease (so Distil cannot be clobbered), merges the account's
changed leaves into that participant's branch only (D4, account wins), lets the AccUpdate
agent name branch leaves the merge made stale, and posts a MemoryMerged system line in that
participant's pane listing what changed. A merge that changes nothing only records the
version: no model call, no line.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents import acc_update
from dealroom.agents.acc_update import AccUpdateInput, AccUpdateOutput
from dealroom.agents.models.base import AgentName
from dealroom.domain import durable, firewall, service_parts
from dealroom.domain.seats import RoomKind, RoomMode
from dealroom.jobs.distil import LEASE_POLL_SECONDS, LEASE_POLLS, MemoryLease, holds
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.durable import DurableRepository, StaleParticipant
from dealroom.persistence.models import Flag, Participant, Room
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import RunRepository
from dealroom.services.clock import Clock
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus, new_run
from dealroom.services.turns.runs import RunnerDeps, system_line
from dealroom.services.unit_of_work import UnitOfWork, reading

log = structlog.get_logger(__name__)

Handler = Callable[[RunSnapshot], Awaitable[None]]


class LeaseBusy(Exception):
    """Another memory writer kept the room's lease: the merge is queued as its own run."""


@dataclass(frozen=True, slots=True)
class _Plan:
    branch_key: str
    merged: dict[str, Any]
    changes: list[durable.LeafChange]
    paths: list[str] | None
    document: dict[str, Any]
    version: int
    picks: dict[str, Any]


def _due(stale: StaleParticipant) -> bool:
    return durable.merge_due(RoomKind(stale.kind), RoomMode(stale.mode), stale.key)


class AccUpdate:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self.lease = MemoryLease(deps)

    # --- entry points ---------------------------------------------------------------------

    def before(self, handler: Handler) -> Handler:
        """``handler`` (the persona turn) with the room's due merges run first."""

        async def merged_first(run: RunSnapshot) -> None:
            if run.loaded is None or run.loaded.merge_maybe_due:
                await self.before_turn(run)
                # a merge may have changed the room's memory since the claim read it
                run = dataclasses.replace(run, loaded=None)
            await handler(run)

        return merged_first

    async def before_turn(self, run: RunSnapshot) -> None:
        async with reading(self.deps.sessionmaker) as db:
            stale = [s for s in await DurableRepository(db).stale_in_room(run.room_id) if _due(s)]
        for participant in stale:
            try:
                await self.merge(participant.participant_id, run.id)
            except LeaseBusy:
                await self._queue(participant.participant_id, run.room_id)
            except Exception:
                # The turn must still answer; the sweep or the next turn merges later.
                log.exception("acc_update_failed", room_id=str(run.room_id))

    async def __call__(self, run: RunSnapshot) -> None:
        """An ``acc_update`` run queued by the sweep (or by a turn that found the lease busy)."""
        try:
            await self.merge(run.participant_id, run.id)
        except LeaseBusy:
            await self._requeue(run)
            return
        async with self.deps.unit() as uow:
            row = await RunRepository(uow.db).by_id(run.id, lock=True)
            if row is not None and row.attempts == run.attempts:
                row.status, row.finished_at = RunStatus.DONE.value, self.deps.clock.now()

    # --- the merge ------------------------------------------------------------------------

    async def merge(self, participant_id: uuid.UUID, run_id: uuid.UUID) -> bool:
        """Merge one participant's account into its branch. True when the branch changed."""
        taken = await self._take(participant_id)
        if taken is None:
            return False  # the seat is gone
        token, room_id = taken
        released = False
        try:
            plan = await self._plan(participant_id)
            if plan is None:
                return False
            stale: list[str] = []
            site = CallSite(room_id, run_id, rows=[])
            if plan.changes:
                picked = plan.picks.get(AgentName.ACC_UPDATE.value)
                model = picked if isinstance(picked, str) and picked else None
                request = acc_update.build(
                    AccUpdateInput(
                        pane=plan.branch_key,
                        merged={c.path: c.new for c in plan.changes},
                        branch=plan.merged,
                    ),
                    model=model or self.deps.settings.acc_update_model,
                )
                generation = await self.deps.ledger.generate(request, site)
                output = generation.output
                assert isinstance(output, AccUpdateOutput)
                stale = acc_update.allowed_removals(output.stale, [c.path for c in plan.changes])
            try:
                changed = await self._apply(participant_id, token, room_id, plan, stale, site)
            except Exception:
                await self.deps.ledger.keep(site)
                raise
            released = True  # with the write
            return changed
        finally:
            if not released:
                await self.lease.release(room_id, token)

    async def _take(self, participant_id: uuid.UUID) -> tuple[int, uuid.UUID] | None:
        """The room's memory lease (waiting for another writer like Distil does), or None when
        the seat is gone; LeaseBusy when the lease never came free."""
        async with reading(self.deps.sessionmaker) as db:
            participant = await db.get(Participant, participant_id)
            if participant is None:
                return None
            room_id = participant.room_id
        for _ in range(LEASE_POLLS):
            token = await self.lease.acquire(room_id, f"acc_update:{participant_id}")
            if token is not None:
                return token, room_id
            await asyncio.sleep(LEASE_POLL_SECONDS)
        raise LeaseBusy(str(room_id))

    async def _plan(self, participant_id: uuid.UUID) -> _Plan | None:
        async with reading(self.deps.sessionmaker) as db:
            participant = await db.get(Participant, participant_id)
            if participant is None or participant.account_id is None:
                return None
            room = await db.get(Room, participant.room_id)
            if room is None or not durable.merge_due(
                RoomKind(room.kind), RoomMode(room.mode), participant.key
            ):
                return None  # D5
            memory = await DurableRepository(db).memory(participant.account_id)
            if memory is None or memory.version <= participant.last_merged_memory_version:
                return None
            last = participant.last_merged_memory_version
            # S1: a deal room merges the shared part and its own service's part, nothing else
            kind = RoomKind(room.kind)
            service, services = await ServiceRepository(db).scope(
                participant.account_id, room.service_id
            )
            document = service_parts.room_view(memory.document or {}, kind, service, services)
            paths = (
                None
                if last == 0
                else service_parts.room_paths(
                    await DurableRepository(db).paths_changed_since(participant.account_id, last),
                    kind,
                    service,
                    services,
                )
            )
            branch = (room.memory or {}).get(participant.key)
            merged, changes = durable.merge(
                branch if isinstance(branch, dict) else {}, document, paths
            )
            return _Plan(
                participant.key,
                merged,
                changes,
                paths,
                document,
                memory.version,
                dict(room.model_picks or {}),
            )

    async def _apply(
        self,
        participant_id: uuid.UUID,
        token: int,
        room_id: uuid.UUID,
        plan: _Plan,
        stale: list[str],
        site: CallSite,
    ) -> bool:
        deps = self.deps
        async with deps.unit() as uow:
            db = uow.db
            now = deps.clock.now()
            lease = await holds(db, room_id, token, now)
            if lease is None:
                raise LeaseBusy(f"memory lease of {room_id} lost")
            lease.holder, lease.expires_at = None, None  # released with the write
            room = await RoomRepository(db).locked(room_id)
            participant = await db.get(Participant, participant_id)
            if room is None or participant is None:
                return False  # the lease's release is committed by the unit
            memory = copy.deepcopy(dict(room.memory or {}))
            branch = memory.get(plan.branch_key)
            before = branch if isinstance(branch, dict) else {}
            merged, _ = durable.merge(before, plan.document, plan.paths)
            for path in durable.removable(stale):  # provenance P4: no limit named stale
                durable.set_leaf(merged, path, None)
            durable.prune(merged)
            held = await DispatchRepository(db).held_payloads(room_id)
            merged, dropped = durable.screen_public(  # D7: no way around the firewall
                merged,
                withheld=firewall.withheld_amounts(held),
                band_percent=self.deps.settings.firewall_band_percent,
            )
            changes = durable.diff(before, merged)  # D4: only this branch, account wins
            await DurableRepository(db).set_merged(participant.id, plan.version)
            if dropped:
                await db.add(
                    Flag(
                        room_id=room_id,
                        participant_id=participant.id,
                        run_id=site.run_id,
                        level="firewall",
                        evidence=durable.public_dropped(dropped, "merged"),
                        created_at=now,
                    )
                )
                log.warning("acc_update_public_dropped", room_id=str(room_id), leaves=dropped)
            if changes:
                memory[plan.branch_key] = merged
                room.memory = memory
                room.memory_version += 1
                room.memory_updated_at = now
                snapshot = RunSnapshot(
                    site.run_id or uuid.uuid4(),
                    room_id,
                    participant.id,
                    AgentName.ACC_UPDATE.value,
                    None,
                    None,
                    0,
                    0,
                )
                published = await system_line(
                    db,
                    deps.clock,
                    snapshot,
                    durable.merged_line(changes),
                    key=durable.merge_line_key(participant.id, plan.version),
                )
                if published is not None:
                    uow.publish(published)  # sent once the merge commits, never before
            await db.add(*site.rows)
        site.rows.clear()  # stored: nothing left for the failure path to keep
        log.info("acc_update_merged", room_id=str(room_id), leaves=len(changes))
        return bool(changes)

    # --- queued runs ----------------------------------------------------------------------

    async def _queue(self, participant_id: uuid.UUID, room_id: uuid.UUID) -> None:
        async with self.deps.unit() as uow:
            await uow.db.add(
                new_run(
                    room_id=room_id,
                    participant_id=participant_id,
                    agent=AgentName.ACC_UPDATE,
                    now=self.deps.clock.now(),
                )
            )
            uow.wake()

    async def _requeue(self, run: RunSnapshot) -> None:
        async with self.deps.unit() as uow:
            row = await RunRepository(uow.db).by_id(run.id, lock=True)
            if row is not None and row.status == RunStatus.RUNNING and row.attempts == run.attempts:
                row.status = RunStatus.QUEUED.value
                row.attempts -= 1
                row.not_before = self.deps.clock.now()
            uow.wake()


async def sync_stale_account_memory(
    sessionmaker: async_sessionmaker[AsyncSession], clock: Clock, batch: int
) -> int:
    """``syncStaleAccountMemory``: queue one AccUpdate run for up to ``batch`` participants
    whose account memory is newer than their room's last merge (D5 filters in the query), in
    three statements. Workers merge them like any run, so 10,000 stale rooms are 50 passes of
    cheap queueing, never one long stall; a pass queues nothing while a full batch is still
    waiting, so the run queue (and every worker's claim scan over it) stays short."""
    async with UnitOfWork(sessionmaker) as unit:
        db = unit.db
        repo = DurableRepository(db)
        if await repo.merges_waiting() >= batch:
            return 0  # the last batch is still being merged: the queue stays short
        stale = await repo.stale_batch(batch)
        now = clock.now()
        if stale:
            await db.add(
                *[
                    new_run(
                        room_id=s.room_id,
                        participant_id=s.participant_id,
                        agent=AgentName.ACC_UPDATE,
                        now=now,
                    )
                    for s in stale
                ]
            )
        return len(stale)
