"""Which facts notify whom: a stage change tells each side in fixed words (never a stage
label) and an unclaimed guest nobody; a turn is a waiting decision only when the host's agent
put the other side's question to its principal (it sent nothing back), never for a notice."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.domain.offer_stage import Stage
from dealroom.domain.passwords import OWASP_MINIMUM
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Dispatch, Offer, OfferEvent
from dealroom.persistence.notifications import NotificationRepository
from dealroom.services.accounts import service as accounts
from dealroom.services.accounts.identity import Identity, new_guest_key
from dealroom.services.accounts.passwords import passwords_for
from dealroom.services.notify import triggers
from dealroom.services.rooms import service as rooms
from dealroom.services.unit_of_work import UnitOfWork
from tests.support.clock import ManualClock
from tests.support.notify import People, host_and_brand, stored

NOW = datetime(2026, 1, 1, 13, tzinfo=UTC)


def _change(room_id: uuid.UUID, stage: Stage) -> tuple[Offer, OfferEvent]:
    offer = Offer(id=uuid.uuid4(), room_id=room_id, seller_account_id=uuid.uuid4(), version=1)
    event = OfferEvent(
        id=uuid.uuid4(),
        room_id=room_id,
        offer_id=offer.id,
        seq=1,
        stage=stage.value,
        version=1,
        actor="host",
        created_at=NOW,
    )
    return offer, event


async def _stage(engine: AsyncEngine, room_id: uuid.UUID, stage: Stage) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        await triggers.stage_recorded(unit.db, *_change(room_id, stage))


async def test_a_booking_tells_both_sides_in_words_not_labels(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock)
    await _stage(engine, people.room_id, Stage.BOOKED_AWAITING_PAYMENT)
    rows = {r.audience: r for r in await stored(engine)}
    assert set(rows) == {"host", "visitor"}
    assert rows["visitor"].account_id == people.brand.id
    assert rows["visitor"].link == f"/z/devraman/{people.room_id}"
    assert rows["host"].link == f"/r/{people.room_id}"
    for row in rows.values():
        for stage in Stage:
            assert stage.value not in row.title + row.body
    assert "booked" in rows["visitor"].body


async def test_a_stage_nobody_is_told_of_writes_nothing(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock)
    await _stage(engine, people.room_id, Stage.PENDING_PAY_CAPTURE)
    assert await stored(engine) == []


async def test_an_unclaimed_guest_gets_nothing(engine: AsyncEngine, clock: ManualClock) -> None:
    db = Db(create_sessionmaker(engine))
    try:
        await accounts.sign_up(
            db,
            clock,
            passwords_for(OWASP_MINIMUM),
            email="devraman@example.com",
            password="long enough",
            handle="devraman",
            display_name="Dev Raman",
            ttl_days=1,
        )
        opened = await rooms.open_visitor_room(
            db,
            clock,
            Identity(signed_in=None, account=None, guest_key=new_guest_key()),
            handle="devraman",
            new_conversation=False,
            greet=False,
        )
        await db.commit()
    finally:
        await db.close()
    await _stage(engine, opened.room.id, Stage.BOOKED_AWAITING_PAYMENT)
    assert [r.audience for r in await stored(engine)] == ["host"]  # the guest has no account


async def _turn(engine: AsyncEngine, people: People, *, replied: bool, origin: str | None) -> None:
    async with UnitOfWork(create_sessionmaker(engine)) as unit:
        facts = await NotificationRepository(unit.db).room_facts(people.room_id)
        assert facts is not None
        host, visitor = facts.participant_ids["host"], facts.participant_ids["visitor"]
        dispatch = Dispatch(
            id=uuid.uuid4(),
            room_id=people.room_id,
            from_participant_id=visitor,
            to_participant_id=host,
            source_run_id=uuid.uuid4(),
            position=0,
            substance="Acme Brand proposes a reel for $3,000.",
            payload={} if origin is None else {"origin": origin},
            status="delivered",
            chain_depth=1,
            created_at=NOW,
        )
        await triggers.after_turn(
            unit.db,
            room_id=people.room_id,
            pane_key="host",
            keys={host: "host", visitor: "visitor"},
            delivered=dispatch,
            held=[],
            replied_to={visitor} if replied else set(),
            room_held=[],
            now=NOW,
        )


async def test_a_question_put_to_the_principal_is_a_waiting_decision(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock)
    await _turn(engine, people, replied=False, origin=None)
    (row,) = await stored(engine)
    assert (row.kind, row.wait_state, row.account_id) == ("decision", "waiting", people.host.id)
    assert row.title == "Acme Brand asked something only you can decide"


async def test_a_question_the_host_side_answered_or_a_notice_is_not_a_decision(
    engine: AsyncEngine, clock: ManualClock
) -> None:
    people = await host_and_brand(engine, clock)
    await _turn(engine, people, replied=True, origin=None)
    await _turn(engine, people, replied=False, origin="guard")
    assert await stored(engine) == []
