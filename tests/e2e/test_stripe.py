"""The Stripe provider end to end: a real server over HTTP, the official SDK against a running
Stripe-compatible server (localstripe), and Stripe's webhooks into ``POST /webhooks/stripe``.

What localstripe does itself: PaymentMethods, PaymentIntents (create, confirm, capture,
cancel), refunds, card declines, and signed webhooks for ``payment_intent.succeeded`` and
``payment_intent.payment_failed``. What it lacks (an authorization webhook, disputes) is sent
as a Stripe-signed event built from its own PaymentIntent JSON (``tests/support/localstripe``),
verified by the SDK exactly like a real one."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount

from dealroom.config import Settings
from dealroom.domain.errors import DomainError
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Flag,
    HostPayout,
    Offer,
    OpsAction,
    Payment,
    StripeEvent,
    WebhookEvent,
)
from dealroom.realtime.broker import Broker
from dealroom.server import start_in_background
from dealroom.services.offers import payment_life
from dealroom.services.offers.stripe_provider import StripeProvider
from dealroom.services.unit_of_work import UnitOfWork
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import Client
from tests.support.localstripe import (
    CARD_DECLINED,
    PUBLISHABLE_KEY,
    SECRET_KEY,
    WEBHOOK_SECRET,
    LocalStripe,
    dispute,
    event,
    running_localstripe,
    signed,
)
from tests.support.offers import OFFER_FIELDS, negotiate_to_offer, offer_as, open_deal
from tests.support.partners import create_webhook, make_operator
from tests.support.turns import Deal

PAY = f"""
mutation($offerId: ID!, $method: String!, $key: String!) {{
  payOffer(offerId: $offerId, paymentMethod: $method, idempotencyKey: $key) {{
    payment {{ id status method currency due platformFee total offerVersion refunded error }}
    offer {{ {OFFER_FIELDS} }}
    clientSecret publishableKey
  }}
}}
"""
CONFIRM = """
mutation($offerId: ID!) { confirmDelivery(offerId: $offerId) { offer { id stage } } }
"""
CANCEL = """
mutation($offerId: ID!) { cancelPaidBooking(offerId: $offerId) { offer { id stage } } }
"""
PAYMENTS = "query($id: ID!) { offer(id: $id) { payments { status error refunded } } }"
TOTAL_UNITS = 480000
"""$8,000 with 50% upfront: $4,000 due plus the 20% fee, $4,800, in cents."""


@pytest.fixture
async def localstripe() -> AsyncIterator[LocalStripe]:
    async with running_localstripe() as running:
        yield running


def provider_for(stripe_server: LocalStripe) -> StripeProvider:
    return StripeProvider(
        SECRET_KEY,
        publishable_key=PUBLISHABLE_KEY,
        webhook_secret=WEBHOOK_SECRET,
        api_base=stripe_server.base_url,
        max_network_retries=2,
        timeout_seconds=10,
        webhook_tolerance_seconds=300,
    )


@pytest.fixture
async def server(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    localstripe: LocalStripe,
) -> AsyncIterator[Server]:
    provider = provider_for(localstripe)
    stripe_settings = settings.model_copy(
        update={"payment_provider": "stripe", "webhook_allow_loopback": True}
    )
    async with serving(stripe_settings, engine, broker, clock, payments=provider) as running:
        await localstripe.send_webhooks_to(f"{running.base_url}/webhooks/stripe")
        yield running
    await provider.close()


# --- arranging -------------------------------------------------------------------------------


async def booked(server: Server) -> tuple[Deal, str]:
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    for client in (d.visitor, d.host):
        await client.query(
            "mutation($id: ID!) { approveOffer(offerId: $id) { id stage } }", {"id": offer_id}
        )
    assert (await offer_as(d.visitor, offer_id))["stage"] == "BOOKED_AWAITING_PAYMENT"
    return d, offer_id


async def pay(client: Client, offer_id: str, method: str, key: str = "k1") -> dict[str, Any]:
    data: dict[str, Any] = (
        await client.query(PAY, {"offerId": offer_id, "method": method, "key": key})
    )["payOffer"]
    return data


async def rows_of(db: Db, statement: Any) -> list[Any]:
    """Read, then give the connection back (SQLite's pool is one connection, shared with
    the server under test)."""
    try:
        return list(await db.scalars(statement.execution_options(populate_existing=True)))
    finally:
        await db.close()


async def intent_of(db: Db, offer_id: str) -> str:
    payments = await rows_of(db, select(Payment).where(Payment.offer_id == uuid.UUID(offer_id)))
    assert len(payments) == 1, payments
    reference = payments[0].provider_ref
    assert isinstance(reference, str)
    return reference


async def deliver(server: Server, body: bytes, signature: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        return await http.post(
            "/webhooks/stripe",
            content=body,
            headers={"Stripe-Signature": signature, "Content-Type": "application/json"},
        )


async def send(server: Server, event_type: str, obj: dict[str, Any], **kw: Any) -> httpx.Response:
    body, signature = signed(event(event_type, obj, **kw))
    return await deliver(server, body, signature)


async def stage(client: Client, offer_id: str) -> str:
    value: str = (await offer_as(client, offer_id))["stage"]
    return value


async def recorded(db: Db, event_type: str | None = None) -> list[StripeEvent]:
    statement = select(StripeEvent)
    if event_type is not None:
        statement = statement.where(StripeEvent.type == event_type)
    return await rows_of(db, statement)


async def eventually(check: Any, seconds: float = 15.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = await check()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.1)


async def paid_and_held(server: Server, localstripe: LocalStripe, db: Db) -> tuple[Deal, str, str]:
    """Booked, paid with a card, confirmed by the browser, held on Stripe's word."""
    d, offer_id = await booked(server)
    paid = await pay(d.visitor, offer_id, await localstripe.card())
    intent_id = await intent_of(db, offer_id)
    await localstripe.confirm(intent_id)
    response = await send(
        server, "payment_intent.amount_capturable_updated", await localstripe.intent(intent_id)
    )
    assert response.json() == {"status": "applied"}
    assert paid["payment"]["status"] == "pending"
    return d, offer_id, intent_id


