"""An Arvist run: promote what is durable about one bound participant's account from one room
into that account's document (seed 000 "Rooms never close; quiet remains Arvist's catch-up,
Update Agent promotes on Distil"; seed 002 layer 4).

Triggers: right after Distil changes a live home room (``home_arvist_run``), and the quiet chain's
curator window for every room (``jobs/curator.arvist_step``, which queues ``curator_runs``).
Scripted and demo rooms never promote: the skip is recorded as a run that wrote nothing (D5), and a
run queued for one anyway finds nothing to do (``_load``).

load → think → apply: the input is read in one short unit of work, the model is called with
no connection held, and the write happens under the account row lock with the version it read
checked (``durable_memory.write``); a run that changes nothing writes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog

from dealroom.agents import arvist
from dealroom.agents.arvist import ArvistInput, ArvistOutput, ClosedDeal
from dealroom.agents.models.base import AgentName
from dealroom.agents.render import Line
from dealroom.domain import durable, provenance, service_parts
from dealroom.domain import memory as memdoc
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.seats import GUEST_NAME, AuthorKind, RoomKind, RoomMode, Seat, on_host_side
from dealroom.persistence.db import Db
from dealroom.persistence.durable import DurableRepository
from dealroom.persistence.models import Account, AgentRun, Flag, Participant, Room
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import RunRepository, TranscriptRepository
from dealroom.services.memory import durable as durable_memory
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus, new_run
from dealroom.services.turns.runs import RunnerDeps, still_claimed
from dealroom.services.unit_of_work import reading

log = structlog.get_logger(__name__)

PANE_LINES = 40
"""How much of the participant's own pane Arvist reads: the recent sitting."""

CLOSED = frozenset(
    {
        OfferStatus.ACCEPTED,
        OfferStatus.PENDING_PAY_CAPTURE,
        OfferStatus.PAYMENT_HELD,
        OfferStatus.COMPLETED,
    }
)
"""Offers rows that are a closed deal: booked (and what follows a booking)."""


class StaleArvist(Exception):
    """The run was claimed again meanwhile: this attempt's write must not happen."""


# --- enqueueing ---------------------------------------------------------------------------


async def _queued(db: Db, participant_id: uuid.UUID) -> bool:
    """An Arvist run of this pane that has not started yet will read the room as it is when it
    starts, so a second one would find nothing more. A *running* one may have read the room
    before the latest write, so it does not count (no write is lost)."""
    return await RunRepository(db).pane_has_untried(participant_id, AgentName.ARVIST.value)


def _skipped(
    room_id: uuid.UUID,
    mode: RoomMode,
    participant_id: uuid.UUID,
    now: datetime,
    watch_generation: int | None = None,
) -> AgentRun:
    """D5: a scripted or demo room promotes nothing; the skip is a run that wrote nothing."""
    run = new_run(
        room_id=room_id,
        participant_id=participant_id,
        agent=AgentName.ARVIST,
        now=now,
        watch_generation=watch_generation,
    )
    run.status, run.no_op, run.finished_at = RunStatus.DONE.value, True, now
    run.error = f"skipped: {mode.value} room never writes durable memory"
    return run


def curator_runs(
    room_id: uuid.UUID,
    mode: RoomMode,
    participants: Sequence[Participant],
    now: datetime,
    *,
    watch_generation: int | None = None,
) -> list[AgentRun]:
    """The quiet chain's curator window for one room (``jobs/curator.arvist_step``): one
    Arvist run per bound participant (seed 002 layer 4). A scripted or demo room gets one run
    in the host's pane, recorded done with no writes and a "skipped: …" reason (D5)."""
    if not durable.arvist_runs(mode):
        host = next((p for p in participants if p.key == Seat.HOST.value), None)
        if host is None:
            return []
        return [_skipped(room_id, mode, host.id, now, watch_generation)]
    return [
        new_run(
            room_id=room_id,
            participant_id=p.id,
            agent=AgentName.ARVIST,
            now=now,
            watch_generation=watch_generation,
        )
        for p in participants
        if p.account_id is not None and _curated(p.key)
    ]


def _curated(key: str) -> bool:
    """Whose account Arvist promotes from a room: the host, and anyone on the visitor side.
    A host's teammate talks to the host's agent with the host's view; its own account memory
    must not learn the host's private rules from that pane."""
    return key == Seat.HOST.value or not on_host_side(key)


async def enqueue_arvist_for_room(db: Db, room: Room, now: datetime) -> list[AgentRun]:
    """The curator window's runs for ``room`` queued outside the watch (``curator_runs``), in
    the caller's transaction, leaving out panes that already have an Arvist run waiting. The
    caller wakes the runner after commit."""
    participants = await RoomRepository(db).participants(room.id)
    runs = [
        run
        for run in curator_runs(room.id, RoomMode(room.mode), participants, now)
        if run.status != RunStatus.QUEUED.value or not await _queued(db, run.participant_id)
    ]
    if runs:
        await db.add(*runs)
    return runs


