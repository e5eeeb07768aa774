"""The two specialists behind a written offer (seed 000 "Records are made by a specialist").

Offer-Gen runs when the ``new-offer`` goal flips to met: it extracts the agreed terms from what
the visitor side may see (the visitor pane, the rulings that crossed to it, the visitor view of
memory) — never the host's private pane, because the offer is shown to the visitor. Code then
mints the offer, draws a new version (a material rewrite clears the brand's stamp), leaves it
alone (the same terms), or — for a booked offer — opens a sibling deal room (O5, O6).

The agreement specialist draws a lawyer-reviewable draft from the offer's commercial fields
only, stored under their fingerprint; a draft that names a term the offer does not hold is
refused and the run retried.

Both run as jobs in ``agent_runs`` in the host's pane, so they are serialised per room,
retried on failure, and applied in one transaction with the run marked done.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import structlog

from dealroom.agents import agreement as agreement_agent
from dealroom.agents import offer_gen
from dealroom.agents.models.base import AgentName
from dealroom.agents.render import Line, Party
from dealroom.domain import firewall, visibility
from dealroom.domain import memory as memdoc
from dealroom.domain import offers as rules
from dealroom.domain.offer_stage import OfferStatus
from dealroom.domain.seats import GUEST_NAME, RoomKind, RoomMode, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Agreement, Flag, Offer, Participant, Room
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import RunRepository, TranscriptRepository
from dealroom.services.ledger import CallSite
from dealroom.services.offers import queue_agreement, record_stage, stage_of, state_of
from dealroom.services.persona_turn import StaleRun, model_for
from dealroom.services.publish import Publish
from dealroom.services.rooms import seed_flag, seed_host_memory
from dealroom.services.turn_context import RunSnapshot
from dealroom.services.turns import RunnerDeps, RunStatus, system_line

log = structlog.get_logger(__name__)

TRANSCRIPT_LINES = 60
"""How much of the visitor pane Offer-Gen reads: the negotiation's recent lines."""


class InventedTerms(Exception):
    """The agreement draft named a term the offer does not hold."""


class PrivateValueInAgreement(Exception):
    """The agreement draft states one of the host's private values (firewall F1-F5)."""


def _screened(
    memory: dict[str, Any], extracted: offer_gen.ExtractedTerms
) -> tuple[offer_gen.ExtractedTerms, list[str]]:
    """Issue 10: a written offer is shown to the visitor, so terms that state a private
    value of the host's (one the principal did not instruct) are not drawn."""
    if extracted.terms is None:
        return extracted, []
    reveals = firewall.describe(
        firewall.check(
            memory,
            extracted.terms,
            list(extracted.open_questions),
            allowed_amounts=firewall.instructed_amounts(memory),
        )
    )
    if not reveals:
        return extracted, []
    held = "terms that would reveal " + "; ".join(reveals)
    return offer_gen.ExtractedTerms(None, (held,)), reveals


class _Run:
    """Shared by both specialists: the stale-run check and marking the run done."""

    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def _own(self, db: Db, run: RunSnapshot) -> Any:
        row = await RunRepository(db).by_id(run.id, lock=True)
        if row is None or row.status != RunStatus.RUNNING or row.attempts != run.attempts:
            raise StaleRun(str(run.id))
        return row

    async def _finish(self, run: RunSnapshot, *, no_op: bool) -> None:
        async with self.deps.unit() as uow:
            row = await self._own(uow.db, run)
            row.status, row.finished_at, row.no_op = (
                RunStatus.DONE.value,
                self.deps.clock.now(),
                no_op,
            )