# --- the whole life --------------------------------------------------------------------------


async def test_pay_held_by_webhook_then_delivery_completes(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id = await booked(server)
    paid = await pay(d.visitor, offer_id, await localstripe.card())
    # The browser gets what it confirms with; the stage waits for Stripe, not for the browser.
    assert paid["clientSecret"].startswith("pi_")
    assert paid["publishableKey"] == PUBLISHABLE_KEY
    assert paid["offer"]["stage"] == "PENDING_PAY_CAPTURE"
    intent_id = await intent_of(db, offer_id)
    intent = await localstripe.intent(intent_id)
    assert (intent["amount"], intent["currency"], intent["capture_method"]) == (
        TOTAL_UNITS,
        "usd",
        "manual",
    )
    await localstripe.confirm(intent_id)
    assert await stage(d.visitor, offer_id) == "PENDING_PAY_CAPTURE"

    response = await send(
        server, "payment_intent.amount_capturable_updated", await localstripe.intent(intent_id)
    )
    assert response.status_code == 200
    assert await stage(d.visitor, offer_id) == "BOOKED_PAYMENT_HELD"
    assert await stage(d.host, offer_id) == "BOOKED_PAYMENT_HELD"

    # Only the brand confirms delivery.
    assert await d.host.error_codes(CONFIRM, {"offerId": offer_id}) == ["FORBIDDEN"]
    done = (await d.visitor.query(CONFIRM, {"offerId": offer_id}))["confirmDelivery"]
    assert done["offer"]["stage"] == "COMPLETED"
    assert (await localstripe.intent(intent_id))["status"] == "succeeded"
    again = (await d.visitor.query(CONFIRM, {"offerId": offer_id}))["confirmDelivery"]
    assert again["offer"]["stage"] == "COMPLETED"

    # localstripe signs and sends payment_intent.succeeded for the capture: verified by the
    # SDK, recorded once, and it moves nothing (the stage is already COMPLETED).
    succeeded = await eventually(lambda: recorded(db, "payment_intent.succeeded"))
    assert [e.outcome for e in succeeded] == ["unchanged"]
    assert await stage(d.visitor, offer_id) == "COMPLETED"

    # PL7: the host is owed the due slice; nothing is reported sent without Connect.
    payouts = await rows_of(db, select(HostPayout))
    assert [(p.owed, p.sent, p.transfer_ref) for p in payouts] == [
        (Decimal("4000.0000"), Decimal("0.0000"), None)
    ]


async def test_talent_cancels_a_held_booking_and_the_hold_goes_back(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id, intent_id = await paid_and_held(server, localstripe, db)
    assert await d.visitor.error_codes(CANCEL, {"offerId": offer_id}) == ["FORBIDDEN"]
    done = (await d.host.query(CANCEL, {"offerId": offer_id}))["cancelPaidBooking"]
    assert done["offer"]["stage"] == "WITHDRAWN"
    assert (await localstripe.intent(intent_id))["status"] == "canceled"
    payment = (await offer_as(d.visitor, offer_id))["payments"][0]
    assert payment["status"] == "cancelled"


async def test_refund_after_release_is_partial_and_never_above_captured(
    server: Server, localstripe: LocalStripe, db: Db, clock: ManualClock
) -> None:
    d, offer_id, intent_id = await paid_and_held(server, localstripe, db)
    await d.visitor.query(CONFIRM, {"offerId": offer_id})
    provider = server.state.payments
    oid = uuid.UUID(offer_id)

    async def refund(amount: str, key: str) -> Payment:
        async with UnitOfWork(server.state.sessionmaker, server.broker) as u:
            return await payment_life.refund(
                u.db, clock, provider, offer_id=oid, amount=Decimal(amount), idempotency_key=key
            )

    with pytest.raises(DomainError) as too_much:
        await refund("4800.01", "r0")
    assert too_much.value.details["reason"] == "REFUND_EXCEEDS_CAPTURED"
    assert (await refund("1000.00", "r1")).refunded == Decimal("1000.00")
    with pytest.raises(DomainError):
        await refund("3800.01", "r2")  # only 3800.00 remains
    async with httpx.AsyncClient(base_url=localstripe.base_url) as http:
        listed = await http.get(f"/v1/refunds?payment_intent={intent_id}", auth=(SECRET_KEY, ""))
    assert [r["amount"] for r in listed.json()["data"]] == [100000]


# --- faults ----------------------------------------------------------------------------------


async def test_a_declined_card_goes_back_to_awaiting_payment_on_stripes_webhook(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id = await booked(server)
    await pay(d.visitor, offer_id, await localstripe.card(CARD_DECLINED))
    intent_id = await intent_of(db, offer_id)
    with pytest.raises(Exception, match="declined"):
        await localstripe.confirm(intent_id)
    # localstripe sends payment_intent.payment_failed, signed with the endpoint's secret.
    failed = await eventually(lambda: recorded(db, "payment_intent.payment_failed"))
    assert [e.outcome for e in failed] == ["applied"]
    offer = await offer_as(d.visitor, offer_id)
    assert offer["stage"] == "BOOKED_AWAITING_PAYMENT"
    assert offer["payments"][0]["status"] == "declined"


async def test_forged_stale_and_unsigned_webhooks_are_refused_and_not_recorded(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id = await booked(server)
    await pay(d.visitor, offer_id, await localstripe.card())
    intent_id = await intent_of(db, offer_id)
    await localstripe.confirm(intent_id)
    obj = await localstripe.intent(intent_id)
    forged = signed(event("payment_intent.amount_capturable_updated", obj), "whsec_guess")
    stale = signed(
        event("payment_intent.amount_capturable_updated", obj), at=int(time.time()) - 3600
    )
    body, good = signed(event("payment_intent.amount_capturable_updated", obj))
    tampered = body.replace(b'"usd"', b'"eur"')
    for payload, signature in (forged, stale, (tampered, good), (body, "")):
        response = await deliver(server, payload, signature)
        assert response.status_code == 400, response.text
    assert await recorded(db, "payment_intent.amount_capturable_updated") == []
    assert await stage(d.visitor, offer_id) == "PENDING_PAY_CAPTURE"


async def test_duplicates_are_recorded_once_and_late_events_move_nothing_back(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id, intent_id = await paid_and_held(server, localstripe, db)
    obj = await localstripe.intent(intent_id)
    body, signature = signed(event("payment_intent.amount_capturable_updated", obj, "evt_dup"))
    first = await deliver(server, body, signature)
    second = await deliver(server, body, signature)
    assert (first.status_code, second.status_code) == (200, 200)
    assert second.json() == {"status": "duplicate"}
    assert len([e for e in await recorded(db) if e.id == "evt_dup"]) == 1
    # A failure that Stripe sent before the authorization arrives after it: nothing moves.
    late = await send(
        server,
        "payment_intent.payment_failed",
        obj | {"last_payment_error": {"message": "Your card was declined."}},
    )
    assert late.json() == {"status": "unchanged"}
    assert await stage(d.visitor, offer_id) == "BOOKED_PAYMENT_HELD"


async def test_unknown_intents_and_wrong_amounts_are_recorded_and_flagged_not_applied(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id = await booked(server)
    await pay(d.visitor, offer_id, await localstripe.card())
    intent_id = await intent_of(db, offer_id)
    await localstripe.confirm(intent_id)
    obj = await localstripe.intent(intent_id)
    unknown = await send(server, "payment_intent.amount_capturable_updated", obj | {"id": "pi_x"})
    assert unknown.json() == {"status": "unknown_payment"}
    wrong = await send(
        server, "payment_intent.amount_capturable_updated", obj | {"amount": TOTAL_UNITS - 1}
    )
    assert wrong.json() == {"status": "amount_mismatch"}
    other = await send(
        server, "payment_intent.amount_capturable_updated", obj | {"currency": "eur"}
    )
    assert other.json() == {"status": "amount_mismatch"}
    assert await stage(d.visitor, offer_id) == "PENDING_PAY_CAPTURE"
    flags = await rows_of(db, select(Flag).where(Flag.level == "payment"))
    assert len(flags) == 2
    assert "Stripe states 479999 usd" in flags[0].evidence + flags[1].evidence


async def test_the_reconciliation_sweep_recovers_a_dropped_webhook(
    server: Server, localstripe: LocalStripe, db: Db, clock: ManualClock
) -> None:
    d, offer_id = await booked(server)
    await pay(d.visitor, offer_id, await localstripe.card())
    await localstripe.confirm(intent_id := await intent_of(db, offer_id))
    # localstripe sends no authorization webhook: this one never came.
    await server.runner.sweep()
    assert await stage(d.visitor, offer_id) == "PENDING_PAY_CAPTURE"  # not overdue yet
    clock.advance(timedelta(seconds=server.state.settings.stripe_reconcile_seconds + 1))
    await server.runner.sweep()
    assert await stage(d.visitor, offer_id) == "BOOKED_PAYMENT_HELD"
    assert (await localstripe.intent(intent_id))["status"] == "requires_capture"


async def test_holds_are_released_after_the_auto_release_days(
    server: Server, localstripe: LocalStripe, db: Db, clock: ManualClock
) -> None:
    d, offer_id, intent_id = await paid_and_held(server, localstripe, db)
    await server.runner.sweep()
    assert await stage(d.visitor, offer_id) == "BOOKED_PAYMENT_HELD"
    # The offer's delivery date is 15 March 2027; the release comes 7 days after it.
    clock.advance(timedelta(days=900))  # past the session's life: read the row itself
    await server.runner.sweep()
    offers = await rows_of(db, select(Offer).where(Offer.id == uuid.UUID(offer_id)))
    assert offers[0].status == "COMPLETED"
    assert (await localstripe.intent(intent_id))["status"] == "succeeded"


async def test_a_dispute_is_visible_to_both_sides_and_to_partners(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id = await booked(server)
    await create_webhook(d.host, "http://127.0.0.1:9/hook")
    _, _, intent_id = await _pay_and_hold(server, localstripe, db, d, offer_id)
    response = await send(
        server, "charge.dispute.created", dispute(await localstripe.intent(intent_id))
    )
    assert response.json() == {"status": "applied"}
    assert await stage(d.visitor, offer_id) == "DISPUTED"
    assert await stage(d.host, offer_id) == "DISPUTED"
    deliveries = await eventually(lambda: _deliveries(db))
    assert any("DISPUTED" in str(row) for row in deliveries)


async def _pay_and_hold(
    server: Server, localstripe: LocalStripe, db: Db, d: Deal, offer_id: str
) -> tuple[Deal, str, str]:
    await pay(d.visitor, offer_id, await localstripe.card())
    intent_id = await intent_of(db, offer_id)
    await localstripe.confirm(intent_id)
    await send(
        server, "payment_intent.amount_capturable_updated", await localstripe.intent(intent_id)
    )
    return d, offer_id, intent_id


async def _deliveries(db: Db) -> list[Any]:
    return [(r.type, r.payload) for r in await rows_of(db, select(WebhookEvent))]


# --- confidentiality -------------------------------------------------------------------------


async def test_canary_a_stripe_decline_message_never_carries_a_private_value(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    """Stripe's words reach the brand (the payment's error) and partners (the decline
    webhook): the host's private floor ($6,000, said only to its own agent) in them is screened
    out."""
    d, offer_id = await booked(server)
    await create_webhook(d.visitor, "http://127.0.0.1:9/hook")
    await pay(d.visitor, offer_id, await localstripe.card())
    intent_id = await intent_of(db, offer_id)
    obj = await localstripe.intent(intent_id)
    canary = "Declined: the seller's floor is $6,000."
    response = await send(
        server, "payment_intent.payment_failed", obj | {"last_payment_error": {"message": canary}}
    )
    assert response.json() == {"status": "applied"}
    payment = (await d.visitor.query(PAYMENTS, {"id": offer_id}))["offer"]["payments"][0]
    assert payment["status"] == "declined"
    events = await eventually(lambda: _deliveries(db))
    seen = str(payment) + str(events) + str(await offer_as(d.visitor, offer_id))
    assert "6,000" not in seen
    assert "floor" not in seen
    assert payment["error"] == payment_life.SCREENED_DECLINE
    declined = [payload for kind, payload in events if kind == "payment.declined"]
    assert [p["data"]["stage"] for p in declined] == ["BOOKED_AWAITING_PAYMENT"]


# --- one PaymentIntent per key, across two servers -------------------------------------------


async def test_concurrent_pay_with_one_key_on_two_servers_makes_one_intent(
    server: Server,
    localstripe: LocalStripe,
    db: Db,
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
) -> None:
    d, offer_id = await booked(server)
    method = await localstripe.card()
    other_provider = provider_for(localstripe)
    stripe_settings = settings.model_copy(update={"payment_provider": "stripe"})
    async with serving(stripe_settings, engine, broker, clock, payments=other_provider) as other:
        twin = other.client()
        twin.headers.update(d.visitor.headers)
        twin.http.cookies = d.visitor.http.cookies
        answers = await asyncio.gather(
            *(
                c.raw(PAY, {"offerId": offer_id, "method": method, "key": "same"})
                for c in (d.visitor, twin, d.visitor, twin)
            )
        )
    await other_provider.close()
    ids = {a["data"]["payOffer"]["payment"]["id"] for a in answers if a.get("data")}
    assert len(ids) == 1, answers
    assert len(await localstripe.intents()) == 1
    assert {a["data"]["payOffer"]["clientSecret"] for a in answers if a.get("data")} != {None}


# --- Stripe 5xx and timeouts -----------------------------------------------------------------


class Faulty:
    """A proxy in front of localstripe that answers the first ``fail`` PaymentIntent creations
    itself (a 503, or silence past the client's timeout) without passing them on, as Stripe does
    when it fails before acting; it records each attempt's Idempotency-Key."""

    def __init__(self, upstream: str, fail: int, mode: str) -> None:
        self.upstream = upstream
        self.fail = fail
        self.mode = mode
        self.keys: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        body = await request.body()
        creating = request.method == "POST" and request.url.path == "/v1/payment_intents"
        if creating:
            self.keys.append(request.headers.get("idempotency-key"))
            if len(self.keys) <= self.fail:
                if self.mode == "timeout":
                    await asyncio.sleep(3)
                response = Response('{"error": {"message": "down"}}', status_code=503)
                await response(scope, receive, send)
                return
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        async with httpx.AsyncClient(base_url=self.upstream) as http:
            answer = await http.request(
                request.method,
                request.url.path,
                params=request.query_params,
                content=body,
                headers=headers,
            )
        await Response(answer.content, answer.status_code, media_type="application/json")(
            scope, receive, send
        )


@pytest.mark.parametrize("mode", ["503", "timeout"])
async def test_stripe_5xx_and_timeouts_are_retried_with_the_same_key_and_charge_once(
    mode: str,
    localstripe: LocalStripe,
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    db: Db,
) -> None:
    proxy = Faulty(localstripe.base_url, fail=2, mode=mode)
    running = await start_in_background(Starlette(routes=[Mount("/", app=proxy)]))
    provider = StripeProvider(
        SECRET_KEY,
        publishable_key=PUBLISHABLE_KEY,
        webhook_secret=WEBHOOK_SECRET,
        api_base=f"http://127.0.0.1:{running.port}",
        max_network_retries=2,
        timeout_seconds=1,
    )
    stripe_settings = settings.model_copy(update={"payment_provider": "stripe"})
    try:
        async with serving(stripe_settings, engine, broker, clock, payments=provider) as server:
            d, offer_id = await booked(server)
            paid = await pay(d.visitor, offer_id, await localstripe.card())
    finally:
        await provider.close()
        await running.stop()
    assert paid["offer"]["stage"] == "PENDING_PAY_CAPTURE"
    # Three attempts, one Idempotency-Key, one PaymentIntent.
    assert len(proxy.keys) == 3
    assert len(set(proxy.keys)) == 1
    assert proxy.keys[0] is not None
    assert proxy.keys[0].startswith(f"{offer_id}:v1:")
    assert len(await localstripe.intents()) == 1


async def test_stripe_down_after_the_retries_is_unavailable_and_nothing_is_lost(
    localstripe: LocalStripe,
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    db: Db,
) -> None:
    proxy = Faulty(localstripe.base_url, fail=3, mode="503")
    running = await start_in_background(Starlette(routes=[Mount("/", app=proxy)]))
    provider = StripeProvider(
        SECRET_KEY,
        publishable_key=PUBLISHABLE_KEY,
        webhook_secret=WEBHOOK_SECRET,
        api_base=f"http://127.0.0.1:{running.port}",
        max_network_retries=2,
        timeout_seconds=5,
    )
    stripe_settings = settings.model_copy(update={"payment_provider": "stripe"})
    try:
        async with serving(stripe_settings, engine, broker, clock, payments=provider) as server:
            d, offer_id = await booked(server)
            method = await localstripe.card()
            body = await d.visitor.raw(PAY, {"offerId": offer_id, "method": method, "key": "k"})
            assert body["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
            assert await stage(d.visitor, offer_id) == "BOOKED_AWAITING_PAYMENT"
            # The client retries with the same key once Stripe is back: one intent.
            paid = await pay(d.visitor, offer_id, method, "k")
            assert paid["offer"]["stage"] == "PENDING_PAY_CAPTURE"
    finally:
        await provider.close()
        await running.stop()
    assert len(set(proxy.keys)) == 1
    assert len(await localstripe.intents()) == 1


# --- operators -------------------------------------------------------------------------------

OPS_VIEW = """
{ opsPayments {
    held { offerId payment { status } }
    disputed { offerId }
    refunded { offerId payment { refunded } }
    owedToHosts { owed sent }
} }
"""
OPS_RELEASE = """
mutation($offerId: ID!) { opsReleasePayment(offerId: $offerId) { payment { status } } }
"""
OPS_REFUND = """
mutation($offerId: ID!, $amount: String!, $key: String!) {
  opsRefundPayment(offerId: $offerId, amount: $amount, idempotencyKey: $key) {
    payment { status refunded }
  }
}
"""


async def test_operators_see_release_and_refund_payments_audited(
    server: Server, localstripe: LocalStripe, db: Db
) -> None:
    d, offer_id, intent_id = await paid_and_held(server, localstripe, db)
    assert await d.host.error_codes(OPS_VIEW) == ["NOT_FOUND"]
    operator = await make_operator(db, server.client(), "opsqa")
    view = (await operator.query(OPS_VIEW))["opsPayments"]
    assert view["held"] == [{"offerId": offer_id, "payment": {"status": "captured"}}]

    released = (await operator.query(OPS_RELEASE, {"offerId": offer_id}))["opsReleasePayment"]
    assert released["payment"]["status"] == "released"
    assert await stage(d.visitor, offer_id) == "COMPLETED"
    assert (await localstripe.intent(intent_id))["status"] == "succeeded"

    refund = {"offerId": offer_id, "amount": "1000.00", "key": "r1"}
    done = (await operator.query(OPS_REFUND, refund))["opsRefundPayment"]
    assert done["payment"]["refunded"] == "1000.00"
    body = await operator.raw(OPS_REFUND, refund | {"amount": "3800.01", "key": "r2"})
    assert body["errors"][0]["extensions"]["reason"] == "REFUND_EXCEEDS_CAPTURED"

    view = (await operator.query(OPS_VIEW))["opsPayments"]
    assert view["held"] == []
    assert view["refunded"] == [{"offerId": offer_id, "payment": {"refunded": "1000.00"}}]
    assert view["owedToHosts"] == [{"owed": "4000.00", "sent": "0.00"}]
    # The host reads its own ledger; the brand's is empty.
    mine = (await d.host.query("{ payouts { owed sent transferRef } }"))["payouts"]
    assert mine == [{"owed": "4000.00", "sent": "0.00", "transferRef": None}]
    assert (await d.visitor.query("{ payouts { owed } }"))["payouts"] == []
    actions = await rows_of(db, select(OpsAction).order_by(OpsAction.created_at))
    done_actions = [a.action for a in actions if not a.action.startswith("read:")]
    assert done_actions == ["release_payment", "refund_payment"]  # the reads are audited too
