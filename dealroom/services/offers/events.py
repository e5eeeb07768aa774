"""An offer's stage events: recording a stage change (an ``offer_events`` row numbered in the
room's event sequence, the stage notice runs and the partner webhook outbox in the same
transaction, published after commit to both panes and to the offer's own channel), and
following an offer's stage changes from a cursor, stored then live."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Never

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.models.base import AgentName
from dealroom.domain import stage_notices
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import side_of
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Offer, OfferEvent, Participant
from dealroom.persistence.offers import OfferRepository, stage_prevs
from dealroom.persistence.repositories import RoomRepository
from dealroom.realtime.broker import Broker
from dealroom.services.live.events import (
    StageChangedEvent,
    offer_channel,
    pane_channel,
    stage_event,
)
from dealroom.services.live.heartbeats import Heartbeats, StreamEnd
from dealroom.services.live.publish import RUNS_CHANNEL, Publish
from dealroom.services.live.stream import LiveStream
from dealroom.services.notify import triggers as notify_triggers
from dealroom.services.offers.reads import stage_of
from dealroom.services.partners import webhooks
from dealroom.services.turns.queue import new_run
from dealroom.services.unit_of_work import reading


async def record_stage(
    db: Db, offer: Offer, *, actor: str, now: datetime, band_percent: Decimal | None = None
) -> list[Publish]:
    """Store the offer's (new) stage as an event in the room's sequence; return what to
    publish after commit: a StageChanged for each pane and one for the offer's channel. The
    webhook payload and the notifications it writes pass the firewall with ``band_percent``
    (the deployment's ``firewall_band_percent``)."""
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
    # Each side hears the change from its own agent, once — the notice runs are queued in the
    # event's own transaction and keyed by it (unique per pane).
    notices = await stage_notice_runs(db, row, await rooms.participants(offer.room_id), now)
    await db.add(row, *notices)
    # The partner webhook outbox, in this same transaction: committed with the change or not at
    # all.
    outbox = await webhooks.stage_recorded(db, offer, row, band_percent=band_percent)
    # The notification outbox (the parties' emails and in-app list), in this transaction too.
    outbox += await notify_triggers.stage_recorded(db, offer, row, band_percent=band_percent)

    def event(prev: int) -> str:
        return StageChangedEvent(seq, prev, offer.id, stage, offer.version, now).encode()

    published = [(pane_channel(offer.room_id, key), event(prev)) for key, prev in panes]
    published.append((offer_channel(offer.id), event(offer_prev)))
    if notices:
        published.append((RUNS_CHANNEL, "1"))  # every process's runner wakes for them
    return published + outbox


async def stage_notice_runs(
    db: Db, event: OfferEvent, participants: Sequence[Participant], now: datetime
) -> list[AgentRun]:
    """One persona run per pane the change concerns (SN1; every pane of a side it concerns),
    told the event (SN2)."""
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
        if side_of(p.key) in told and p.removed_at is None
    ]


REPLAY_BATCH = 200


def follow_offer(
    sessionmaker: async_sessionmaker[AsyncSession],
    broker: Broker,
    offer_id: uuid.UUID,
    after: int | None,
    started: Callable[[], None] = lambda: None,
    rereads: asyncio.Semaphore | None = None,
    heartbeats: Heartbeats | None = None,
) -> LiveStream[StageChangedEvent, Never]:
    """An offer's stage changes: with ``after``, the stored ones after that cursor first, then
    live, with no gap and no duplicate (``prev`` links, as for panes). The caller has checked
    the reader is a participant."""
    return LiveStream(
        broker,
        offer_channel(offer_id),
        after,
        partial(_offer_end, sessionmaker, offer_id),
        partial(_replay_offer, sessionmaker, offer_id),
        live=(StageChangedEvent,),
        started=started,
        rereads=rereads,
        heartbeat=None if heartbeats is None else (heartbeats, StreamEnd("offer", offer_id)),
    )


async def _offer_end(sessionmaker: async_sessionmaker[AsyncSession], offer_id: uuid.UUID) -> int:
    async with reading(sessionmaker) as db:
        return await OfferRepository(db).last_offer_event_seq(offer_id)


async def _replay_offer(
    sessionmaker: async_sessionmaker[AsyncSession], offer_id: uuid.UUID, after: int
) -> AsyncIterator[StageChangedEvent]:
    while True:
        async with reading(sessionmaker) as db:
            rows = await OfferRepository(db).offer_events_after(offer_id, after, REPLAY_BATCH)
        for row in rows:
            yield stage_event(row, after)
            after = row.seq
        if len(rows) < REPLAY_BATCH:
            return
