"""Every visitor-bound notification passes the private-value screen a pane delivery passes:
a title or body that would state a host private value is never stored or sent (a fixed line
says only that there is news) and operators get a flag; the host may read its own values."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.domain import firewall
from dealroom.jobs.notify_delivery import NotifyWorker
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Flag
from dealroom.persistence.notifications import NotificationRepository
from dealroom.realtime import Broker
from dealroom.services.notify import outbox, screen
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.mailbox import Mailbox, mailbox
from tests.support.notify import People, brand_note, host_and_brand, host_note, stored

FLOOR = "6137"
TOKEN = "QX7-Orchid-58213"
MEMORY = {
    "host": {
        "limits": {"sponsored_post": {"floor": FLOOR, "currency": "USD", "source": "m-1"}},
        "private_terms": [{"text": "no tobacco brands", "source": "m-2"}],
        "contact": f"booking code {TOKEN}",
        "public": {"rate_card": "sponsored post from 8000 USD"},
    }
}
LEAKS = f"We could go to ${FLOOR[0]},{FLOOR[1:]}; code {TOKEN}; no tobacco brands."


@pytest.fixture
def box() -> Iterator[Mailbox]:
    with mailbox() as running:
        yield running


@pytest.fixture
async def people(engine: AsyncEngine, clock: ManualClock) -> People:
    return await host_and_brand(engine, clock, memory=MEMORY)


async def _write(
    engine: AsyncEngine, clock: ManualClock, people: People, *notes: outbox.Note
) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        facts = await NotificationRepository(unit.db).room_facts(people.room_id)
        await outbox.write(unit.db, clock.now(), list(notes), facts)


async def test_a_visitor_email_never_carries_a_private_value_as_received(
    settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    box: Mailbox,
    people: People,
    db: Db,
) -> None:
    await _write(engine, clock, people, brand_note(people, title=f"Offer at {FLOOR}", body=LEAKS))
    tuned = settings.model_copy(update={"smtp_url": box.url})
    await NotifyWorker(tuned, create_sessionmaker(engine), broker, clock).run_once()
    (email,) = box.received
    for text in email.readable():
        assert firewall.check(MEMORY, text) == [], text
        assert FLOOR not in text
        assert "6,137" not in text
        assert "orchid" not in text.lower()
    assert email.subject == screen.FALLBACK_TITLE
    assert screen.FALLBACK_BODY in email.text
    (row,) = await stored(engine)
    assert firewall.check(MEMORY, row.title, row.body) == []  # the in-app text too
    flags = list(await db.scalars(select(Flag).where(Flag.room_id == people.room_id)))
    await db.close()
    assert [f.level for f in flags] == ["firewall"]


async def test_the_host_may_read_its_own_private_values(
    engine: AsyncEngine, clock: ManualClock, people: People
) -> None:
    await _write(engine, clock, people, host_note(people, body=LEAKS))
    (row,) = await stored(engine)
    assert row.body == LEAKS


async def test_a_clean_visitor_text_goes_as_written(
    engine: AsyncEngine, clock: ManualClock, people: People
) -> None:
    await _write(engine, clock, people, brand_note(people))
    (row,) = await stored(engine)
    assert row.title == brand_note(people).title
