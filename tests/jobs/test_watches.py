"""Room watches (QW1-QW4 in dealroom/jobs/watches.py): every reply re-arms the room's watch, a step
fires once per quiet, a stale timer fires nothing, the Guard's own push never re-arms, and a watch
survives a restart."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.jobs.watches import WatchFirer
from dealroom.persistence.db import Db
from dealroom.realtime import Broker
from dealroom.services.turns.queue import RunStatus
from tests.conftest import Server, serving
from tests.support.clock import ManualClock
from tests.support.graphql import post
from tests.support.offers import open_deal, settle
from tests.support.turns import deal
from tests.support.watches import QUIET, quiet, runs_of, watch_of


async def test_every_reply_re_arms_and_the_guard_fires_once_per_quiet(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we are Fjord Goods and want one sponsored post.")
    await agent_server.settle()
    armed = await watch_of(db, d.room_id)
    # QW1: the visitor's message and the agents' replies each re-armed it.
    assert armed.generation >= 2
    assert armed.step == "guard"
    await agent_server.runner.sweep()
    assert await runs_of(db, d.room_id, AgentName.GUARD) == []  # not quiet yet

    await quiet(agent_server)
    [guard] = await runs_of(db, d.room_id, AgentName.GUARD)
    assert guard.watch_generation == armed.generation
    assert guard.status == RunStatus.DONE
    assert (await watch_of(db, d.room_id)).step == "curator"

    await quiet(agent_server)  # still quiet: the Guard does not run again
    assert len(await runs_of(db, d.room_id, AgentName.GUARD)) == 1


async def test_a_stale_timer_fires_nothing(agent_server: Server, db: Db) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we want one sponsored post in May.")
    await agent_server.settle()
    old = (await watch_of(db, d.room_id)).generation
    await post(d.visitor, d.room_id, "Also a story, if you do those.")
    await agent_server.settle()
    new = (await watch_of(db, d.room_id)).generation
    assert new > old
    await agent_server.runner.close()  # only this test's timers fire
    agent_server.clock.advance(QUIET)
    firer = WatchFirer(agent_server.runner)

    assert await firer.fire(uuid.UUID(d.room_id), old) is False  # QW2: the old timer
    assert await runs_of(db, d.room_id, AgentName.GUARD) == []
    assert await firer.fire(uuid.UUID(d.room_id), new) is True
    assert await firer.fire(uuid.UUID(d.room_id), new) is False  # a duplicate of it
    await agent_server.runner.start()
    await agent_server.settle()
    assert len(await runs_of(db, d.room_id, AgentName.GUARD)) == 1


async def test_a_timer_that_is_not_due_fires_nothing(agent_server: Server, db: Db) -> None:
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we want one sponsored post in May.")
    await agent_server.settle()
    generation = (await watch_of(db, d.room_id)).generation
    agent_server.clock.advance(timedelta(seconds=30))
    assert await WatchFirer(agent_server.runner).fire(uuid.UUID(d.room_id), generation) is False
    assert await runs_of(db, d.room_id, AgentName.GUARD) == []


async def test_the_curator_step_runs_arvist_for_the_quiet_room_after_the_guard(
    agent_server: Server, db: Db
) -> None:
    """The second window of the chain queues the real Arvist, once per bound participant, and never
    before the Guard's window."""
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we want one sponsored post in May.")
    await agent_server.settle()
    await quiet(agent_server)  # the Guard
    assert await runs_of(db, d.room_id, AgentName.ARVIST) == []
    await quiet(agent_server, timedelta(seconds=600))  # the curator step
    assert (await watch_of(db, d.room_id)).step == "done"
    runs = await runs_of(db, d.room_id, AgentName.ARVIST)
    assert len(runs) == 2  # the host and the signed-in brand
    assert {r.status for r in runs} == {"done"}


async def test_a_due_watch_survives_a_restart(
    settings: Settings,
    agent_settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
    db: Db,
) -> None:
    """QW4: the watch is a row. A process that stored it (and runs no agents) stops; another
    starts later and fires it."""
    async with serving(settings, engine, broker, clock) as first:
        d = await open_deal(first)
        await post(d.visitor, d.room_id, "Hi, we want one sponsored post in May.")
        await settle(first)  # this test runs the turn itself: the process has no workers
        assert await runs_of(db, d.room_id, AgentName.GUARD) == []
    clock.advance(QUIET)
    async with serving(agent_settings, engine, broker, clock) as second:
        await quiet(second, timedelta())
        guards = await runs_of(db, d.room_id, AgentName.GUARD)
        assert len(guards) == 1
