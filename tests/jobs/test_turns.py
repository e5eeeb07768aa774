"""The turn's durability: a model failure never loses the message, the pane is told, the
turn is retried and a re-run has no double effects; a crashed worker's run is recovered;
sessions roll after a pause and on an unprompted delivery; the memory lease fences writers."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from dealroom.agents.models.base import ModelClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind
from dealroom.jobs.distil import MemoryLease, holds
from dealroom.jobs.wiring import create_runner
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, Dispatch, Lease, ModelCall, Room
from dealroom.services.turns.context import RunSnapshot
from tests.conftest import Server
from tests.support.flaky import FlakyModel
from tests.support.graphql import Client, post, sign_up
from tests.support.turns import HOME, deal, messages_in, rows, system_kinds


@pytest.fixture
def model() -> ModelClient:
    return FlakyModel(failures=1)


async def home_room(server: Server) -> tuple[Client, str]:
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    return host, (await host.query(HOME))["me"]["homeRoom"]["id"]


async def test_a_failed_turn_keeps_the_message_tells_the_pane_and_retries_once(
    agent_server: Server, db: Db, model: FlakyModel
) -> None:
    host, home = await home_room(agent_server)
    posted = await post(host, home, "What do you have on file for me?")
    await agent_server.settle()
    pane = await messages_in(db, home, "host")
    assert [m.author_kind for m in pane] == [AuthorKind.PARTICIPANT, AuthorKind.SYSTEM]
    assert pane[0].id == uuid.UUID(posted["id"])
    assert "trying again" in pane[1].body
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert persona.status == "queued"
    assert persona.attempts == 1
    assert "503" in (persona.error or "")
    # The backoff is on the injected clock: move it and the turn runs again.
    agent_server.clock.advance(timedelta(seconds=5))
    agent_server.runner.wake()
    await agent_server.settle()
    pane = await messages_in(db, home, "host")
    assert [m.author_kind for m in pane] == [
        AuthorKind.PARTICIPANT,
        AuthorKind.SYSTEM,
        AuthorKind.AGENT,
    ]
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert persona.status == "done"
    assert persona.attempts == 2
    assert persona.reply_message_id == pane[2].id
    calls = [c for c in await rows(db, ModelCall, home) if c.agent == "persona"]
    assert [c.ok for c in sorted(calls, key=lambda c: c.created_at)] == [False, True]


@pytest.mark.parametrize("model", [FlakyModel(failures=99)], indirect=False)
async def test_a_turn_that_keeps_failing_is_marked_failed_and_can_be_re_run(
    agent_server: Server, db: Db, model: FlakyModel
) -> None:
    host, home = await home_room(agent_server)
    retry = "mutation($r: ID!) { retryTurn(roomId: $r) }"

    async def three_attempts() -> None:
        for _ in range(3):
            await agent_server.settle()
            agent_server.clock.advance(timedelta(minutes=1))
            agent_server.runner.wake()
        await agent_server.settle()

    await post(host, home, "Hello?")
    await three_attempts()
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert persona.status == "failed"
    assert persona.attempts == 3
    lines = [m.body for m in await messages_in(db, home, "host") if m.author_kind == "system"]
    assert len(lines) == 3
    assert "retry" in lines[-1]
    # Only the line of the turn that failed for good is TURN_FAILED: the one to offer a retry on.
    assert await system_kinds(host, home) == ["TURN_RETRYING", "TURN_RETRYING", "TURN_FAILED"]
    # Re-run while the model is still down: the pane is told again, as the first time.
    assert (await host.query(retry, {"r": home}))["retryTurn"] == 1
    await three_attempts()
    assert await system_kinds(host, home) == ["TURN_RETRYING", "TURN_RETRYING", "TURN_FAILED"] * 2
    model.failures = 0  # the model is back
    data = await host.query(retry, {"r": home})
    assert data["retryTurn"] == 1
    await agent_server.settle()
    replies = [m for m in await messages_in(db, home, "host") if m.author_kind == "agent"]
    assert len(replies) == 1
    # A second retry finds nothing failed: no double effects.
    again = await host.query(retry, {"r": home})
    assert again["retryTurn"] == 0


async def test_a_run_whose_worker_died_is_recovered_and_applied_once(
    server: Server, db: Db
) -> None:
    """``server`` runs no workers: this test drives the runner by hand."""
    host, home = await home_room(server)
    await post(host, home, "Hello?")
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    # A worker claimed the run and died before applying it: running, lease expired.
    await set_run(db, persona.id, status="running", attempts=1, lease_until=server.clock.now())
    server.clock.advance(timedelta(seconds=10))  # past the lease and the sweep interval
    while await server.runner.run_once():
        pass
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert persona.status == "done"
    assert persona.attempts == 2
    # Even a duplicate execution of an applied run (a lease lost after the commit) finds its
    # reply stored under run:<id> and does not post it twice.
    await set_run(db, persona.id, status="queued", attempts=2, lease_until=None)
    assert await server.runner.run_once()
    replies = [m for m in await messages_in(db, home, "host") if m.author_kind == "agent"]
    assert len(replies) == 1
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert persona.status == "done"


async def test_a_run_claimed_by_a_worker_that_then_died_is_re_run_within_seconds(
    server: Server, db: Db
) -> None:
    """Default settings: the run lease is short (15 s, renewed by the heartbeat of a live
    worker), so a crashed turn waits seconds, not the old 120 s, before it is re-run."""
    host, home = await home_room(server)
    await post(host, home, "Hello?")
    # A worker claims the run through the runner's own claim and dies before working on it:
    # no handler, no heartbeat, the row stays ``running`` with the lease the claim gave it.
    # (The post queued a persona and a Distil run; either may be claimed first, and a Distil
    # claimed on the way is abandoned the same way.)
    claimed = await server.runner._claim()
    while claimed is not None and claimed.agent != "persona":
        claimed = await server.runner._claim()
    assert claimed is not None
    server.clock.advance(timedelta(seconds=10))  # the lease still holds: no second runner
    while await server.runner.run_once():
        pass
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert (persona.status, persona.attempts) == ("running", 1)
    server.clock.advance(timedelta(seconds=10))  # 20 s after the claim
    while await server.runner.run_once():
        pass
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    assert (persona.status, persona.attempts) == ("done", 2)
    replies = [m for m in await messages_in(db, home, "host") if m.author_kind == "agent"]
    assert len(replies) == 1


async def set_run(db: Db, run_id: uuid.UUID, **values: object) -> None:
    try:
        await db.execute(update(AgentRun).where(AgentRun.id == run_id).values(**values))
        await db.commit()
    finally:
        await db.close()


async def test_a_participant_returning_after_the_pause_starts_a_new_session_read_alone(
    agent_server: Server, db: Db, model: FlakyModel
) -> None:
    model.failures = 0
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Hi, we're Glow Labs.")
    await agent_server.settle()
    agent_server.clock.advance(timedelta(minutes=31))
    await post(d.visitor, d.room_id, "Back again. What do you offer?")
    await agent_server.settle()
    pane = await messages_in(db, d.room_id, "visitor")
    sessions = [(m.author_kind, m.session_no) for m in pane]
    assert sessions == [("participant", 1), ("agent", 1), ("participant", 2), ("agent", 2)]


async def test_a_delivery_into_a_live_sitting_continues_its_session(
    agent_server: Server, db: Db, model: FlakyModel
) -> None:
    model.failures = 0
    d = await deal(agent_server)
    await post(d.visitor, d.room_id, "Could you do a sponsored post for $4,000?")
    await agent_server.settle()
    pane = await messages_in(db, d.room_id, "visitor")
    delivered = [m for m in pane if m.relayed_dispatch_id is not None]
    assert len(delivered) == 1
    asked = next(m for m in pane if m.author_kind == "participant")
    # S3 opens a session only in a pane quiet for longer than the pause: the answer to what
    # was just asked belongs to the sitting it answers (tests/e2e/test_stage_notices.py: quiet)
    assert delivered[0].session_no == asked.session_no
    dispatch = await db.get(Dispatch, delivered[0].relayed_dispatch_id)
    await db.close()
    assert dispatch is not None
    assert dispatch.delivered_message_id == delivered[0].id


async def test_the_memory_lease_fences_a_writer_whose_lease_was_taken_over(
    agent_server: Server, db: Db
) -> None:
    _host, home = await home_room(agent_server)
    room_id = uuid.UUID(home)
    lease = MemoryLease(agent_server.runner.deps)
    first = await lease.acquire(room_id, "writer-a")
    assert first is not None
    assert await lease.acquire(room_id, "writer-b") is None  # held
    agent_server.clock.advance(timedelta(minutes=2))  # writer-a stalls past its lease
    second = await lease.acquire(room_id, "writer-b")
    assert second is not None
    assert second > first
    now = agent_server.clock.now()
    try:
        assert not await holds(db, room_id, first, now)  # writer-a may no longer write
        assert await holds(db, room_id, second, now)
    finally:
        await db.close()
    await lease.release(room_id, first)  # a stale release does not free writer-b's lease
    try:
        row = await db.scalar(select(Lease).where(Lease.room_id == room_id))
        assert row is not None
        assert row.holder == "writer-b"
    finally:
        await db.close()


@pytest.mark.parametrize("model", [FlakyModel(failures=0)], indirect=False)
async def test_models_come_from_config_per_agent_and_a_room_can_pick_its_own(
    agent_server: Server, db: Db
) -> None:
    d = await deal(agent_server)
    try:
        await db.execute(
            update(Room)
            .where(Room.id == uuid.UUID(d.room_id))
            .values(model_picks={"persona": "gemini-2.5-pro"})
        )
        await db.commit()
    finally:
        await db.close()
    await post(d.visitor, d.room_id, "Hi there, we're Glow Labs.")
    await agent_server.settle()
    calls = {c.agent: c.model for c in await rows(db, ModelCall, d.room_id)}
    assert calls == {"persona": "gemini-2.5-pro", "distil": "gemini-2.5-flash"}
    home_calls = {c.agent: c.model for c in await rows(db, ModelCall, d.home_id)}
    assert home_calls["persona"] == "gemini-2.5-flash"


async def test_a_working_run_keeps_its_lease_and_a_stale_claim_does_not(
    server: Server, db: Db, settings: Settings
) -> None:
    """The heartbeat extends a running run's lease (a slow model call is not a dead worker);
    it never extends a claim that has since been superseded (another attempt)."""
    host, home = await home_room(server)
    await post(host, home, "Hello?")
    [persona] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
    expired = server.clock.now() - timedelta(minutes=5)
    await set_run(db, persona.id, status="running", attempts=1, lease_until=expired)
    runner = create_runner(
        settings.model_copy(update={"run_lease_seconds": 1}),
        create_sessionmaker(server.engine),
        server.broker,
        server.clock,
        OfflineClient(),
    )
    snapshot = RunSnapshot(
        persona.id,
        persona.room_id,
        persona.participant_id,
        "persona",
        persona.trigger_message_id,
        None,
        0,
        attempts=1,
    )
    stale = RunSnapshot(
        persona.id,
        persona.room_id,
        persona.participant_id,
        "persona",
        persona.trigger_message_id,
        None,
        0,
        attempts=0,
    )
    beats = [asyncio.create_task(runner._heartbeat(stale))]
    try:
        await asyncio.sleep(0.5)  # a stale heartbeat has had its chance
        [row] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
        assert row.lease_until == expired
        beats.append(asyncio.create_task(runner._heartbeat(snapshot)))
        for _ in range(100):
            [row] = [r for r in await rows(db, AgentRun, home) if r.agent == "persona"]
            if row.lease_until != expired:
                break
            await asyncio.sleep(0.05)
        assert row.lease_until is not None
        assert row.lease_until > server.clock.now()
    finally:
        for beat in beats:
            beat.cancel()
        await asyncio.gather(*beats, return_exceptions=True)
