"""Written offers: reading them, recording stage changes, approvals, the chat shortcuts,
payment, and closing one when its goal is abandoned (ARCHITECTURE "Offers and the stage
vocabulary"; rules O1-O9 in ``domain/offers.py``).

Every change to an offer takes the room's row lock first and re-reads the offer under it, so
two clicks (both sides at once, or a double click) decide one after the other. A stage change
is an ``offer_events`` row numbered in the room's event sequence and is published after
commit to both panes and to the offer's own channel.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import partial

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.models.base import AgentName
from dealroom.domain import money, stage_notices
from dealroom.domain import offers as rules
from dealroom.domain.errors import DomainError, ErrorCode, forbidden, not_found
from dealroom.domain.offer_stage import OfferRow, OfferStatus, Stage, derive_stage
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Offer, OfferEvent, Participant, Payment
from dealroom.persistence.offers import OfferRepository, stage_prevs
from dealroom.persistence.repositories import RoomRepository
from dealroom.realtime.broker import Broker
from dealroom.services import guests, webhooks
from dealroom.services import messages as message_service
from dealroom.services.clock import Clock
from dealroom.services.events import (
    MessageView,
    StageChangedEvent,
    offer_channel,
    pane_channel,
    stage_event,
)
from dealroom.services.identity import Identity
from dealroom.services.live_stream import replay_then_live
from dealroom.services.payments import ChargeStatus, PaymentProvider
from dealroom.services.publish import Publish, publish_after_commit
from dealroom.services.rooms import RoomAccess, parse_id, room_for_reader
from dealroom.services.run_queue import new_run
from dealroom.services.turns import RUNS_CHANNEL

log = structlog.get_logger(__name__)


DEFAULT_DUE_PERCENT = Decimal("100")
"""The platform's payment schedule when the offer names none: the whole fee is due at
booking. Offer-Gen names the missing schedule as an open question; it never invents one."""


def state_of(offer: Offer) -> rules.OfferState:
    return rules.OfferState(OfferStatus(offer.status), offer.brand_approved_at, offer.version)


def stage_of(offer: Offer | None) -> Stage:
    if offer is None:
        return derive_stage(None)
    return derive_stage(OfferRow(OfferStatus(offer.status), offer.brand_approved_at))


async def room_stage(db: Db, room_id: uuid.UUID) -> Stage:
    """The live stage of a room, projected from its current offers row (ST1)."""
    return stage_of(await OfferRepository(db).current(room_id))


@dataclass(frozen=True, slots=True)
class OfferAccess:
    offer: Offer
    room: RoomAccess


async def offer_for_reader(db: Db, identity: Identity, offer_id: uuid.UUID) -> OfferAccess:
    """Participants only: anyone else gets NOT_FOUND, as for rooms."""
    offer = await OfferRepository(db).by_id(offer_id)
    if offer is None:
        raise not_found("Offer")
    try:
        room = await room_for_reader(db, identity, offer.room_id)
    except DomainError as exc:
        if exc.code is ErrorCode.NOT_FOUND:
            raise not_found("Offer") from None
        raise
    return OfferAccess(offer, room)


def parse_offer_id(raw: str) -> uuid.UUID:
    return parse_id(raw, "offer")


async def record_stage(db: Db, offer: Offer, *, actor: str, now: datetime) -> list[Publish]:
    """Store the offer's (new) stage as an event in the room's sequence; return what to
    publish after commit: a StageChanged for each pane and one for the offer's channel."""
    panes, offer_prev = await stage_prevs(db, offer.room_id, offer.id)
    rooms = RoomRepository(db)
    seq = await rooms.next_event_seq(offer.room_id, now)
    stage = stage_of(offer).value
    row = OfferEvent(
        id=uuid.uuid4(),
        room_id=offer.room_id,
        offer_id=offer.id,
        seq=seq,
        stage=stage,
        version=offer.version,
        actor=actor,
        created_at=now,
    )
    # Issue 12: each side hears the change from its own agent, once — the notice runs are
    # queued in the event's own transaction and keyed by it (unique per pane).
    notices = await stage_notice_runs(db, row, await rooms.participants(offer.room_id), now)
    await db.add(row, *notices)
    # The partner webhook outbox, in this same transaction (issue 16): committed with the
    # change or not at all.
    outbox = await webhooks.stage_recorded(db, offer, row)

    def event(prev: int) -> str:
        return StageChangedEvent(seq, prev, offer.id, stage, offer.version, now).encode()

    published = [(pane_channel(offer.room_id, Seat(key)), event(prev)) for key, prev in panes]
    published.append((offer_channel(offer.id), event(offer_prev)))
    if notices:
        published.append((RUNS_CHANNEL, "1"))  # every process's runner wakes for them
    return published + outbox


async def stage_notice_runs(
    db: Db, event: OfferEvent, participants: Sequence[Participant], now: datetime
) -> list[AgentRun]:
    """One persona run per pane the change concerns (SN1), told the event (SN2)."""
    told = stage_notices.notices(Stage(event.stage), event.version, event.actor)
    return [
        new_run(
            room_id=event.room_id,
            participant_id=p.id,
            agent=AgentName.PERSONA,
            now=now,
            trigger_event_id=event.id,
        )
        for p in participants
        if p.key in told
    ]