class OfferGenTurn(_Run):
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
        db = Db(self.deps.sessionmaker)
        try:
            room = await db.get(Room, run.room_id)
            if room is None:
                return None
            participants = await RoomRepository(db).participants(room.id)
            host = _seat(participants, Seat.HOST)
            visitor = _seat(participants, Seat.VISITOR)
            if host is None or visitor is None:
                return None  # a home room has no counterparty to write an offer to
            names = await _names(db, host, visitor)
            lines = await TranscriptRepository(db).recent(visitor.id, TRANSCRIPT_LINES)
            memory = visibility.visible_memory(
                room.memory or {}, pane=Seat.VISITOR.value, room_kind=RoomKind(room.kind)
            )
            rulings = memory.get(memdoc.RULINGS, {}).get(Seat.VISITOR.value, [])
            current = await OfferRepository(db).current(room.id)
            live = current is not None and current.status not in rules.CLOSED
            inputs = offer_gen.OfferGenInput(
                represents=Party(Seat.HOST.value, names[0]),
                counterparty=Party(Seat.VISITOR.value, names[1]),
                memory=memory,
                transcript=[Line(m.author_kind, m.body) for m in lines],
                rulings=[r for r in rulings if isinstance(r, dict)],
                current_terms=dict(current.terms) if live and current is not None else None,
                stage=stage_of(current),
                today=self.deps.clock.now().date(),
            )
            return inputs, dict(room.model_picks or {})
        finally:
            await db.close()

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
            extracted, reveals = _screened(dict(room.memory or {}), extracted)
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
                published += await self._write(db, run, room, host, visitor, extracted, now)
                new_runs.append(queue_agreement(room.id, host.id, now))
            row.status, row.finished_at = RunStatus.DONE.value, now
            await db.add(*site.rows, *new_runs)
            uow.publish(*published)
            if new_runs:
                uow.announce()
        site.rows.clear()  # stored: nothing left for the failure path to keep

    async def _write(
        self,
        db: Db,
        run: RunSnapshot,
        room: Room,
        host: Participant,
        visitor: Participant,
        extracted: offer_gen.ExtractedTerms,
        now: Any,
    ) -> list[Publish]:
        assert extracted.terms is not None
        terms = extracted.terms
        seller, buyer = room.host_account_id, visitor.account_id
        fields = rules.commercial_fields(terms, str(seller), str(buyer) if buyer else None)
        new_print = rules.fingerprint(fields)
        current = await OfferRepository(db).current(room.id, fresh=True)
        decision = rules.rewrite(
            state_of(current) if current is not None else None,
            current.fingerprint if current is not None else None,
            new_print,
        )
        log.info("offer_gen_decision", room_id=str(room.id), decision=decision.value)
        match decision:
            case rules.Rewrite.UNCHANGED:
                return []
            case rules.Rewrite.NEW_VERSION:
                assert current is not None
                current.terms = terms
                current.open_questions = list(extracted.open_questions)
                current.fingerprint = new_print
                current.version += 1
                current.brand_approved_at = None  # O5: the brand approves the new version
                current.buyer_account_id = buyer
                current.updated_at = now
                await db.flush()
                return await record_stage(db, current, actor=AgentName.OFFER_GEN.value, now=now)
            case rules.Rewrite.MINT:
                offer = await _mint(db, room, run.id, terms, extracted, new_print, buyer, now)
                return await record_stage(db, offer, actor=AgentName.OFFER_GEN.value, now=now)
            case rules.Rewrite.SIBLING:
                return await self._sibling(db, run, room, host, visitor, extracted, new_print, now)

    async def _sibling(
        self,
        db: Db,
        run: RunSnapshot,
        room: Room,
        host: Participant,
        visitor: Participant,
        extracted: offer_gen.ExtractedTerms,
        new_print: str,
        now: Any,
    ) -> list[Publish]:
        """O6: the booked offer stays as it is; the changed terms are drawn in a new deal room
        for the same pair, which both sides find in their room list."""
        assert extracted.terms is not None
        # The host is seeded like any new room (home branch if newer than durable), never by
        # copying the old room's host branch.
        seeded = await seed_host_memory(db, room.host_account_id)
        sibling = Room(
            id=uuid.uuid4(),
            kind=RoomKind.DEAL.value,
            mode=room.mode if room.mode != RoomMode.SCRIPTED.value else RoomMode.LIVE.value,
            host_account_id=room.host_account_id,
            service_id=room.service_id,
            title=room.title[:180] + " (new offer)",
            memory={**seeded.memory, **_sibling_memory(room)},
            created_at=now,
            last_activity_at=now,
        )
        await db.add(sibling)
        sibling_host = Participant(
            id=uuid.uuid4(),
            room_id=sibling.id,
            key=Seat.HOST.value,
            account_id=host.account_id,
            last_merged_memory_version=seeded.version,
            created_at=now,
        )
        await db.add(
            sibling_host,
            Participant(
                id=uuid.uuid4(),
                room_id=sibling.id,
                key=Seat.VISITOR.value,
                account_id=visitor.account_id,
                guest_key_hash=visitor.guest_key_hash,
                first_spoke_at=now,
                created_at=now,
            ),
        )
        if (flag := seed_flag(seeded, sibling.id, sibling_host.id, now, run.id)) is not None:
            await db.add(flag)  # D7
        offer = await _mint(
            db, sibling, run.id, extracted.terms, extracted, new_print, visitor.account_id, now
        )
        published = await record_stage(db, offer, actor=AgentName.OFFER_GEN.value, now=now)
        text = (
            "The booked offer in this room stays as it is. The changed terms are drawn as a "
            f"new written offer in a new deal room: {sibling.id}."
        )
        for pane in (host, visitor):
            line = await system_line(
                db,
                self.deps.clock,
                RunSnapshot(run.id, room.id, pane.id, run.agent, None, None, 0, run.attempts),
                text,
                key=f"run:{run.id}:sibling",
            )
            published += [line] if line else []
        await db.add(queue_agreement(sibling.id, sibling_host.id, now))
        return published


