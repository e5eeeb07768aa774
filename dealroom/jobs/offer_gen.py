"""Offer-Gen, the specialist behind a written offer (seed 000 "Records are made by a
specialist").

Offer-Gen runs when the ``new-offer`` goal flips to met: it extracts the agreed terms from what the
visitor side may see (the visitor pane, the rulings that crossed to it, the visitor view of memory)
— never the host's private pane, because the offer is shown to the visitor. Terms that would state
a private value of the host's are not drawn; what the rest do to the offer (mint, a new version,
nothing, or a sibling room: O5, O6) is ``offer_draw``.

It and the agreement specialist (``agreement_turn``) run as jobs in ``agent_runs`` in the
host's pane, so they are serialised per room, retried on failure, and applied in one
transaction with the run marked done (:class:`SpecialistRun`, shared by both).
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import structlog

from dealroom.agents import offer_gen
from dealroom.agents.models.base import AgentName
from dealroom.agents.render import Line, Party
from dealroom.domain import firewall, pane_words, read_order, visibility
from dealroom.domain import memory as memdoc
from dealroom.domain import offers as rules
from dealroom.domain.seats import GUEST_NAME, RoomKind, Seat, side_of
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.models import Account, Flag, Participant, Room
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import RunRepository, TranscriptRepository
from dealroom.services.live.publish import Publish
from dealroom.services.offers import draw as offer_draw
from dealroom.services.offers.actions import queue_agreement
from dealroom.services.offers.reads import stage_of
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, fence, model_for, system_line
from dealroom.services.unit_of_work import reading

log = structlog.get_logger(__name__)

TRANSCRIPT_LINES = 60
"""How much of the visitor pane Offer-Gen reads: the negotiation's recent lines."""


def _screened(
    memory: dict[str, Any],
    extracted: offer_gen.ExtractedTerms,
    band_percent: Decimal | None = None,
) -> tuple[offer_gen.ExtractedTerms, list[str]]:
    """A written offer is shown to the visitor, so terms that state a private value of the host's
    (one the principal did not instruct) are not drawn."""
    if extracted.terms is None:
        return extracted, []
    reveals = firewall.describe(
        firewall.check(
            memory,
            extracted.terms,
            list(extracted.open_questions),
            allowed_amounts=firewall.instructed_amounts(memory),
            band_percent=band_percent,
        )
    )
    if not reveals:
        return extracted, []
    # The reason reaches the host's pane: the firewall's memory paths are not words for a person.
    held = "terms that would reveal " + "; ".join(pane_words.without_paths(r) for r in reveals)
    return offer_gen.ExtractedTerms(None, (held,)), reveals


class SpecialistRun:
    """Shared by Offer-Gen and the agreement specialist: the stale-run check and marking the
    run done."""

    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def _own(self, db: Db, run: RunSnapshot) -> Any:
        return await fence(db, run)

    async def _finish(self, run: RunSnapshot, *, no_op: bool) -> None:
        async with self.deps.unit() as uow:
            row = await self._own(uow.db, run)
            row.status, row.finished_at, row.no_op = (
                RunStatus.DONE.value,
                self.deps.clock.now(),
                no_op,
            )


