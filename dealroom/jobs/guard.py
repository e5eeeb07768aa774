"""A Guard run (seed 000 "A guard audits quiet rooms").

Fired by the room watch once the room has been quiet for ``DEALROOM_GUARD_QUIET_SECONDS``.
It waits for the room's memory lease (Distil's), takes it, reads the whole room, asks the
Guard, and applies the repairs through the existing write paths, with the lease's fencing
token, in one transaction:

- G1 A run whose watch generation is stale (a reply re-armed the room since it fired, or
     while it thought) does nothing.
- G2 Repairs: a send through ``services.gate.sends.code_send`` into the outbound choke point (the
     one every persona send takes: guest gate, pair cap, firewall), a goal reopened (the Guard
     never rules a goal met, blocked or abandoned), a targeted memory change under the
     participants' branches or ``deal``, a stale plan cleared. Nothing else.
- G3 The Guard reads the host's private rules, so each of its sends to a visitor-facing pane
     is screened like a persona's (``held_sends.screen``: the firewall's F1-F6 over the
     substance and the payload, against the memory it audited and the sends still held). A
     send from the host's pane that matches is held for the principal exactly like a
     persona's: the host's pane asks, and only the principal's explicit yes releases it. A
     correction in a visitor-facing pane that matches is refused (no principal can release
     it), never softened.
- G4 Host-side sends that crossed without a ruling since the last audit are checked against
     the host's private values as memory holds them now; one that carried any raises an
     operator flag. The firewall screens every such send before it crosses, so what is left
     is a send that crossed before memory held the value (the host's agent passed on a
     figure the principal stated before Distil filed it as a limit). A send the principal
     released has been asked about and flagged already, and is not flagged again.
- G5 Every audit leaves one verdict row: healthy, repaired (with its edits) or unrepaired.
     A healthy audit changes nothing in the room (the run is ``no_op``).
- G6 Typed crossings hold for the Guard too: its send from the host's pane is free text, held
     for the principal's yes (``held_sends`` C6); its correction in a visitor-facing pane uses
     only the words that side has been shown and the stage vocabulary
     (``guard_repairs.CORRECTION_WORDS``), and its memory changes where a visitor reads state
     only what that side's lines show (memory M17). A paraphrase of a private rule has no value
     the firewall knows, so these rules, not the firewall, keep it on the host's side.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy.exc import IntegrityError

from dealroom.agents import guard
from dealroom.agents.guard import GuardInput, GuardOutput, PaneAudit
from dealroom.agents.models.base import AgentName
from dealroom.agents.render import Party
from dealroom.domain import memory as memdoc
from dealroom.domain import memory_edits, memory_records, provenance, visibility
from dealroom.domain.seats import AuthorKind, Seat
from dealroom.jobs.distil import (
    LEASE_POLL_SECONDS,
    LEASE_POLLS,
    MemoryLease,
    fenced_write,
    finish_run,
    requeue_for_lease,
)
from dealroom.jobs.guard_repairs import GuardRepairs, Outcome
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.models import (
    Dispatch,
    GuardVerdict,
    Participant,
    Room,
)
from dealroom.persistence.operator_tools import OperatorToolsRepository
from dealroom.persistence.ops import VerdictRepository
from dealroom.persistence.runs import TranscriptRepository
from dealroom.persistence.watches import WatchRepository
from dealroom.services.gate import effects, held_sends
from dealroom.services.notify import owed as notify_owed
from dealroom.services.offers.reads import room_stage
from dealroom.services.turns.context import (
    RECENT_DISPATCHES,
    RunSnapshot,
    lines_of,
    names_of,
    people,
)
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, model_for
from dealroom.services.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)


@dataclass
class Audit:
    """What the Guard read, with what code needs to apply its answer."""

    inputs: GuardInput
    picks: dict[str, Any]
    participants: list[Participant]
    unruled: list[Dispatch]
    """G4: host-side sends without a ruling since the last audit."""
    held: list[Dispatch]
    """F6: the sends the firewall still holds for the principal; their figures stay private."""


class GuardTurn:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self.lease = MemoryLease(deps)
        self.repairs = GuardRepairs(deps.settings)

    async def __call__(self, run: RunSnapshot) -> None:
        taken = await self._take(run)
        for _ in range(LEASE_POLLS):
            if taken is not None:
                break
            await asyncio.sleep(LEASE_POLL_SECONDS)  # Distil is writing: wait for it
            taken = await self._take(run)
        if taken is None:
            await self._requeue(run)
            return
        token, audit = taken
        try:
            if audit is None:
                await self._finish(run)  # G1, or the room is gone
                return
            site = CallSite(run.room_id, run.id, rows=[])
            try:
                request = guard.build(
                    audit.inputs, model=model_for(self.deps, AgentName.GUARD, audit.picks)
                )
                generation = await self.deps.ledger.generate(request, site)
                output = generation.output
                assert isinstance(output, GuardOutput)
                await self._apply(run, token, audit, output, site)
            except Exception:
                await self.deps.ledger.keep(site)
                raise
        finally:
            await self.lease.release(run.room_id, token)  # a no-op once the write released it

    # --- reading the room -----------------------------------------------------------------

    async def _take(self, run: RunSnapshot) -> tuple[int, Audit | None] | None:
        """Take the memory lease and read the room in one transaction."""
        try:
            async with UnitOfWork(self.deps.sessionmaker) as unit:
                token = await self.lease.grant(unit.db, run.room_id, str(run.id))
                if token is None:
                    unit.discard()
                    return None
                return token, await self._load(unit.db, run)
        except IntegrityError:
            return None  # two first writers raced to create the lease row

    async def _spoke_again(self, db: Db, run: RunSnapshot) -> bool:
        """G1: the room's watch moved on from the generation this run fired for."""
        if run.watch_generation is None:
            return False
        watch = await WatchRepository(db).by_room(run.room_id)
        return watch is None or watch.generation != run.watch_generation

    async def _load(self, db: Db, run: RunSnapshot) -> Audit | None:
        if await self._spoke_again(db, run):
            return None  # G1: the room spoke again; a later quiet audits it
        room = await db.get(Room, run.room_id)
        if room is None:
            return None
        participants, accounts = await people(db, room.id)
        names = names_of(participants, accounts)
        memory = dict(room.memory or {})
        transcripts = TranscriptRepository(db)
        dispatches = DispatchRepository(db)
        keys = {p.id: p.key for p in participants}
        panes: list[PaneAudit] = []
        for p in participants:
            messages = await transcripts.current_session(p.id)
            last = next((m for m in reversed(messages) if m.author_kind == AuthorKind.AGENT), None)
            sent_to: list[str] = []
            if last is not None and last.client_message_id:
                source = _run_of(last.client_message_id)
                if source is not None:
                    sent_to = [
                        keys.get(d.to_participant_id, "?") for d in await dispatches.of_run(source)
                    ]
            panes.append(
                PaneAudit(
                    key=p.key,
                    name=names[p.key],
                    session=await lines_of(db, messages, participants, names),
                    plan=memory_records.own_plan(memory, p.key),
                    last_reply=last.body if last is not None else None,
                    last_reply_sent_to=sent_to,
                )
            )
        record = [
            {
                "from": keys.get(d.from_participant_id, "?"),
                "to": keys.get(d.to_participant_id, "?"),
                "substance": d.substance,
                "status": d.status,
                "origin": (d.payload or {}).get("origin", "agent"),
                "ruling": (d.payload or {}).get("ruling"),
            }
            for d in await dispatches.recent(room.id, RECENT_DISPATCHES)
        ]
        host = next((p for p in participants if p.key == Seat.HOST.value), None)
        return Audit(
            inputs=GuardInput(
                room_kind=room.kind,
                represents=Party(Seat.HOST.value, names.get(Seat.HOST.value, "the host")),
                panes=panes,
                memory={k: v for k, v in memory.items() if k != memdoc.PLANS},
                dispatches=record,
                stage=await room_stage(db, room.id),
            ),
            picks=dict(room.model_picks or {}),
            participants=participants,
            unruled=await self._unruled(db, room.id, host),
            held=await dispatches.held(room.id),
        )

    async def _unruled(
        self, db: Db, room_id: uuid.UUID, host: Participant | None
    ) -> list[Dispatch]:
        """G4: host-side sends to another pane that carried free text (no ruling, not a code-made
        send) since the previous audit. A send the firewall still holds for the principal has not
        crossed; one the principal released crossed on their explicit yes to a question that named
        what it reveals (with a firewall flag)."""
        if host is None:
            return []
        since = await VerdictRepository(db).last_at(room_id)
        sent = await DispatchRepository(db).sent_to_others(
            room_id, host.id, since=since, excluding=effects.FIREWALL_HELD
        )
        return [
            d
            for d in sent
            if not any((d.payload or {}).get(k) for k in ("ruling", "origin", "released"))
        ]

    # --- applying the verdict -------------------------------------------------------------

    async def _apply(
        self, run: RunSnapshot, token: int, audit: Audit, output: GuardOutput, site: CallSite
    ) -> None:
        async with self.deps.unit() as uow:
            outcome = await self._write(uow, run, token, audit, output, site)
        site.rows.clear()  # stored: nothing left for the failure path to keep
        if outcome is not None:
            log.info("guard_verdict", room_id=str(run.room_id), verdict=outcome.verdict)

    async def _write(
        self,
        uow: UnitOfWork,
        run: RunSnapshot,
        token: int,
        audit: Audit,
        output: GuardOutput,
        site: CallSite,
    ) -> Outcome | None:
        """The verdict's writes in ``uow``; None when the room moved on (G1 again)."""
        db = uow.db
        now = self.deps.clock.now()
        row, room = await fenced_write(db, run, token, now)
        if await self._spoke_again(db, run):
            # G1 again, under the room lock: a reply came in while the Guard thought, so
            # the room it audited is not the room there is. A later quiet audits it.
            row.status, row.finished_at, row.no_op, row.error = (
                RunStatus.DONE.value,
                now,
                True,
                None,
            )
            await db.add(*site.rows)
            log.info("guard_stale", room_id=str(run.room_id))
            return None
        before = dict(room.memory or {})
        outcome = Outcome(findings=[f"{f.pane}: {f.problem}" for f in output.findings])
        repairs = self.repairs
        document = await repairs.reopen_goals(db, run, output, before, outcome, now)
        visible = [  # M17: what the visitor's side already shows
            provenance.Said("", line.body)
            for pane in audit.inputs.panes
            if visibility.is_visitor_facing(pane.key)
            for line in pane.session
        ]
        document = repairs.fix_memory(document, audit.participants, output, outcome, visible)
        outbound = effects.Outbound(run.room_id, run.id, now, self.deps.settings)
        # G3: the same firewall screen as a persona's send, in the choke point.
        outbound.screen = held_sends.screener(
            before,
            {p.id: p.key for p in audit.participants},
            audit.held,
            band_percent=self.deps.settings.firewall_band_percent,
        )
        await repairs.deliver(
            db,
            run,
            audit.participants,
            output,
            before,
            audit.held,
            outcome,
            outbound,
            [said.text for said in visible],
        )
        uow.publish(*outbound.published)
        host = next((p for p in audit.participants if p.key == Seat.HOST.value), None)
        if outbound.screened and host is not None:
            # Asked in the host's pane like a persona's held send; the yes releases it.
            held = held_sends.held_of(outbound, self._names(audit))
            uow.publish(*await held_sends.notify(db, run.room_id, host, run.id, held, now))
        repairs.flag_unruled(run, audit.participants, audit.unruled, before, outcome, now)
        # A waiting principal is owed: the repair is the armed reminder, never an answer.
        armed = await notify_owed.ensure_armed(db, run.room_id, before, now)
        outcome.edits += armed.edits
        uow.publish(*armed.published)
        if document != before:
            room.memory = document
            room.memory_version += 1
            room.memory_updated_at = now
            await OperatorToolsRepository(db).record_changes(  # memory_edits ME3
                run.room_id,
                room.memory_version,
                memory_edits.changed_leaves(before, document),
                agent=AgentName.GUARD.value,
                run_id=run.id,
                now=now,
            )
        await db.add(
            GuardVerdict(
                id=uuid.uuid4(),
                room_id=run.room_id,
                run_id=run.id,
                verdict=outcome.verdict,
                findings=[*outcome.findings, *outcome.refused],
                edits=outcome.edits,
                created_at=now,
            ),
            *outcome.flags,
            *outbound.runs,
            *site.rows,
        )
        row.status, row.finished_at, row.error = RunStatus.DONE.value, now, None
        row.no_op = not outcome.edits and not outcome.flags  # G5
        if outbound.runs:
            uow.announce()
        return outcome

    @staticmethod
    def _names(audit: Audit) -> dict[uuid.UUID, str]:
        by_key = {pane.key: pane.name for pane in audit.inputs.panes}
        return {p.id: by_key.get(p.key, "them") for p in audit.participants}

    async def _finish(self, run: RunSnapshot) -> None:
        await finish_run(self.deps, run, no_op=True)

    async def _requeue(self, run: RunSnapshot) -> None:
        """Distil still holds the memory: try again shortly, without spending an attempt."""
        await requeue_for_lease(self.deps, run)


def _run_of(client_message_id: str) -> uuid.UUID | None:
    """The run that stored an agent reply (its ``client_message_id`` is ``run:<id>``)."""
    if not client_message_id.startswith("run:"):
        return None
    try:
        return uuid.UUID(client_message_id[4:])
    except ValueError:
        return None