class AgreementTurn(_Run):
    async def __call__(self, run: RunSnapshot) -> None:
        db = Db(self.deps.sessionmaker)
        try:
            offer = await OfferRepository(db).current(run.room_id)
            if offer is None or offer.status in rules.CLOSED:
                offer = None
            elif await OfferRepository(db).agreement(offer.id, offer.fingerprint) is not None:
                offer = None  # this version's fields are drawn already
            if offer is not None:
                names = await _names_by_account(db, offer)
                room = await db.get(Room, run.room_id)
                names = (names[0], _brand(room) or names[1])
                inputs = agreement_agent.AgreementInput(
                    offer_id=str(offer.id),
                    version=offer.version,
                    seller=names[0],
                    buyer=names[1],
                    terms=copy.deepcopy(dict(offer.terms)),
                )
                snapshot = (offer.id, offer.fingerprint, offer.version, dict(offer.terms))
                room = await db.get(Room, run.room_id)
                picks = dict(room.model_picks or {}) if room is not None else {}
                memory = dict(room.memory or {}) if room is not None else {}
        finally:
            await db.close()
        if offer is None:
            await self._finish(run, no_op=True)
            return
        site = CallSite(run.room_id, run.id, rows=[])
        try:
            model = model_for(self.deps, AgentName.AGREEMENT, picks)
            generation = await self.deps.ledger.generate(
                agreement_agent.build(inputs, model=model), site
            )
            output = generation.output
            assert isinstance(output, agreement_agent.AgreementOutput)
            text = agreement_agent.render(output)
            invented = agreement_agent.invented_terms(text, snapshot[3])
            if invented:
                raise InventedTerms("; ".join(invented)[:500])
            if agreement_agent.private_values(memory, text, snapshot[3]):
                # Shown to the visitor: never stored with a private value in it (issue 10).
                raise PrivateValueInAgreement(str(snapshot[0]))
            await self._store(run, snapshot, text, site)
        except Exception:
            await self.deps.ledger.keep(site)
            raise

    async def _store(
        self,
        run: RunSnapshot,
        snapshot: tuple[uuid.UUID, str, int, dict[str, Any]],
        text: str,
        site: CallSite,
    ) -> None:
        offer_id, fingerprint, version, _terms = snapshot
        async with self.deps.unit() as uow:
            db = uow.db
            row = await self._own(db, run)
            now = self.deps.clock.now()
            if await OfferRepository(db).agreement(offer_id, fingerprint) is None:
                await db.add(
                    Agreement(
                        id=uuid.uuid4(),
                        offer_id=offer_id,
                        fingerprint=fingerprint,
                        version=version,
                        text=text,
                        created_at=now,
                    )
                )
            row.status, row.finished_at = RunStatus.DONE.value, now
            await db.add(*site.rows)
        site.rows.clear()


async def _mint(
    db: Db,
    room: Room,
    run_id: uuid.UUID,
    terms: dict[str, Any],
    extracted: offer_gen.ExtractedTerms,
    print_: str,
    buyer: uuid.UUID | None,
    now: Any,
) -> Offer:
    offer = Offer(
        id=uuid.uuid4(),
        room_id=room.id,
        key=rules.NEW_OFFER,
        seller_account_id=room.host_account_id,
        buyer_account_id=buyer,
        status=OfferStatus.APPROVED.value,
        terms=terms,
        open_questions=list(extracted.open_questions),
        version=1,
        fingerprint=print_,
        source_run_id=run_id,
        created_at=now,
        updated_at=now,
    )
    await db.add(offer)
    room.memory = memdoc.record_offer(room.memory or {}, rules.NEW_OFFER, str(offer.id))
    room.memory_version += 1
    room.memory_updated_at = now
    return offer


def _sibling_memory(room: Room) -> dict[str, Any]:
    """The shared deal facts carry over; the host branch is seeded afresh, and plans, goals,
    rulings and the offer reference belong to the old room's negotiation."""
    memory = room.memory or {}
    carried: dict[str, Any] = {
        key: copy.deepcopy(memory[key]) for key in (memdoc.DEAL,) if key in memory
    }
    carried.setdefault(memdoc.DEAL, {})
    if isinstance(carried[memdoc.DEAL], dict):
        carried[memdoc.DEAL]["continuesFromRoom"] = str(room.id)
    return carried


def _seat(participants: list[Participant], seat: Seat) -> Participant | None:
    return next((p for p in participants if p.key == seat.value), None)


async def _names(db: Db, host: Participant, visitor: Participant) -> tuple[str, str]:
    async def name(account_id: uuid.UUID | None) -> str:
        account = await db.get(Account, account_id) if account_id else None
        return account.display_name if account is not None else GUEST_NAME

    return await name(host.account_id), await name(visitor.account_id)


def _brand(room: Room | None) -> str | None:
    """The brand's company as the visitor's side recorded it (``visitor.company``), if any:
    the agreement names the company rather than a guest's placeholder name."""
    branch = (room.memory or {}).get(Seat.VISITOR.value) if room is not None else None
    company = branch.get("company") if isinstance(branch, dict) else None
    return company.strip() if isinstance(company, str) and company.strip() else None


async def _names_by_account(db: Db, offer: Offer) -> tuple[str, str]:
    seller = await db.get(Account, offer.seller_account_id)
    buyer = await db.get(Account, offer.buyer_account_id) if offer.buyer_account_id else None
    return (
        seller.display_name if seller is not None else "the talent",
        buyer.display_name if buyer is not None else GUEST_NAME,
    )
