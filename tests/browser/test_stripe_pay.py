"""The brand pays a booked offer in the browser with Stripe Elements: the server runs the Stripe
provider against localstripe, the page loads Stripe.js from DEALROOM_STRIPE_JS_URL (localstripe's
stand-in, ``tests/support/stripe_js``), the card 4242 4242 4242 4242 is typed into the card
element, the Pay button calls payOffer and confirms the PaymentIntent, the card says processing,
and the stage moves to held only when Stripe's signed webhook arrives."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.realtime.broker import Broker
from tests.browser.conftest import NewContext, Offline
from tests.browser.support import reaches_stage, until
from tests.conftest import Server, serving
from tests.e2e.test_stripe import booked, intent_of, provider_for, send
from tests.support.clock import ManualClock
from tests.support.localstripe import LocalStripe, running_localstripe
from tests.support.stripe_js import StripeJs, running_stripe_js


@pytest.fixture
async def localstripe() -> AsyncIterator[LocalStripe]:
    async with running_localstripe() as running:
        yield running


@pytest.fixture
async def stripe_js(localstripe: LocalStripe) -> AsyncIterator[StripeJs]:
    async with running_stripe_js(localstripe) as running:
        yield running


@pytest.fixture
async def server(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    localstripe: LocalStripe,
    stripe_js: StripeJs,
) -> AsyncIterator[Server]:
    provider = provider_for(localstripe)
    stripe_settings = settings.model_copy(
        update={"payment_provider": "stripe", "stripe_js_url": stripe_js.url}
    )
    async with serving(stripe_settings, engine, broker, clock, payments=provider) as running:
        yield running
    await provider.close()


async def test_brand_pays_with_elements_and_sees_held_after_the_webhook(
    server: Server,
    localstripe: LocalStripe,
    stripe_js: StripeJs,
    db: Db,
    new_context: NewContext,
    offline: Offline,
) -> None:
    d, offer_id = await booked(server)
    context = await new_context()
    await context.add_cookies(
        [
            {"name": cookie.name, "value": cookie.value or "", "url": server.base_url}
            for cookie in d.visitor.http.cookies.jar
        ]
    )
    brand = await context.new_page()
    await brand.goto(f"{server.base_url}/z/devraman/{d.room_id}")
    await reaches_stage(brand, "BOOKED_AWAITING_PAYMENT")
    card = brand.locator(".offer")
    # Stripe.js's card element, loaded from the configured URL; no test-card picker.
    form = card.locator("[data-stripe-card]")
    await form.locator('input[placeholder="number"]').wait_for()
    assert await card.get_by_label("Payment method").count() == 0
    for field, value in (
        ("number", "4242424242424242"),
        ("exp_month", "12"),
        ("exp_year", "34"),
        ("cvc", "123"),
        ("postal_code", "10001"),
    ):
        await form.locator(f'input[placeholder="{field}"]').fill(value)
    await card.get_by_role("button", name="Pay now").click()

    # Confirmed with Stripe; the stage waits for Stripe's word and the card says so.
    await card.locator('[data-payment="processing"]').wait_for()
    intent_id = await intent_of(db, offer_id)
    assert stripe_js.confirmed == [intent_id]

    async def authorized() -> bool:
        status: str = (await localstripe.intent(intent_id))["status"]
        return status == "requires_capture"

    await until(authorized, "the PaymentIntent to be authorized at Stripe")
    await reaches_stage(brand, "PENDING_PAY_CAPTURE")

    # localstripe sends no authorization webhook: a Stripe-signed one, verified by the SDK.
    response = await send(
        server, "payment_intent.amount_capturable_updated", await localstripe.intent(intent_id)
    )
    assert response.json() == {"status": "applied"}
    await reaches_stage(brand, "BOOKED_PAYMENT_HELD")
    await card.locator('[data-money="paid"]').wait_for()
    assert await card.locator('[data-payment="processing"]').count() == 0
    assert offline.blocked == [], offline.blocked
