"""A job's unit of work: it commits on a clean exit and only then publishes what it buffered and
wakes the workers; on an error it rolls back and sends nothing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Throttle
from dealroom.realtime.broker import InProcessBroker, Subscription
from dealroom.services.live.publish import RUNS_CHANNEL, RunSignal
from dealroom.services.unit_of_work import UnitOfWork

CHANNEL = "pane:room:visitor"
AT = datetime(2026, 1, 1, tzinfo=UTC)


class CommitWatchingBroker(InProcessBroker):
    """A real in-process broker that records, at each publish, whether the row was committed
    (read through a second session, so only a committed row is visible)."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__()
        self.engine = engine
        self.seen: list[tuple[str, bool]] = []

    async def publish(self, channel: str, payload: str) -> None:
        self.seen.append((channel, await _stored(self.engine)))
        await super().publish(channel, payload)


async def _stored(engine: AsyncEngine) -> bool:
    db = Db(create_sessionmaker(engine))
    try:
        return bool(await db.scalar(select(func.count()).select_from(Throttle)))
    finally:
        await db.close()


def _drain(sub: Subscription) -> list[str]:
    got = []
    while (payload := sub.take()) is not None:
        got.append(payload)
    return got


async def test_publishes_and_the_announce_go_out_after_the_commit(engine: AsyncEngine) -> None:
    broker = CommitWatchingBroker(engine)
    signal = RunSignal(broker)
    async with broker.subscribe([CHANNEL, RUNS_CHANNEL]) as sub:
        async with UnitOfWork(create_sessionmaker(engine), broker, signal) as uow:
            await uow.db.add(Throttle(key="k", window_start=AT, count=1, updated_at=AT))
            uow.publish((CHANNEL, "event"))
            uow.announce()
            assert broker.seen == []  # nothing before the commit
            assert signal.generation == 0
        assert broker.seen == [(CHANNEL, True), (RUNS_CHANNEL, True)]
        assert signal.generation == 1
        await asyncio.sleep(0)
        assert _drain(sub) == ["event", "1"]


async def test_an_error_rolls_back_and_sends_nothing(engine: AsyncEngine) -> None:
    broker = CommitWatchingBroker(engine)
    signal = RunSignal(broker)

    async def failing() -> None:
        async with UnitOfWork(create_sessionmaker(engine), broker, signal) as uow:
            await uow.db.add(Throttle(key="k", window_start=AT, count=1, updated_at=AT))
            uow.publish((CHANNEL, "event"))
            uow.announce()
            raise RuntimeError("the handler failed after its writes")

    with pytest.raises(RuntimeError):
        await failing()
    assert broker.seen == []
    assert signal.generation == 0
    assert not await _stored(engine)


async def test_a_discarded_unit_writes_nothing_and_a_wake_stays_in_process(
    engine: AsyncEngine,
) -> None:
    broker = CommitWatchingBroker(engine)
    signal = RunSignal(broker)
    async with UnitOfWork(create_sessionmaker(engine), broker, signal) as uow:
        await uow.db.add(Throttle(key="k", window_start=AT, count=1, updated_at=AT))
        uow.publish((CHANNEL, "event"))
        uow.discard()
    assert broker.seen == []
    assert not await _stored(engine)
    async with UnitOfWork(create_sessionmaker(engine), broker, signal) as uow:
        uow.wake()
    assert signal.generation == 1
    assert broker.seen == []  # a wake tells this process's workers only


async def test_a_unit_with_no_runner_publishes_after_the_commit_and_refuses_a_wake(
    engine: AsyncEngine,
) -> None:
    """The webhook worker's unit: no runs to wake, so asking to is a mistake, not a no-op."""
    broker = CommitWatchingBroker(engine)
    async with UnitOfWork(create_sessionmaker(engine), broker) as uow:
        await uow.db.add(Throttle(key="k", window_start=AT, count=1, updated_at=AT))
        uow.publish((CHANNEL, "event"))
        with pytest.raises(RuntimeError):
            uow.wake()
        with pytest.raises(RuntimeError):
            uow.announce()
    assert broker.seen == [(CHANNEL, True)]