class OfferGenTurn(SpecialistRun):
    async def __call__(self, run: RunSnapshot) -> None:
        loaded = await self._load(run)
        if loaded is None:
            await self._finish(run, no_op=True)
            return
        inputs, picks = loaded
        site = CallSite(run.room_id, run.id, rows=[])
        try:
            model = model_for(self.deps, AgentName.OFFER_GEN, picks)
            request = offer_gen.build(inputs, model=model)
            generation = await self.deps.ledger.generate(request, site)
            output = generation.output
            assert isinstance(output, offer_gen.OfferGenOutput)
            await self._apply(run, offer_gen.to_terms(output), site)
        except Exception:
            await self.deps.ledger.keep(site)
            raise

    async def _load(
        self, run: RunSnapshot
    ) -> tuple[offer_gen.OfferGenInput, dict[str, Any]] | None:
        async with reading(self.deps.sessionmaker) as db:
            room = await db.get(Room, run.room_id)
            if room is None:
                return None
            participants = await RoomRepository(db).participants(room.id)
            host = _seat(participants, Seat.HOST)
            if host is None or _seat(participants, Seat.VISITOR) is None:
                return None  # a home room has no counterparty to write an offer to
            # The buyer's side may have more than one pane: the terms are read where they were
            # last being settled (the buying account stays the offer's party, ``draw``).
            visitor = _settling(participants)
            names = await _names(db, host, visitor)
            lines = await TranscriptRepository(db).recent(visitor.id, TRANSCRIPT_LINES)
            # RO1: a yes committed before the offer its answer read stands after that offer.
            answered = await RunRepository(db).answered(visitor.id, [m.id for m in lines])
            lines = read_order.reordered(
                lines,
                read_order.as_answered(
                    [str(m.id) for m in lines], {str(k): str(v) for k, v in answered.items()}
                ),
            )
            memory = visibility.visible_memory(
                room.memory or {}, pane=visitor.key, room_kind=RoomKind(room.kind)
            )
            rulings = memory.get(memdoc.RULINGS, {}).get(visitor.key, [])
            rulings = [*rulings, *await _on_the_way(db, visitor, rulings)]
            current = await OfferRepository(db).current(room.id)
            live = current is not None and current.status not in rules.CLOSED
            inputs = offer_gen.OfferGenInput(
                represents=Party(Seat.HOST.value, names[0]),
                counterparty=Party(visitor.key, names[1]),
                memory=memory,
                transcript=[Line(m.author_kind, m.body) for m in lines],
                rulings=[r for r in rulings if isinstance(r, dict)],
                current_terms=dict(current.terms) if live and current is not None else None,
                stage=stage_of(current),
                today=self.deps.clock.now().date(),
            )
            return inputs, dict(room.model_picks or {})

    async def _apply(
        self, run: RunSnapshot, extracted: offer_gen.ExtractedTerms, site: CallSite
    ) -> None:
        deps = self.deps
        published: list[Publish] = []
        new_runs: list[Any] = []
        async with deps.unit() as uow:
            db = uow.db
            row = await self._own(db, run)
            now = deps.clock.now()
            offers = OfferRepository(db)
            await RoomRepository(db).lock(run.room_id)
            room = await db.get(Room, run.room_id)
            if room is None or await offers.by_source_run(run.id) is not None:
                row.status, row.finished_at = RunStatus.DONE.value, now  # applied before
                return
            participants = await RoomRepository(db).participants(room.id)
            host = _seat(participants, Seat.HOST)
            visitor = _seat(participants, Seat.VISITOR)
            assert host is not None
            assert visitor is not None
            extracted, reveals = _screened(
                dict(room.memory or {}), extracted, self.deps.settings.firewall_band_percent
            )
            if reveals:
                await db.add(
                    Flag(
                        room_id=room.id,
                        participant_id=host.id,
                        run_id=run.id,
                        level="firewall",
                        evidence=f"offer not drawn: {len(reveals)} private value(s) matched",
                        created_at=now,
                    )
                )
            if extracted.terms is None:
                line = await system_line(
                    db,
                    deps.clock,
                    run,
                    "The written offer was not drawn: the conversation has not settled "
                    + "; ".join(extracted.open_questions or ("the fee",)),
                    key=f"run:{run.id}:no-terms",
                )
                published += [line] if line else []
                row.no_op = True
            else:
                published += await offer_draw.draw(
                    db,
                    deps.clock,
                    run,
                    room,
                    host,
                    visitor,
                    extracted,
                    now,
                    band_percent=deps.settings.firewall_band_percent,
                )
                new_runs.append(queue_agreement(room.id, host.id, now))
            row.status, row.finished_at = RunStatus.DONE.value, now
            await db.add(*site.rows, *new_runs)
            uow.publish(*published)
            if new_runs:
                uow.announce()
        site.rows.clear()  # stored: nothing left for the failure path to keep


async def _on_the_way(db: Db, visitor: Participant, delivered: list[Any]) -> list[dict[str, Any]]:
    """Rulings sent to the visitor's pane and not delivered yet. Offer-Gen runs as soon as the
    goal is met, which can be before the visitor's agent has said the settling ruling in its
    own words; the ruling is already the host side's typed, screened yes, so it counts. Each
    is shaped as delivery records it (``record_ruling``), and one already recorded is not
    counted twice."""
    recorded = {r.get("dispatchId") for r in delivered if isinstance(r, dict)}
    found: list[dict[str, Any]] = []
    for dispatch in await DispatchRepository(db).rulings_on_the_way(visitor.id):
        ruling = (dispatch.payload or {}).get("ruling")
        if str(dispatch.id) in recorded or not isinstance(ruling, dict):
            continue
        entry = {field: ruling.get(field) for field in memdoc.RULING_FIELDS}
        found.append({**entry, "dispatchId": str(dispatch.id)})
    return found


def _seat(participants: list[Participant], seat: Seat) -> Participant | None:
    return next((p for p in participants if p.key == seat.value), None)


def _settling(participants: list[Participant]) -> Participant:
    """The buyer side's pane that spoke last (``pane_seq`` is the room-wide cursor of a pane's
    newest message), the buying account's own on a tie or when only it is there."""
    side = [p for p in participants if side_of(p.key) is Seat.VISITOR and p.removed_at is None]
    return max(side, key=lambda p: (p.pane_seq or 0, p.key == Seat.VISITOR.value))


async def _names(db: Db, host: Participant, visitor: Participant) -> tuple[str, str]:
    async def name(account_id: uuid.UUID | None) -> str:
        account = await db.get(Account, account_id) if account_id else None
        return account.display_name if account is not None else GUEST_NAME

    return await name(host.account_id), await name(visitor.account_id)