async def _locked(db: Db, offer_id: uuid.UUID, room_id: uuid.UUID) -> Offer:
    """The offer re-read under its room's lock: decisions are made on committed state."""
    await RoomRepository(db).lock(room_id)
    offer = await OfferRepository(db).by_id(offer_id, fresh=True)
    if offer is None:
        raise not_found("Offer")
    return offer


# --- approvals ------------------------------------------------------------------------------


def _signed_in_buyer(room: RoomAccess, seat: Seat, verb: str) -> None:
    """A guest visitor may not approve or pay until the room is claimed (the login gate)."""
    visitor = room.participant(Seat.VISITOR)
    if seat is Seat.VISITOR and visitor is not None and visitor.account_id is None:
        raise guests.login_required(f"Sign in to {verb} the written offer.")


async def approve_offer(
    db: Db,
    broker: Broker,
    clock: Clock,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    version: int | None,
) -> OfferAccess:
    """O2-O4: the brand's approval stamps this version; the talent's is the booking."""
    found = await offer_for_reader(db, identity, offer_id)
    seat = found.room.reader_seat
    _signed_in_buyer(found.room, seat, "approve")
    offer = await _locked(db, offer_id, found.offer.room_id)
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
    publish_after_commit(db, broker, await record_stage(db, offer, actor=seat.value, now=now))
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
    announce: Callable[[], Awaitable[None]] | None,
) -> tuple[MessageView, OfferAccess]:
    """O7: post a line into the reader's own pane, as the reader; the row is left until an
    agent updates or closes it. Idempotent: by default the same action with the same text on
    the same version posts once (a double click)."""
    if action is not rules.Action.REJECT and not text.strip():
        raise DomainError(ErrorCode.BAD_USER_INPUT, "Say what to change.", field="text")
    found = await offer_for_reader(db, identity, offer_id)
    # Decided under the room's lock, like an approval: a counter racing the booking is either
    # before it or refused, never a line after it.
    offer = await _locked(db, offer_id, found.offer.room_id)
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


# --- payment --------------------------------------------------------------------------------


def quote_for(offer: Offer) -> money.Quote | None:
    """The brand's payment: the due slice of the fee plus the platform fee (None when the
    offer holds no usable fee)."""
    fee = offer.terms.get("fee") if isinstance(offer.terms, dict) else None
    if not isinstance(fee, dict):
        return None
    try:
        amount = Decimal(str(fee.get("amount")))
        percent_raw = offer.terms.get("dueSlicePercent")
        percent = Decimal(str(percent_raw)) if percent_raw else DEFAULT_DUE_PERCENT
        return money.quote(amount, str(fee.get("currency")), percent)
    except (DomainError, ArithmeticError, ValueError):
        return None


async def pay_offer(
    db: Db,
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    identity: Identity,
    *,
    offer_id: uuid.UUID,
    payment_method: str,
    idempotency_key: str,
) -> tuple[Payment, OfferAccess]:
    """O8: the brand pays the quoted amount. Captured → PAYMENT_HELD; capture pending →
    PENDING_PAY_CAPTURE; declined → the stage stays BOOKED_AWAITING_PAYMENT and the error
    says so. Idempotent on ``idempotency_key`` (here and at the provider)."""
    key = idempotency_key.strip()
    if not 0 < len(key) <= 64:
        raise DomainError(
            ErrorCode.BAD_USER_INPUT,
            "idempotencyKey must be 1-64 characters.",
            field="idempotencyKey",
        )
    found = await offer_for_reader(db, identity, offer_id)
    seat = found.room.reader_seat
    if rules.role_of(seat) is not rules.Role.BRAND:
        raise forbidden("Only the brand pays a written offer.")  # before any idempotent replay
    _signed_in_buyer(found.room, seat, "pay")
    offer = await _locked(db, offer_id, found.offer.room_id)
    offers = OfferRepository(db)
    existing = await offers.payment(offer.id, key)
    if existing is not None:
        if existing.method != payment_method:
            raise DomainError(
                ErrorCode.CONFLICT,
                "That idempotencyKey was used with another payment method.",
                field="idempotencyKey",
            )
        return existing, OfferAccess(offer, found.room)
    rules.check_pay(state_of(offer), seat)
    quote = quote_for(offer)
    if quote is None:
        raise rules.conflict("The written offer holds no fee that can be paid.", state_of(offer))
    # The provider is idempotent on the key too: a crash after charging but before commit is
    # retried with the same key and charges nothing twice.
    charge = await provider.charge(
        amount=quote.total,
        currency=quote.currency,
        payment_method=payment_method,
        idempotency_key=f"{offer.id}:{key}",
    )
    if charge.status is ChargeStatus.DECLINED:
        raise DomainError(
            ErrorCode.PAYMENT_DECLINED,
            charge.message or "The payment was declined.",
            stage=stage_of(offer).value,
        )
    now = clock.now()
    payment = Payment(
        id=uuid.uuid4(),
        offer_id=offer.id,
        idempotency_key=key,
        payer_account_id=identity.account.id if identity.account else None,
        method=payment_method,
        provider=provider.name,
        provider_ref=charge.reference,
        status=charge.status.value,
        currency=quote.currency,
        due=quote.due,
        platform_fee=quote.platform_fee,
        total=quote.total,
        offer_version=offer.version,
        created_at=now,
        updated_at=now,
    )
    offer.status = (
        OfferStatus.PAYMENT_HELD.value
        if charge.status is ChargeStatus.CAPTURED
        else OfferStatus.PENDING_PAY_CAPTURE.value
    )
    offer.updated_at = now
    await db.add(payment)
    publish_after_commit(db, broker, await record_stage(db, offer, actor="payment", now=now))
    return payment, OfferAccess(offer, found.room)


