"""What Offer-Gen's screened terms do to the room's written offer (O5, O6): compared by the
fingerprint of their commercial fields, the terms leave the offer alone (the same terms), draw
a new version (a material rewrite clears the brand's stamp), mint the room's first offer, or —
for a booked offer — open a sibling deal room for the same pair with the new offer in it.

Called inside Offer-Gen's apply (``offer_turn``), in its transaction; returns what to publish
after the commit."""

from __future__ import annotations

import copy
import uuid
from decimal import Decimal
from typing import Any

import structlog

from dealroom.agents import offer_gen
from dealroom.agents.models.base import AgentName
from dealroom.domain import memory as memdoc
from dealroom.domain import memory_records
from dealroom.domain import offers as rules
from dealroom.domain.offer_stage import BOOKED, OfferStatus
from dealroom.domain.seats import RoomKind, RoomMode, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.messages import MessageRepository
from dealroom.persistence.models import Offer, Participant, Room
from dealroom.persistence.offered_services import ServiceRepository
from dealroom.persistence.offers import OfferRepository
from dealroom.services.clock import Clock
from dealroom.services.live.publish import Publish
from dealroom.services.offers.actions import queue_agreement
from dealroom.services.offers.events import record_stage
from dealroom.services.offers.reads import state_of
from dealroom.services.rooms.service import seed_flag, seed_host_memory
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.runs import system_line

log = structlog.get_logger(__name__)


async def draw(
    db: Db,
    clock: Clock,
    run: RunSnapshot,
    room: Room,
    host: Participant,
    visitor: Participant,
    extracted: offer_gen.ExtractedTerms,
    now: Any,
    *,
    band_percent: Decimal | None = None,
) -> list[Publish]:
    """Apply the rewrite decision (``rules.rewrite``) for the screened terms; ``band_percent``
    is the firewall's F10 band for what the stage change and a sibling's seed pass."""
    assert extracted.terms is not None
    terms = extracted.terms
    seller, buyer = room.host_account_id, visitor.account_id
    fields = rules.commercial_fields(terms, str(seller), str(buyer) if buyer else None)
    new_print = rules.fingerprint(fields)
    offers = OfferRepository(db)
    current = await offers.current(room.id, fresh=True)
    campaign = False
    if current is not None:
        since = await MessageRepository(db).times_since(visitor.id, current.updated_at)
        campaign = rules.new_campaign(current.updated_at, since)
    decision = rules.rewrite(
        state_of(current) if current is not None else None,
        current.fingerprint if current is not None else None,
        new_print,
        abandoned=await offers.ever_ruled(room.id, rules.NEW_OFFER, "abandoned"),
        campaign=campaign,
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
            return await record_stage(
                db, current, actor=AgentName.OFFER_GEN.value, now=now, band_percent=band_percent
            )
        case rules.Rewrite.MINT:
            offer = await _mint(db, room, run.id, terms, extracted, new_print, buyer, now)
            return await record_stage(
                db, offer, actor=AgentName.OFFER_GEN.value, now=now, band_percent=band_percent
            )
        case rules.Rewrite.SIBLING:
            booked = current is not None and state_of(current).stage in BOOKED
            return await _sibling(
                db,
                clock,
                run,
                room,
                host,
                visitor,
                extracted,
                new_print,
                now,
                booked=booked,
                band_percent=band_percent,
            )


async def _sibling(
    db: Db,
    clock: Clock,
    run: RunSnapshot,
    room: Room,
    host: Participant,
    visitor: Participant,
    extracted: offer_gen.ExtractedTerms,
    new_print: str,
    now: Any,
    *,
    booked: bool,
    band_percent: Decimal | None,
) -> list[Publish]:
    """O6, O10: the booked (or closed, or abandoned) deal stays as it is; the new terms are
    drawn in a new deal room for the same pair, which both sides find in their room list."""
    assert extracted.terms is not None
    # The host is seeded like any new room (home branch if newer than durable), never by
    # copying the old room's host branch.
    seeded = await seed_host_memory(
        db,
        room.host_account_id,
        band_percent=band_percent,
        service=await ServiceRepository(db).key_of(room.service_id),  # S1: the same service
    )
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
    published = await record_stage(
        db, offer, actor=AgentName.OFFER_GEN.value, now=now, band_percent=band_percent
    )
    text = (
        "The booked offer in this room stays as it is. The changed terms are drawn as a "
        f"new written offer in a new deal room: {sibling.id}."
        if booked
        else "This room's deal stays as it is. The new terms are drawn as a "
        f"new written offer in a new deal room: {sibling.id}."
    )
    for pane in (host, visitor):
        line = await system_line(
            db,
            clock,
            RunSnapshot(run.id, room.id, pane.id, run.agent, None, None, 0, run.attempts),
            text,
            key=f"run:{run.id}:sibling",
        )
        published += [line] if line else []
    await db.add(queue_agreement(sibling.id, sibling_host.id, now))
    return published


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
    room.memory = memory_records.record_offer(room.memory or {}, rules.NEW_OFFER, str(offer.id))
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
