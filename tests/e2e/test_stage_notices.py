"""Stage events through the agents (SN1-SN2 in dealroom/domain/stage_notices.py): each side hears a
stage change from its own agent, once, in the stage vocabulary."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from dealroom.domain import pane_words
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Dispatch, Message, OfferEvent
from dealroom.persistence.repositories import RoomRepository
from dealroom.services.offers.events import stage_notice_runs
from dealroom.services.turns.queue import RunStatus
from tests.conftest import Server
from tests.e2e.test_offer_payment_stream import pay
from tests.support.factories import written_offer
from tests.support.offers import approve_as_read, negotiate_to_offer
from tests.support.turns import Deal, deal, messages_in


async def notices(db: Db, d: Deal, key: str) -> list[str]:
    """The agent lines a stage notice put in pane ``key``."""
    try:
        runs = list(
            await db.scalars(
                select(AgentRun).where(
                    AgentRun.room_id == uuid.UUID(d.room_id), AgentRun.trigger_event_id.is_not(None)
                )
            )
        )
    finally:
        await db.close()
    keys = {f"run:{r.id}" for r in runs}
    return [m.body for m in await messages_in(db, d.room_id, key) if m.client_message_id in keys]


async def test_each_side_hears_each_stage_change_once_from_its_own_agent(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    offer_id = await written_offer(agent_server, d.room_id)
    await agent_server.settle()
    # Drawing the written offer concerns both sides (nobody clicked).
    [drawn] = await notices(db, d, "visitor")
    assert "press Approve offer" in drawn  # SN2: the next step, by the button's label
    assert len(await notices(db, d, "host")) == 1

    await approve_as_read(d.visitor, offer_id)  # the brand's click
    await agent_server.settle()
    host = await notices(db, d, "host")
    assert len(host) == 2
    assert host[-1] == "The brand approved the written offer — press Approve offer to book it."
    assert len(await notices(db, d, "visitor")) == 1  # SN1: the brand saw its own click

    await approve_as_read(d.host, offer_id)  # the talent's click: the booking
    await agent_server.settle()
    visitor = await notices(db, d, "visitor")
    assert len(visitor) == 2
    assert "press Pay now on the offer" in visitor[-1]
    assert "never take card details in chat" in visitor[-1]
    assert len(await notices(db, d, "host")) == 2

    await pay(d.visitor, offer_id, "test_card_ok", "k1")
    await agent_server.settle()
    assert "payment went through and is held" in (await notices(db, d, "visitor"))[-1]
    assert "payment went through and is held" in (await notices(db, d, "host"))[-1]
    for key in ("visitor", "host"):  # PW1: no notice names a stage label
        assert all(pane_words.labels_in(line) == [] for line in await notices(db, d, key))
    assert len(await notices(db, d, "visitor")) == 3
    assert len(await notices(db, d, "host")) == 3


async def test_a_retried_notice_run_says_it_once(agent_server: Server, db: Db) -> None:
    d = await deal(agent_server)
    offer_id = await written_offer(agent_server, d.room_id)
    await approve_as_read(d.visitor, offer_id)
    await agent_server.settle()
    before = await notices(db, d, "host")
    # A worker that vanished after applying: the run is queued again and runs again.
    try:
        await db.execute(
            update(AgentRun)
            .where(AgentRun.room_id == uuid.UUID(d.room_id), AgentRun.trigger_event_id.is_not(None))
            .values(status=RunStatus.QUEUED.value, attempts=0)
        )
        await db.commit()
    finally:
        await db.close()
    await agent_server.runner.announce()
    await agent_server.settle()
    assert await notices(db, d, "host") == before


async def test_one_notice_run_per_pane_and_event_whatever_queues_it(
    agent_server: Server, db: Db
) -> None:
    """The notice runs are keyed by the offer event (unique per pane): a second queueing of
    the same event — another process, a replayed transaction — cannot add a second one."""
    d = await deal(agent_server)
    offer_id = await written_offer(agent_server, d.room_id)
    await approve_as_read(d.visitor, offer_id)
    await agent_server.settle()
    try:
        event = await db.scalar(
            select(OfferEvent)
            .where(OfferEvent.offer_id == uuid.UUID(offer_id))
            .order_by(OfferEvent.seq.desc())
            .limit(1)
        )
        assert event is not None
        participants = await RoomRepository(db).participants(event.room_id)
        again = await stage_notice_runs(db, event, participants, event.created_at)
        assert len(again) == 1  # the host's pane
        with pytest.raises(IntegrityError):
            await db.add(*again)
    finally:
        await db.rollback()
        await db.close()


async def test_notice_lines_open_a_session_and_never_send_on(agent_server: Server, db: Db) -> None:
    d = await deal(agent_server)
    offer_id = await negotiate_to_offer(agent_server, d)
    # The host's pane went quiet for longer than the pause: the notice reaches out unprompted.
    agent_server.clock.advance(agent_server.state.settings.session_pause + timedelta(minutes=1))
    await approve_as_read(d.visitor, offer_id)
    await agent_server.settle()
    host: list[Message] = await messages_in(db, d.room_id, "host")
    told = next(m for m in reversed(host) if "The brand approved the written offer" in m.body)
    earlier = [m for m in host if m.seq < told.seq]
    assert earlier
    assert told.session_no == earlier[-1].session_no + 1  # S3: unprompted
    try:
        notice_runs = {
            r.id
            for r in await db.scalars(
                select(AgentRun).where(AgentRun.trigger_event_id.is_not(None))
            )
        }
        sent = await db.scalars(select(Dispatch).where(Dispatch.source_run_id.in_(notice_runs)))
        assert list(sent) == []  # both sides are told by code; a notice never sends on
    finally:
        await db.close()
