"""A Distil run: record facts from one pane's current session as targeted changes, under the
room's memory lease with a fencing token (ARCHITECTURE "Room memory")."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

import structlog
from sqlalchemy.exc import IntegrityError

from dealroom.agents import distil
from dealroom.agents.distil import DistilInput, DistilOutput
from dealroom.agents.models.base import AgentName
from dealroom.agents.render import Line
from dealroom.domain import (
    double_texts,
    firewall,
    instructions,
    memory_edits,
    memory_records,
    provenance,
    visibility,
)
from dealroom.domain import memory as memdoc
from dealroom.domain.errors import DomainError
from dealroom.domain.seats import AuthorKind, RoomKind, on_host_side
from dealroom.jobs.arvist import home_arvist_run
from dealroom.jobs.perceive import Perception
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.leases import Granted, LeaseRepository
from dealroom.persistence.models import AgentRun, Flag, Lease, Room
from dealroom.persistence.operator_tools import change_rows
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import RunRepository
from dealroom.services.turns.context import ClaimLoad, RunSnapshot, TurnContext, load
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, StaleRun, fence, model_for
from dealroom.services.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)

LEASE_POLLS = 100
LEASE_POLL_SECONDS = 0.05


class MemoryLease:
    """The room memory writer's lease. A grant bumps ``token``; a write checks its token is
    still the current one, so a writer whose lease expired and was re-granted cannot write."""

    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def acquire(self, room_id: uuid.UUID, holder: str) -> int | None:
        try:
            async with UnitOfWork(self.deps.sessionmaker) as unit:
                token = await self.grant(unit.db, room_id, holder)
                if token is None:
                    unit.discard()
                return token
        except IntegrityError:
            return None  # the room is gone (the lease row's foreign key)

    async def grant(self, db: Db, room_id: uuid.UUID, holder: str) -> int | None:
        """Take the lease inside the caller's transaction (visible once it commits)."""
        now, until = self._term()
        return await LeaseRepository(db).grant(room_id, holder, now, until)

    async def grant_reading(self, db: Db, room_id: uuid.UUID, holder: str) -> Granted | None:
        """Take the lease and read the room's head (its memory as the previous holder left
        it) in the same statement, inside the caller's transaction."""
        now, until = self._term()
        return await LeaseRepository(db).grant_reading(room_id, holder, now, until)

    def _term(self) -> tuple[datetime, datetime]:
        now = self.deps.clock.now()
        return now, now + timedelta(seconds=self.deps.settings.memory_lease_seconds)

    async def release(self, room_id: uuid.UUID, token: int) -> None:
        async with UnitOfWork(self.deps.sessionmaker) as unit:
            db = unit.db
            await LeaseRepository(db).release(room_id, token)


def _cited(ctx: TurnContext) -> list[Line]:
    """The host pane's session with message ids: a limit records the message it came from
    (memory M12). Other panes record no limits, and their lines carry no ids."""
    if not on_host_side(ctx.pane_key) or len(ctx.session_ids) != len(ctx.session):
        return list(ctx.session)
    return [
        Line(line.author, line.body, id=id_, relayed_from=line.relayed_from)
        for line, id_ in zip(ctx.session, ctx.session_ids, strict=True)
    ]


def principal_said(ctx: TurnContext) -> list[provenance.Said]:
    """Provenance P1-P4: the messages the pane's principal wrote in the session the writer read
    (never an agent's line or a relay), with their ids."""
    if len(ctx.session_ids) != len(ctx.session):
        return []
    return [
        provenance.Said(id_, line.body)
        for line, id_ in zip(ctx.session, ctx.session_ids, strict=True)
        if line.author == AuthorKind.PARTICIPANT.value and line.relayed_from is None
    ]


async def holds(db: Db, room_id: uuid.UUID, token: int, now: datetime) -> Lease | None:
    """The lease row, locked, if ``token`` is still the current, unexpired grant."""
    lease = await LeaseRepository(db).locked(room_id)
    if (
        lease is not None
        and lease.token == token
        and lease.expires_at is not None
        and lease.expires_at > now
    ):
        return lease
    return None


