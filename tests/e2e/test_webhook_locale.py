"""A webhook's display fields are written in its owner's locale (L3 in ``domain/locale.py``):
one logical event reaches a de_DE host's endpoint and an en_US brand's endpoint, each signed
over its own text, with the same raw data."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain.money import display
from dealroom.jobs.webhook_delivery import WebhookWorker
from dealroom.persistence.engine import create_sessionmaker
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.offers import negotiate_to_offer, open_deal
from tests.support.partners import create_webhook
from tests.support.receiver import receiver

SET_LOCALE = "mutation($l: String) { setLocale(locale: $l) { locale } }"


@pytest.fixture
async def hook_server(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[tuple[Server, WebhookWorker]]:
    quiet = settings.model_copy(update={"webhook_allow_loopback": True, "webhook_workers": 0})
    async with serving(quiet, engine, broker, clock) as running:
        yield running, WebhookWorker(quiet, create_sessionmaker(engine), broker, clock)


async def test_each_endpoint_reads_the_fee_in_its_owners_locale(
    hook_server: tuple[Server, WebhookWorker],
) -> None:
    server, worker = hook_server
    async with receiver() as host_end, receiver() as brand_end:
        d = await open_deal(server)
        await d.host.query(SET_LOCALE, {"l": "de_DE"})
        host_hook = await create_webhook(d.host, host_end.url, ["offer.created"])
        brand_hook = await create_webhook(d.visitor, brand_end.url, ["offer.created"])
        await negotiate_to_offer(server, d)
        while await worker.run_once():
            pass
        await host_end.wait_accepted(1)
        await brand_end.wait_accepted(1)
        to_host = host_end.verify(host_hook["secret"], host_end.accepted[0])
        to_brand = brand_end.verify(brand_hook["secret"], brand_end.accepted[0])
    assert to_host["data"]["terms"]["fee"] == {
        "amount": "8000.00",
        "currency": "USD",
        "display": display(Decimal("8000.00"), "USD", "de_DE"),
    }
    assert to_brand["data"]["terms"]["fee"] == {
        "amount": "8000.00",
        "currency": "USD",
        "display": "$8,000",
    }
    assert to_host["data"]["terms"]["fee"]["display"] != "$8,000"
    assert host_end.accepted[0].headers["webhook-id"] == brand_end.accepted[0].headers["webhook-id"]
