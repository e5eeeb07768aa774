"""Changing a written offer: approvals (O2-O4), the chat shortcuts Counter / Reject / Add
(O7), and the goal's effects (queueing Offer-Gen and the agreement, closing the live offer
when its goal is abandoned, O9). Each decides under the room's lock on the offer as committed;
payment is ``offer_payments``."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from decimal import Decimal

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.domain import offers as rules
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.domain.offer_stage import OfferStatus
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun
from dealroom.persistence.offers import OfferRepository
from dealroom.realtime.broker import Broker
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.live.events import MessageView
from dealroom.services.live.publish import Publish, RunSignal, publish_after_commit
from dealroom.services.offers.events import record_stage
from dealroom.services.offers.reads import (
    OfferAccess,
    approver,
    locked_offer,
    offer_for_reader,
    signed_in_buyer,
    state_of,
)
from dealroom.services.rooms import messages as message_service
from dealroom.services.turns.queue import new_run

log = structlog.get_logger(__name__)


# --- approvals ------------------------------------------------------------------------------


async def approve_offer(
    db: Db,
    broker: Broker,
    clock: Clock,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    version: int | None,
    band_percent: Decimal | None = None,
) -> OfferAccess:
    """O2-O4: the brand's approval stamps this version; the talent's is the booking."""
    found = await offer_for_reader(db, identity, offer_id)
    seat = found.room.reader_seat
    signed_in_buyer(found.room, seat, "approve")
    approver(found.room, seat)
    offer = await locked_offer(db, offer_id, found.offer.room_id)
    outcome = rules.approve(state_of(offer), seat, version)
    now = clock.now()
    match outcome:
        case rules.Approval.ALREADY:
            return OfferAccess(offer, found.room)
        case rules.Approval.BRAND_STAMPED:
            offer.brand_approved_at = now
        case rules.Approval.BOOKED:
            offer.status = OfferStatus.ACCEPTED.value
            offer.accepted_at = now
    offer.updated_at = now
    await db.flush()
    published = await record_stage(db, offer, actor=seat.value, now=now, band_percent=band_percent)
    publish_after_commit(db, broker, published)
    log.info("offer_approved", offer_id=str(offer.id), by=seat.value, outcome=outcome.value)
    return OfferAccess(offer, found.room)


# --- Counter / Reject / Add -----------------------------------------------------------------


def shortcut_line(action: rules.Action, text: str) -> str:
    """The chat line a shortcut posts as the reader (O7)."""
    text = text.strip()
    match action:
        case rules.Action.COUNTER:
            return f"{rules.COUNTER_PREFIX} {text}"
        case rules.Action.REJECT:
            return f"{rules.REJECT_PREFIX} {text}".strip()
        case rules.Action.ADD:
            return f"{rules.ADD_PREFIX} {text}"
    raise ValueError(action)


async def offer_shortcut(
    db: Db,
    broker: Broker,
    clock: Clock,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    action: rules.Action,
    text: str,
    client_message_id: str | None,
    limits: message_service.PostLimits,
    announce: RunSignal | None,
) -> tuple[MessageView, OfferAccess]:
    """O7: post a line into the reader's own pane, as the reader; the row is left until an
    agent updates or closes it. Idempotent: by default the same action with the same text on
    the same version posts once (a double click)."""
    if action is not rules.Action.REJECT and not text.strip():
        raise DomainError(ErrorCode.BAD_USER_INPUT, "Say what to change.", field="text")
    found = await offer_for_reader(db, identity, offer_id)
    # Decided under the room's lock, like an approval: a counter racing the booking is either
    # before it or refused, never a line after it.
    offer = await locked_offer(db, offer_id, found.offer.room_id)
    rules.check_shortcut(state_of(offer), action)
    body = shortcut_line(action, text)
    if client_message_id is None:
        digest = hashlib.sha256(body.encode()).hexdigest()[:16]
        client_message_id = f"offer:{action.value.lower()}:{offer.version}:{digest}"
        client_message_id = f"{client_message_id}:{str(offer_id)[:8]}"
    view = await message_service.post_message(
        db,
        broker,
        clock,
        identity,
        room_id=found.offer.room_id,
        body=body,
        client_message_id=client_message_id,
        seat=None,
        limits=limits,
        announce=announce,
    )
    return view, OfferAccess(offer, found.room)


# --- the goal's effects ---------------------------------------------------------------------


def queue_offer_gen(room_id: uuid.UUID, host_pane: uuid.UUID, now: datetime) -> AgentRun:
    """Offer-Gen runs in the host's pane: one at a time per room, in order."""
    return new_run(room_id=room_id, participant_id=host_pane, agent=AgentName.OFFER_GEN, now=now)


def queue_agreement(room_id: uuid.UUID, host_pane: uuid.UUID, now: datetime) -> AgentRun:
    return new_run(room_id=room_id, participant_id=host_pane, agent=AgentName.AGREEMENT, now=now)


async def close_live_offer(
    db: Db,
    room_id: uuid.UUID,
    *,
    now: datetime,
    actor: str,
    band_percent: Decimal | None = None,
) -> list[Publish]:
    """O9: ``abandoned`` of ``new-offer`` closes the room's live written offer (reject-offer).
    The caller holds the room's lock."""
    offer = await OfferRepository(db).current(room_id, fresh=True)
    if offer is None or not rules.closes_on_abandon(state_of(offer)):
        return []
    offer.status = OfferStatus.REJECTED.value
    offer.closed_at = now
    offer.updated_at = now
    await db.flush()
    return await record_stage(db, offer, actor=actor, now=now, band_percent=band_percent)