class DistilTurn:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self.lease = MemoryLease(deps)
        self.perception = Perception(deps)

    async def __call__(self, run: RunSnapshot) -> None:
        taken = await self._take(run)
        for _ in range(LEASE_POLLS):
            if taken is not None:
                break
            await asyncio.sleep(LEASE_POLL_SECONDS)  # another writer is finishing
            taken = await self._take(run)
        if taken is None:
            await self._wait_for_lease(run)
            return
        token, ctx = taken
        released = False
        try:
            if ctx is None:
                await self._finish(run, no_op=True)  # the room or pane is gone
            else:
                released = await self._run(run, token, ctx)
        finally:
            if not released:
                await self.lease.release(run.room_id, token)

    async def _take(self, run: RunSnapshot) -> tuple[int, TurnContext | None] | None:
        """Take the memory lease and read the run's context in one transaction. The grant reads the
        room's head (memory, kind, picks, the offer's stage) with it, so the load reads only the
        pane; the memory is the one the lease's previous holder wrote, which the claim's read
        (taken before the lease) may not be."""
        try:
            async with UnitOfWork(self.deps.sessionmaker) as unit:
                db = unit.db
                granted = await self.lease.grant_reading(db, run.room_id, str(run.id))
                if granted is None:
                    unit.discard()
                    return None
                head = granted.room
                claimed = dataclasses.replace(
                    run,
                    loaded=ClaimLoad(
                        room_kind=head.kind,
                        model_picks=head.model_picks,
                        memory=head.memory,
                        memory_version=head.memory_version,
                        # the persona's checks, read by the claim; Distil reads neither
                        taken_over=run.loaded.taken_over if run.loaded else False,
                        merge_maybe_due=run.loaded.merge_maybe_due if run.loaded else False,
                        offer_status=head.offer_status,
                        offer_brand_approved_at=head.offer_brand_approved_at,
                    ),
                )
                ctx = await load(
                    db,
                    claimed,
                    host_facts=False,
                    claimed=True,
                )
                return granted.token, ctx
        except IntegrityError:
            return None  # the room is gone (the lease row's foreign key)

    async def _run(self, run: RunSnapshot, token: int, ctx: TurnContext) -> bool:
        deps = self.deps
        pane = ctx.pane_key
        # What the pane's links say, as that participant's words (one read per message: the
        # persona's perception of the same message is shared, jobs/perceive.py).
        session = await self.perception.for_writer(run, ctx, _cited(ctx))
        request = distil.build(
            DistilInput(
                room_kind=ctx.kind.value,
                pane=pane,
                represents=ctx.represents,
                speaking_with=ctx.speaking_with,
                # The writer of a visitor pane never sees host-private parts either, so it
                # cannot copy them into `deal` (seed 002 layer 2).
                memory=visibility.visible_memory(ctx.memory, pane=pane, room_kind=ctx.kind),
                session=session,
                dispatches=ctx.deliveries_for(pane),
                writable=memdoc.writable_prefixes(pane, ctx.kind),
                stage=ctx.stage,
            ),
            model=model_for(deps, AgentName.DISTIL, ctx.model_picks),
        )
        site = CallSite(ctx.room_id, run.id, rows=[])
        generation = await deps.ledger.generate(request, site)
        output = generation.output
        assert isinstance(output, DistilOutput)
        # DT1: Distil read the later posts of a burst too; their own Distil runs end with this.
        later = double_texts.later_posts(
            [line.author for line in ctx.session],
            ctx.session_ids,
            str(run.trigger_message_id) if run.trigger_message_id else None,
            deps.settings.double_text,
        )
        try:
            await self._apply(
                run,
                token,
                pane,
                ctx.kind,
                output,
                site,
                later=[uuid.UUID(ctx.session_ids[i]) for i in later],
                said=principal_said(ctx),
            )
        except Exception:
            await deps.ledger.keep(site)  # billed even though the write did not happen
            raise
        return True  # the lease was released with the write

    async def _apply(
        self,
        run: RunSnapshot,
        token: int,
        pane: str,
        kind: RoomKind,
        output: DistilOutput,
        site: CallSite,
        *,
        later: Sequence[uuid.UUID] = (),
        said: Sequence[provenance.Said] = (),
    ) -> None:
        """The fenced write (three statements on PostgreSQL): the lease's release, which is the
        fencing check and takes the room's row lock and reads its memory; the held sends; then,
        deferred to the commit and sent as one statement, the run's finish, which is the stale-run
        check (``StaleRun`` at the commit), the memory's write if it changed and the ledger's row
        (other rows, when there are any, in one flush before them). A failed check raises and the
        unit rolls back, the release with it. Lock order: lease, room, run (the Guard and AccUpdate
        take lease, room too; the persona room, run)."""
        deps = self.deps
        async with deps.unit() as uow:
            db = uow.db
            now = deps.clock.now()
            room = await LeaseRepository(db).release_locking(run.room_id, token, now)
            if room is None:
                raise StaleRun(f"memory lease lost by {run.id}")  # fencing: retried later
            if room.kind is None or room.mode is None:
                raise StaleRun(f"room of {run.id} is gone")
            before = room.memory
            held = await DispatchRepository(db).held_payloads(run.room_id)
            applied = memdoc.apply_changes(
                before,
                [memdoc.Change(memdoc.Op(c.op), c.path, c.value) for c in output.changes],
                allowed=memdoc.writable_prefixes(pane, kind),
                withheld=firewall.withheld_amounts(held),  # firewall F6
                said=said,  # memory M15, M16: what the principal said, for provenance
                band_percent=self.deps.settings.firewall_band_percent,
            )
            # An overlong claim is the writer's mistake: skipped, the rest kept (M5).
            claims = [c for c in output.claims if len(c) <= memdoc.MAX_VALUE_CHARS]
            document = memory_records.record_claims(applied.document, pane, claims)
            for decision in output.principal_decisions:
                if provenance.instruction_source(decision.instruction, said) is None:
                    # P3: a figure no message of the principal's names is the writer's own; an
                    # instruction would spare it from the firewall (F4) and C5.
                    log.warning("principal_decision_unsourced", key=decision.key[:80])
                    continue
                try:
                    # Keyed by side as well: one side's writer can never replace the
                    # instruction the other side's principal gave.
                    key = (
                        decision.key
                        if decision.key.startswith(f"{pane}-")
                        else (f"{pane}-{decision.key}")
                    )
                    entry = memdoc.value_at(document, (memdoc.PENDING_DECISIONS, key))
                    source = instructions.source(decision.instruction, said)
                    if instructions.read_again(
                        entry, decision.question, decision.instruction, source
                    ):
                        continue  # PI4: recorded already; re-reading renews nothing
                    document = memory_records.record_principal_decision(
                        document, key, pane, decision.question, decision.instruction, source
                    )
                except DomainError:
                    # A malformed decision key is the writer's mistake: skip it, keep the rest.
                    log.warning("principal_decision_rejected", key=decision.key[:80])
            # PI2, PI3: an instruction whose terms this write (or an earlier one) moved lapses.
            document = instructions.lapse(document)
            rows: list[object] = []  # inserted together, in one flush
            if output.frustration is not None:
                rows.append(
                    Flag(
                        room_id=run.room_id,
                        participant_id=run.participant_id,
                        run_id=run.id,
                        level=output.frustration.level,
                        evidence=output.frustration.evidence[:2000],
                        created_at=now,
                    )
                )
            changed = document != before
            runs = RunRepository(db)
            error = None
            if applied.rejected:
                # Kept on the run for operators: what the writer tried and was refused.
                refused = "; ".join(f"{r.change.path} ({r.reason})" for r in applied.rejected)
                error = f"rejected: {refused}"[:2000]
            no_op = not changed and output.frustration is None
            # Another worker owns the run: StaleRun where the deferred writes go (by the
            # commit), and nothing is kept.
            runs.done_later(
                run.id,
                run.attempts,
                now,
                no_op=no_op,
                error=error,
                stale=lambda: StaleRun(str(run.id)),
            )
            if later:
                await runs.absorb(run.participant_id, AgentName.DISTIL.value, later, now)
            promote = None
            if changed:
                # A live home room promotes the host sitting right after Distil (docs/DECISIONS.md,
                # "When Arvist runs").
                promote = await home_arvist_run(
                    db, run.room_id, room.kind, room.mode, run.participant_id, now
                )
                # with the ledger's row at the commit, in one statement (Db.defer)
                runs.write_memory_later(run.room_id, document, now)
                rows.extend(  # memory_edits ME3: each changed leaf, with the run that wrote it
                    change_rows(
                        run.room_id,
                        room.memory_version + 1,
                        memory_edits.changed_leaves(before, document),
                        agent=AgentName.DISTIL.value,
                        run_id=run.id,
                        now=now,
                    )
                )
            public = [r for r in applied.rejected if r.reason.startswith(memdoc.PUBLIC_REFUSAL)]
            if public:  # M13: a host.public write that would reveal private values
                rows.append(
                    Flag(
                        room_id=run.room_id,
                        participant_id=run.participant_id,
                        run_id=run.id,
                        level="firewall",
                        evidence=f"{len(public)} host.public write(s) refused: private values",
                        created_at=now,
                    )
                )
            if promote is not None:
                rows.append(promote)
                uow.wake()  # the promoted Arvist run, once committed
            await db.add(*rows)
            await db.insert(site.rows, later=True)  # the ledger's rows, without a flush
        site.rows.clear()  # stored: nothing left for the failure path to keep

    async def _finish(self, run: RunSnapshot, *, no_op: bool) -> None:
        await finish_run(self.deps, run, no_op=no_op)

    async def _wait_for_lease(self, run: RunSnapshot) -> None:
        await requeue_for_lease(self.deps, run)


