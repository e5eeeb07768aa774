"""The capture sweep (``jobs.payment_capture``): a pending charge the provider later declines
puts the offer back to BOOKED_AWAITING_PAYMENT, with the payment row declined and the stage change
recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.jobs.payment_capture import capture_pending
from dealroom.persistence.db import Db
from dealroom.realtime import Broker
from dealroom.services.offers.provider import Charge, ChargeStatus
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.offers import (
    APPROVE,
    PAY,
    negotiate_to_offer,
    offer_as,
    offer_events,
    open_deal,
    stored_payments,
)
from tests.support.offers import stages as stage_list

pytestmark = pytest.mark.asyncio

REFUSED = "The bank refused the capture."


class DeclinesOnCapture:
    """A provider edge that takes every charge as pending and declines it when asked later
    (a card that authorises, then fails to capture)."""

    name = "declines-on-capture"

    def __init__(self) -> None:
        self.charges: dict[str, tuple[Decimal, str]] = {}
        self.asked: list[str] = []

    async def charge(
        self, *, amount: Decimal, currency: str, payment_method: str, idempotency_key: str
    ) -> Charge:
        reference = f"dc_{idempotency_key}"
        self.charges[reference] = (amount, currency)
        return Charge(reference, ChargeStatus.PENDING)

    async def status(self, reference: str) -> Charge:
        self.asked.append(reference)
        return Charge(reference, ChargeStatus.DECLINED, REFUSED)


@pytest.fixture
def provider() -> DeclinesOnCapture:
    return DeclinesOnCapture()


@pytest.fixture
async def declining_server(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    provider: DeclinesOnCapture,
) -> AsyncIterator[Server]:
    """conftest's ``server`` (workers=0), with this file's payment provider."""
    async with serving(settings, engine, broker, clock, payments=provider) as running:
        yield running


async def test_a_declined_capture_puts_the_offer_back_to_awaiting_payment(
    declining_server: Server, db: Db, provider: DeclinesOnCapture
) -> None:
    server = declining_server
    d = await open_deal(server)
    offer_id = await negotiate_to_offer(server, d)
    await d.visitor.query(APPROVE, {"offerId": offer_id})
    await d.host.query(APPROVE, {"offerId": offer_id})
    paid = (await d.visitor.query(PAY, {"offerId": offer_id, "method": "any_card", "key": "k1"}))[
        "payOffer"
    ]
    assert (paid["offer"]["stage"], paid["payment"]["status"]) == ("PENDING_PAY_CAPTURE", "pending")
    before = stage_list(await offer_events(db, offer_id))
    assert before[-1] == ("PENDING_PAY_CAPTURE", 1)

    state = server.state
    moved = await capture_pending(state.sessionmaker, state.broker, state.clock, state.payments)

    assert moved == 1
    read = await offer_as(d.visitor, offer_id)
    assert read["stage"] == "BOOKED_AWAITING_PAYMENT"
    assert read["viewerActions"] == ["PAY"]  # the brand may pay again
    [payment] = await stored_payments(db, offer_id)
    assert (payment.status, payment.error) == ("declined", REFUSED)
    assert provider.asked == [payment.provider_ref]
    assert stage_list(await offer_events(db, offer_id)) == [*before, ("BOOKED_AWAITING_PAYMENT", 1)]
    [change] = (await offer_events(db, offer_id))[len(before) :]
    assert change.actor == "payment"

    # A second sweep finds nothing pending: nothing moves twice.
    assert await capture_pending(state.sessionmaker, state.broker, state.clock, state.payments) == 0
    assert len(await offer_events(db, offer_id)) == len(before) + 1