async def home_arvist_run(
    db: Db, room_id: uuid.UUID, kind: str, mode: str, participant_id: uuid.UUID, now: datetime
) -> AgentRun | None:
    """After Distil changed a live home room, promote the host sitting now rather than at quiet.
    One waiting run per pane is enough (see ``_queued``). The run is returned unadded: the caller
    inserts it with its other rows, in one flush."""
    if kind != RoomKind.HOME.value:
        return None
    if not durable.arvist_runs(RoomMode(mode)):
        return _skipped(room_id, RoomMode(mode), participant_id, now)
    if await _queued(db, participant_id):
        return None
    return new_run(room_id=room_id, participant_id=participant_id, agent=AgentName.ARVIST, now=now)


# --- the run --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Loaded:
    request_input: ArvistInput
    account_id: uuid.UUID
    picks: dict[str, Any]
    said: list[provenance.Said] = field(default_factory=list)
    """The participant's own messages in the room (provenance P1-P4, memory M15, M16)."""
    kind: RoomKind = RoomKind.DEAL
    service: str | None = None
    """The key of the room's service (S4): where its ``service`` changes go (S3)."""
    services: Collection[str] = ()
    """The keys of the host's services, for a room about one (S5)."""


class ArvistTurn:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def __call__(self, run: RunSnapshot) -> None:
        loaded = await self._load(run)
        if loaded is None:
            await self._finish(run)
            return
        deps = self.deps
        picked = loaded.picks.get(AgentName.ARVIST.value)
        model = picked if isinstance(picked, str) and picked else deps.settings.arvist_model
        request = arvist.build(loaded.request_input, model=model)
        site = CallSite(run.room_id, run.id, rows=[])
        generation = await deps.ledger.generate(request, site)
        output = generation.output
        assert isinstance(output, ArvistOutput)
        try:
            await self._apply(
                run,
                loaded.account_id,
                output,
                site,
                loaded.said,
                loaded.request_input.branch if loaded.request_input.perspective == "host" else None,
                kind=loaded.kind,
                service=loaded.service,
                services=loaded.services,
            )
        except Exception:
            await deps.ledger.keep(site)
            raise

    async def _load(self, run: RunSnapshot) -> _Loaded | None:
        async with reading(self.deps.sessionmaker) as db:
            room = await db.get(Room, run.room_id)
            participant = await db.get(Participant, run.participant_id)
            if room is None or participant is None or participant.account_id is None:
                return None
            if not _curated(participant.key):
                return None  # a run queued before the rule, or by hand
            if not durable.arvist_runs(RoomMode(room.mode)):
                return None  # D5, whoever queued it
            account = await db.get(Account, participant.account_id)
            if account is None:
                return None
            current = await durable_memory.view(db, account.id)
            kind = RoomKind(room.kind)
            host = participant.key == Seat.HOST.value
            # The room's service is the host's: another participant's document has no part for it.
            service, services = (
                await ServiceRepository(db).scope(account.id, room.service_id)
                if host
                else (None, frozenset[str]())
            )
            branch = (room.memory or {}).get(participant.key)
            lines = await TranscriptRepository(db).recent(participant.id, PANE_LINES)
            deals = await _closed_deals(db, room) if host and room.kind == "deal" else []
            # seed 002 layer 4: the input holds this participant's own branch and pane only;
            # a non-host never gets the host's branch, another's branch or a private part.
            inputs = ArvistInput(
                perspective="host" if host else "participant",
                room_kind=room.kind,
                account_name=account.display_name,
                pane=participant.key,
                # S1: the room's view, never another service's part
                durable=service_parts.room_view(current.document, kind, service, services),
                leaf_dates=current.dates
                if kind == RoomKind.HOME
                else service_parts.view_dates(current.dates, service, services),
                branch=dict(branch) if isinstance(branch, dict) else {},
                session=[Line(m.author_kind, m.body) for m in lines],
                closed_deals=deals,
                service=service,
            )
            said = [
                provenance.Said(str(m.id), m.body)
                for m in lines
                if m.author_kind == AuthorKind.PARTICIPANT.value and m.relayed_dispatch_id is None
            ]
            return _Loaded(
                inputs, account.id, dict(room.model_picks or {}), said, kind, service, services
            )

    async def _apply(
        self,
        run: RunSnapshot,
        account_id: uuid.UUID,
        output: ArvistOutput,
        site: CallSite,
        said: Sequence[provenance.Said] = (),
        room_branch: Mapping[str, Any] | None = None,
        *,
        kind: RoomKind = RoomKind.DEAL,
        service: str | None = None,
        services: Collection[str] = (),
    ) -> None:
        deps = self.deps
        async with deps.unit() as uow:
            db = uow.db
            now = deps.clock.now()
            row = await still_claimed(db, run)
            if row is None:
                raise StaleArvist(str(run.id))
            repo = DurableRepository(db)
            participant = await repo.locked_pane(run.participant_id)  # before the account
            if participant is None or not await repo.lock_account(account_id):
                row.status, row.finished_at, row.no_op = RunStatus.DONE.value, now, True
                return  # committed by the unit
            # D3: leaves the account changed after this room's last seed or merge are newer
            # than anything the room holds; the room's older statement of them is not promoted.
            # Both as the room reads them (S2): the changes name paths of the room's view.
            newer = service_parts.room_paths(
                await repo.paths_changed_since(account_id, participant.last_merged_memory_version),
                kind,
                service,
                services,
            )
            refused: list[str] = []
            changes: list[tuple[service_parts.Part, memdoc.Change]] = []
            for change in output.changes:
                if not durable.durable_path_allowed(change.path):  # D2
                    refused.append(f"{change.path} (not a durable path)")
                elif not service_parts.model_may_name(change.path):  # S3
                    refused.append(f"{change.path} (a part is named by code)")
                elif durable.related(change.path, newer):
                    refused.append(f"{change.path} (the account changed it since)")
                else:
                    changes.append(
                        (
                            service_parts.Part(change.part),
                            memdoc.Change(memdoc.Op(change.op), change.path, change.value),
                        )
                    )

            public: list[str] = []
            keeps_floors = room_branch is not None
            room_branch = room_branch or {}

            def edit(document: dict[str, Any]) -> dict[str, Any]:
                # D8: M12, M13 as for Distil; M15, M16: the principal's word for a public note or
                # a lower or dropped limit; S3: each change to its part; D10: the room's floors
                # outlive the curation
                applied = service_parts.curate(
                    document,
                    changes,
                    service=service,
                    room_branch=room_branch if keeps_floors else None,
                    said=said,
                    band_percent=deps.settings.firewall_band_percent,
                    services=services,
                )
                refused.extend(f"{r.change.path} ({r.reason})" for r in applied.rejected)
                public.extend(
                    r.change.path
                    for r in applied.rejected
                    if r.reason.startswith(memdoc.PUBLIC_REFUSAL)
                )
                return applied.document

            written = await durable_memory.write(
                db,
                account_id,
                edit,
                now=now,
                agent=AgentName.ARVIST.value,
                room_id=run.room_id,
                run_id=run.id,
            )
            wrote = written is not None and bool(written.changes)
            if (
                written is not None
                and wrote
                and participant.last_merged_memory_version == written.before
            ):
                # The room is where these values came from: it is not due a merge of them.
                await repo.set_merged(participant.id, written.version)
            row.status, row.finished_at = RunStatus.DONE.value, now
            row.no_op = not wrote
            row.error = f"refused: {'; '.join(refused)}"[:2000] if refused else None
            if public:  # D8 (M13): a public write that would reveal private values
                await db.add(
                    Flag(
                        room_id=run.room_id,
                        participant_id=run.participant_id,
                        run_id=run.id,
                        level="firewall",
                        evidence=f"{len(public)} durable public write(s) refused: private "
                        f"values ({', '.join(public[:8])})"[:2000],
                        created_at=now,
                    )
                )
            await db.add(*site.rows)
        site.rows.clear()  # stored: nothing left for the failure path to keep
        log.info(
            "arvist_run",
            run_id=str(run.id),
            changed=len(written.changes) if written else 0,
            refused=len(refused),
        )

    async def _finish(self, run: RunSnapshot) -> None:
        async with self.deps.unit() as uow:
            row = await RunRepository(uow.db).by_id(run.id, lock=True)
            if row is not None and row.attempts == run.attempts:
                row.status, row.finished_at = RunStatus.DONE.value, self.deps.clock.now()
                row.no_op = True


async def _closed_deals(db: Db, room: Room) -> list[ClosedDeal]:
    """Closed deals derived by code from the room's offers rows: fee, deliverables, date and
    the counterparty's handle (seed 002 layer 4). Never a model's reading of the chat."""
    offers = await OfferRepository(db).in_statuses(room.id, [s.value for s in CLOSED])
    deals: list[ClosedDeal] = []
    for offer in offers:
        terms = offer.terms or {}
        fee = terms.get("fee") if isinstance(terms.get("fee"), dict) else {}
        assert isinstance(fee, dict)
        amount, currency = fee.get("amount"), fee.get("currency")
        buyer = await db.get(Account, offer.buyer_account_id) if offer.buyer_account_id else None
        items = terms.get("deliverables")
        when = offer.accepted_at or offer.updated_at
        deals.append(
            ClosedDeal(
                key=f"{room.id.hex[:8]}-{offer.key}",
                fee=f"{amount} {currency}" if amount and currency else "",
                deliverables=[str(i) for i in items] if isinstance(items, list) else [],
                date=when.date().isoformat(),
                counterparty=f"@{buyer.handle}" if buyer is not None else GUEST_NAME,
            )
        )
    return deals