async def fenced_write(
    db: Db, run: RunSnapshot, token: int, now: datetime
) -> tuple[AgentRun, Room]:
    """Start the Guard's write: the run is still this claim, the lease is still this grant
    (fencing; it is released with the write), and the room's row is locked. (Distil's write
    does the same in fewer statements: ``DistilTurn._apply``.)"""
    row = await fence(db, run)
    lease = await holds(db, run.room_id, token, now)
    if lease is None:
        raise StaleRun(f"memory lease lost by {run.id}")  # fencing: retried later
    lease.holder, lease.expires_at = None, None  # released with the write
    # The room row lock before reading memory: a persona applying its plan in between would
    # otherwise be overwritten (the writes are read-modify-write of one JSON).
    room = await RoomRepository(db).locked(run.room_id)
    assert room is not None
    return row, room


async def finish_run(deps: RunnerDeps, run: RunSnapshot, *, no_op: bool) -> None:
    """Mark a run done (while it is still this claim) with nothing to apply."""
    async with deps.unit() as uow:
        row = await RunRepository(uow.db).by_id(run.id, lock=True)
        if row is not None and row.attempts == run.attempts:
            row.status, row.finished_at = RunStatus.DONE.value, deps.clock.now()
            row.no_op = no_op


async def requeue_for_lease(deps: RunnerDeps, run: RunSnapshot) -> None:
    """Another writer holds the room's memory: try again shortly, without spending an
    attempt."""
    async with deps.unit() as uow:
        row = await RunRepository(uow.db).by_id(run.id, lock=True)
        if (
            row is not None
            and row.status == RunStatus.RUNNING
            and row.attempts == run.attempts  # still this claim, not a later one
        ):
            row.status = RunStatus.QUEUED.value
            row.attempts -= 1
            row.not_before = deps.clock.now()
        uow.wake()
