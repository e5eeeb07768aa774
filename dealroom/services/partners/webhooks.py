"""Partner webhooks: managing endpoints, and the outbox writer (rules W1-W5 in
``domain/webhooks.py``).

The outbox: ``stage_recorded`` is called by ``offers.record_stage`` in the stage change's own
transaction, so a delivery row exists exactly when the change committed (a rolled-back change
sends nothing). Workers in any process deliver them (``jobs/webhook_delivery.py``)."""

from __future__ import annotations

import base64
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import structlog

from dealroom.domain import leaks
from dealroom.domain import webhooks as rules
from dealroom.domain.cursors import parse_room_cursor, room_cursor
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found, unauthenticated
from dealroom.domain.seats import Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    Flag,
    Offer,
    OfferEvent,
    Room,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEvent,
)
from dealroom.persistence.offers import OfferRepository
from dealroom.persistence.seats import SeatRepository
from dealroom.persistence.webhooks import WebhookRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.links.guard import Pinned, Refused, pin
from dealroom.services.partners.payloads import compose

FIREWALL_FLAG = "firewall"

log = structlog.get_logger(__name__)

WAKE_CHANNEL = "webhook-deliveries"
"""Published after a commit that wrote deliveries: every process's workers look at once."""

Publish = tuple[str, str]
WAKE: Publish = (WAKE_CHANNEL, "1")


# --- destinations ---------------------------------------------------------------------------


async def check_destination(url: str, *, allow_loopback: bool) -> Pinned:
    """W4 through the links' address guard (``services/links/guard.py``), the host resolved
    now: the URL bound to the address that was checked, which is where an attempt connects
    (no second lookup, so a name cannot answer a public address for the check and a private
    one for the send). Raises ``rules.DestinationError``."""
    rules.check_url(url)
    try:
        return await pin(url, allow_loopback=allow_loopback, ports=None)
    except Refused as exc:
        raise rules.DestinationError(f"The webhook destination is refused: {exc}.") from None


# --- managing endpoints ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreatedWebhook:
    row: Webhook
    secret: str
    """The signing secret: returned once (it is kept, as HMAC signing needs it)."""


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _owner(identity: Identity) -> Account:
    if identity.account is None:
        raise unauthenticated()
    return identity.account


async def create_webhook(
    db: Db,
    clock: Clock,
    identity: Identity,
    *,
    url: str,
    events: list[str],
    allow_loopback: bool,
) -> CreatedWebhook:
    account = _owner(identity)
    try:
        chosen = rules.parse_events(events)
    except ValueError as exc:
        raise bad_input(str(exc), "events") from None
    url = url.strip()
    try:
        await check_destination(url, allow_loopback=allow_loopback)
    except rules.DestinationError as exc:
        raise bad_input(str(exc), "url") from None
    secret = new_secret()
    row = Webhook(
        id=uuid.uuid4(),
        account_id=account.id,
        url=url,
        events=[e.value for e in chosen],
        secret=secret,
        status="active",
        created_at=clock.now(),
    )
    await db.add(row)
    log.info("webhook_created", account_id=str(account.id), webhook_id=str(row.id))
    return CreatedWebhook(row=row, secret=secret)


async def owned_webhook(db: Db, identity: Identity, webhook_id: uuid.UUID) -> Webhook:
    account = _owner(identity)
    row = await db.get(Webhook, webhook_id)
    if row is None or row.account_id != account.id:
        raise not_found("Webhook")
    return row


async def webhooks_of(db: Db, identity: Identity) -> list[Webhook]:
    account = _owner(identity)
    return await WebhookRepository(db).of_account(account.id)


async def delete_webhook(db: Db, identity: Identity, webhook_id: uuid.UUID) -> None:
    row = await owned_webhook(db, identity, webhook_id)
    await WebhookRepository(db).remove(row)


async def enable_webhook(db: Db, identity: Identity, webhook_id: uuid.UUID) -> Webhook:
    """W3: the owner turns a disabled endpoint back on; its pending deliveries resume."""
    row = await owned_webhook(db, identity, webhook_id)
    row.status = "active"
    row.disabled_at = None
    row.disabled_reason = None
    await db.flush()
    return row


@dataclass(frozen=True, slots=True)
class DeliveryPage:
    rows: list[tuple[WebhookDelivery, WebhookEvent]]
    has_next: bool


async def deliveries(
    db: Db, identity: Identity, webhook_id: uuid.UUID, *, first: int, after: str | None
) -> DeliveryPage:
    """The delivery log of one endpoint, newest first."""
    await owned_webhook(db, identity, webhook_id)
    rows = await WebhookRepository(db).deliveries_page(
        webhook_id,
        limit=first + 1,
        after_row=None if after is None else parse_room_cursor(after),
    )
    return DeliveryPage(rows=rows[:first], has_next=len(rows) > first)


def delivery_cursor(delivery: WebhookDelivery) -> str:
    return room_cursor(delivery.created_at, delivery.id)


async def attempts_of(db: Db, delivery_id: uuid.UUID) -> list[WebhookAttempt]:
    return await WebhookRepository(db).attempts(delivery_id)