async def capture_pending(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    clock: Clock,
    provider: PaymentProvider,
    *,
    limit: int = 50,
) -> int:
    """Ask the provider about pending captures; a captured one moves its offer to
    PAYMENT_HELD, a declined one back to ACCEPTED (BOOKED_AWAITING_PAYMENT). Returns how
    many offers moved. Run by the workers' sweep."""
    moved = 0
    db = Db(sessionmaker)
    try:
        pending = [
            (p.id, p.offer_id, p.provider_ref)
            for p in await OfferRepository(db).pending_payments(limit)
        ]
        await db.rollback()
    finally:
        await db.close()
    for payment_id, offer_id, reference in pending:
        if reference is None:
            continue
        charge = await provider.status(reference)
        if charge.status is ChargeStatus.PENDING:
            continue
        db = Db(sessionmaker)
        try:
            offer = await OfferRepository(db).by_id(offer_id)
            if offer is None:
                continue
            offer = await _locked(db, offer_id, offer.room_id)
            payment = await db.get(Payment, payment_id)
            if payment is None or payment.status != "pending":
                await db.rollback()
                continue
            now = clock.now()
            payment.status = charge.status.value
            payment.error = charge.message if charge.status is ChargeStatus.DECLINED else None
            payment.updated_at = now
            if offer.status == OfferStatus.PENDING_PAY_CAPTURE.value:
                offer.status = (
                    OfferStatus.PAYMENT_HELD.value
                    if charge.status is ChargeStatus.CAPTURED
                    else OfferStatus.ACCEPTED.value
                )
                offer.updated_at = now
                await db.flush()
                publish_after_commit(
                    db, broker, await record_stage(db, offer, actor="payment", now=now)
                )
                moved += 1
            await db.commit()
        finally:
            await db.close()
    return moved


# --- the goal's effects ---------------------------------------------------------------------


def queue_offer_gen(room_id: uuid.UUID, host_pane: uuid.UUID, now: datetime) -> AgentRun:
    """Offer-Gen runs in the host's pane: one at a time per room, in order."""
    return new_run(room_id=room_id, participant_id=host_pane, agent=AgentName.OFFER_GEN, now=now)


def queue_agreement(room_id: uuid.UUID, host_pane: uuid.UUID, now: datetime) -> AgentRun:
    return new_run(room_id=room_id, participant_id=host_pane, agent=AgentName.AGREEMENT, now=now)


async def close_live_offer(
    db: Db, room_id: uuid.UUID, *, now: datetime, actor: str
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
    return await record_stage(db, offer, actor=actor, now=now)


# --- following an offer's stage -------------------------------------------------------------

REPLAY_BATCH = 200


def follow_offer(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    offer_id: uuid.UUID,
    after: int | None,
    started: Callable[[], None] = lambda: None,
) -> AsyncGenerator[StageChangedEvent, None]:
    """An offer's stage changes: with ``after``, the stored ones after that cursor first, then
    live, with no gap and no duplicate (``prev`` links, as for panes). The caller has checked
    the reader is a participant."""
    return replay_then_live(
        broker,
        offer_channel(offer_id),
        after,
        partial(_offer_end, sessionmaker, offer_id),
        partial(_replay_offer, sessionmaker, offer_id),
        live=(StageChangedEvent,),
        started=started,
    )


async def _offer_end(sessionmaker: async_sessionmaker[AsyncSession], offer_id: uuid.UUID) -> int:
    db = Db(sessionmaker)
    try:
        return await OfferRepository(db).last_offer_event_seq(offer_id)
    finally:
        await db.close()


async def _replay_offer(
    sessionmaker: async_sessionmaker[AsyncSession], offer_id: uuid.UUID, after: int
) -> AsyncIterator[StageChangedEvent]:
    while True:
        db = Db(sessionmaker)
        try:
            rows = await OfferRepository(db).offer_events_after(offer_id, after, REPLAY_BATCH)
        finally:
            await db.close()
        for row in rows:
            yield stage_event(row, after)
            after = row.seq
        if len(rows) < REPLAY_BATCH:
            return
