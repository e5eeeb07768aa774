"""Written-offer resolvers: reads, approvals, the chat shortcuts, payment, and the stage
subscription for partner integrations."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Never

import strawberry

from dealroom.domain import offers as rules
from dealroom.domain.cursors import parse_event_cursor
from dealroom.domain.errors import DomainError, ErrorCode
from dealroom.resolvers.live import Admit, Guarded, Opened
from dealroom.schema.context import Info
from dealroom.schema.fanout import shared
from dealroom.schema.offer_types import Payment, StageChanged
from dealroom.schema.room_types import Offer
from dealroom.schema.scope_gate import require_key_scope
from dealroom.schema.types import OfferChatPayload, PaymentSetup, PayOfferPayload
from dealroom.services.accounts.identity import resolve_identity
from dealroom.services.live.events import StageChangedEvent
from dealroom.services.live.publish import publish_after_commit
from dealroom.services.offers import actions as offer_actions
from dealroom.services.offers import events as offer_events
from dealroom.services.offers import payments as offer_payments
from dealroom.services.offers import reads as offers
from dealroom.services.ops import metrics
from dealroom.services.partners import webhooks
from dealroom.services.rooms import messages


async def offer(info: Info, id: strawberry.ID) -> Offer:
    identity = await info.context.identity()
    found = await offers.offer_for_reader(info.context.db, identity, offers.parse_offer_id(id))
    return Offer.for_reader(found.offer, found.room.reader_seat)


async def approve_offer(info: Info, offer_id: strawberry.ID, version: int | None) -> Offer:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        found = await offer_actions.approve_offer(
            db,
            ctx.app.broker,
            ctx.app.clock,
            identity,
            offer_id=offers.parse_offer_id(offer_id),
            version=version,
            band_percent=ctx.app.settings.firewall_band_percent,
        )
    return Offer.for_reader(found.offer, found.room.reader_seat)


async def offer_shortcut(
    info: Info,
    offer_id: strawberry.ID,
    action: rules.Action,
    text: str,
    client_message_id: str | None,
) -> OfferChatPayload:
    from dealroom.schema.pane_types import Message

    ctx = info.context
    identity = await ctx.identity()
    parsed = offers.parse_offer_id(offer_id)
    async with ctx.transaction() as db:
        view, found = await offer_actions.offer_shortcut(
            db,
            ctx.app.broker,
            ctx.app.clock,
            identity,
            offer_id=parsed,
            action=action,
            text=text,
            client_message_id=client_message_id,
            limits=messages.PostLimits(
                per_minute=ctx.app.settings.posts_per_minute,
                session_pause=ctx.app.settings.session_pause,
            ),
            announce=ctx.app.runner.signal,
        )
    return OfferChatPayload(
        message=Message.from_view(view, view.seat),
        offer=Offer.for_reader(found.offer, found.room.reader_seat),
    )


async def pay_offer(
    info: Info, offer_id: strawberry.ID, payment_method: str, idempotency_key: str
) -> PayOfferPayload:
    ctx = info.context
    identity = await ctx.identity()
    parsed = offers.parse_offer_id(offer_id)
    try:
        async with ctx.transaction() as db:
            payment, found, client_secret = await offer_payments.pay_offer(
                db,
                ctx.app.broker,
                ctx.app.clock,
                ctx.app.payments,
                identity,
                offer_id=parsed,
                payment_method=payment_method,
                idempotency_key=idempotency_key,
                band_percent=ctx.app.settings.firewall_band_percent,
            )
    except DomainError as exc:
        if exc.code is ErrorCode.PAYMENT_DECLINED:
            # The decline changed nothing, so it was rolled back; partners still hear of it
            # (W1), in a transaction of its own.
            async with ctx.transaction() as db:
                wake = await webhooks.payment_declined(
                    db,
                    ctx.app.clock,
                    offer_id=parsed,
                    idempotency_key=idempotency_key.strip(),
                    message=exc.message,
                    band_percent=ctx.app.settings.firewall_band_percent,
                )
                publish_after_commit(db, ctx.app.broker, wake)
        raise
    return PayOfferPayload(
        payment=Payment.from_row(payment),
        offer=Offer.for_reader(found.offer, found.room.reader_seat),
        client_secret=client_secret,
        publishable_key=getattr(ctx.app.payments, "publishable_key", None)
        if client_secret
        else None,
    )


def payment_setup(info: Info) -> PaymentSetup:
    """What a paying client needs before it pays; nothing secret (the publishable key is
    public by Stripe's design)."""
    app = info.context.app
    if app.payments.name != "stripe":
        return PaymentSetup(provider=app.payments.name)
    return PaymentSetup(
        provider=app.payments.name,
        publishable_key=getattr(app.payments, "publishable_key", None),
        stripe_js_url=app.settings.stripe_js_url,
    )


def offer_stage(
    info: Info, offer_id: strawberry.ID, after: str | None
) -> Guarded[StageChangedEvent, Never, StageChanged]:
    async def open(admit: Admit) -> Opened[StageChangedEvent, Never, StageChanged]:
        ctx = info.context
        parsed = offers.parse_offer_id(offer_id)
        start = parse_event_cursor(after) if after is not None else None
        started = await admit()
        room_id = await _authorise(info, parsed)
        return Opened(
            offer_events.follow_offer(
                ctx.app.sessionmaker,
                ctx.app.broker,
                parsed,
                start,
                started=started,
                rereads=ctx.app.admission.rereads,
                heartbeats=ctx.app.heartbeats,
            ),
            lambda: _authorise(info, parsed),
            field="offerStage",
            room_id=room_id,
            project=_stage_item,
        )

    return Guarded(info, open, metrics.SUBSCRIPTIONS_OPEN.labels("offerStage"))


def _stage_item(event: StageChangedEvent) -> StageChanged:
    return shared((event,), partial(StageChanged.from_event, event))


async def _authorise(info: Info, offer_id: uuid.UUID) -> uuid.UUID:
    """Participants only; a short unit of work, closed before the stream waits. Returns the
    offer's room (its seats are what the re-checks watch)."""
    ctx = info.context
    async with ctx.reading() as db:
        identity = await resolve_identity(db, ctx.app.clock, ctx.credentials())
        require_key_scope(identity, "offerStage")
        found = await offers.offer_for_reader(db, identity, offer_id)
        return found.offer.room_id