async def redeliver(
    db: Db, clock: Clock, identity: Identity, delivery_id: uuid.UUID
) -> WebhookDelivery:
    """Send a delivery again, with the same event id (partners dedupe on it), in a new
    retry window. A delivery being attempted right now is CONFLICT."""
    delivery = await db.get(WebhookDelivery, delivery_id)
    if delivery is None:
        raise not_found("Delivery")
    await owned_webhook(db, identity, delivery.webhook_id)
    now = clock.now()
    if delivery.lease_until is not None and delivery.lease_until > now:
        raise DomainError(ErrorCode.CONFLICT, "That delivery is being attempted right now.")
    delivery.status = "pending"
    delivery.next_attempt_at = now
    delivery.first_attempt_at = None
    delivery.lease_until = None
    await db.flush()
    return delivery


# --- the outbox -----------------------------------------------------------------------------


async def stage_recorded(
    db: Db, offer: Offer, change: OfferEvent, *, band_percent: Decimal | None = None
) -> list[Publish]:
    """W1: write the logical events of one stored stage change and a delivery for every
    active endpoint of either party that asked for them, in the caller's transaction.
    Returns the wake-up to publish after commit (nothing when no endpoint listens).
    ``band_percent`` is the firewall's F10 band for the payloads."""
    endpoints = await _listening(db, offer)
    if not endpoints:
        return []
    previous = await OfferRepository(db).latest_stage(offer.id, before_seq=change.seq)
    wrote = False
    for event_type in rules.events_for_stage(
        first=previous is None, stage=change.stage, previous=previous, actor=change.actor
    ):
        payload = compose(
            event_type,
            offer,
            stage=change.stage,
            previous_stage=previous,
            version=change.version,
            at=change.created_at,
        )
        payload = await screened_payload(
            db, offer, payload, change.created_at, band_percent=band_percent
        )
        wrote |= await _enqueue(
            db,
            endpoints,
            event_type,
            f"offer_event:{change.id}:{event_type}",
            offer,
            payload,
            change.created_at,
        )
    return [WAKE] if wrote else []


async def payment_declined(
    db: Db,
    clock: Clock,
    *,
    offer_id: uuid.UUID,
    idempotency_key: str,
    message: str,
    band_percent: Decimal | None = None,
) -> list[Publish]:
    """W1: a card declined at payment time changes no stage (the mutation's transaction rolls
    back); the resolver records the event in a transaction of its own. A retry with the same
    idempotency key is the same event."""
    offer = await db.get(Offer, offer_id)
    if offer is None:
        return []
    endpoints = await _listening(db, offer)
    if not endpoints:
        return []
    stage = await OfferRepository(db).latest_stage(offer.id)
    now = clock.now()
    event_type = rules.EventType.PAYMENT_DECLINED
    payload = compose(
        event_type,
        offer,
        stage=stage or "",
        previous_stage=stage,
        version=offer.version,
        at=now,
        payment={"status": "declined", "message": message[:200]},
    )
    payload = await screened_payload(db, offer, payload, now, band_percent=band_percent)
    source = f"payment_declined:{offer.id}:{idempotency_key}"[:120]
    wrote = await _enqueue(db, endpoints, event_type, source, offer, payload, now)
    return [WAKE] if wrote else []


async def screened_payload(
    db: Db,
    offer: Offer,
    payload: dict[str, Any],
    now: datetime,
    *,
    band_percent: Decimal | None = None,
) -> dict[str, Any]:
    """A webhook payload is a host→outside flow, so the private-value firewall reads it before it
    is stored (``leaks.screen``, with the deployment's band ``band_percent``). The terms already
    passed it when Offer-Gen drew them; should one still state a private value, or a figure
    close to a limit, the terms are withheld from the payload (the stage still goes out) and
    operators get a flag."""
    room = await db.get(Room, offer.room_id)
    memory = dict(room.memory or {}) if room is not None else {}
    matches = leaks.screen(memory, payload.get("data"), band_percent=band_percent)
    if not matches:
        return payload
    data = dict(payload["data"]) | {"terms": None, "termsWithheld": True}
    host = await SeatRepository(db).id_by_key(offer.room_id, Seat.HOST.value)
    if host is None:
        return payload | {"data": data}
    await db.add(
        Flag(
            room_id=offer.room_id,
            participant_id=host,
            level=FIREWALL_FLAG,
            evidence=f"webhook payload for offer {offer.id}: terms withheld "
            f"({len(matches)} private value(s) matched)",
            created_at=now,
        )
    )
    log.warning("webhook_terms_withheld", offer_id=str(offer.id))
    return payload | {"data": data}


async def _listening(db: Db, offer: Offer) -> list[Webhook]:
    """The active endpoints of the offer's parties (seller and buyer): one indexed query,
    the whole cost of the outbox when nobody listens."""
    parties = [offer.seller_account_id]
    if offer.buyer_account_id is not None:
        parties.append(offer.buyer_account_id)
    return await WebhookRepository(db).active_of(parties)


async def _enqueue(
    db: Db,
    endpoints: list[Webhook],
    event_type: rules.EventType,
    source: str,
    offer: Offer,
    payload: dict[str, Any],
    now: datetime,
) -> bool:
    wanted = [w for w in endpoints if event_type.value in (w.events or [])]
    if not wanted:
        return False
    if await WebhookRepository(db).event_written(source):
        return False  # W1: written once
    event = WebhookEvent(
        id=uuid.uuid4(),
        type=event_type.value,
        source=source,
        offer_id=offer.id,
        payload=payload,
        created_at=now,
    )
    await db.add(event)
    await db.add(
        *[
            WebhookDelivery(
                id=uuid.uuid4(),
                webhook_id=w.id,
                event_id=event.id,
                status="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
            for w in wanted
        ]
    )
    return True
