"""PostgreSQL's claim chooses a run and takes its pane's row lock in one statement (issue 17):
a claim passes over a pane a post or an apply holds, never waiting on it, skips a run another
worker is claiming, and never takes a run whose pane already has one running."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, Participant
from dealroom.persistence.runs import RunRepository
from dealroom.services.run_queue import RunStatus
from tests.support.clock import ManualClock
from tests.support.rooms import queued_runs


async def _candidate(engine: AsyncEngine, clock: ManualClock) -> uuid.UUID | None:
    db = Db(create_sessionmaker(engine))
    try:
        return await RunRepository(db).candidate_locking_pane(clock.now())
    finally:
        await db.close()


async def test_a_claim_passes_over_a_pane_someone_holds_without_waiting(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """A claim never waits on a lock (a wait for the pane's closed a deadlock with a
    persona's apply): a pane a post or an apply holds is passed over for the next pane's
    run, and nothing is claimed while it is the only one; once the pane is free its run is
    the candidate again."""
    busy, (held,) = await queued_runs(pg_engine, clock, "claimheld", AgentName.PERSONA)
    post = Db(create_sessionmaker(pg_engine))  # a post in the pane, holding its row lock
    started: list[asyncio.Task[uuid.UUID | None]] = []

    async def at_once() -> uuid.UUID | None:
        started.append(asyncio.create_task(_candidate(pg_engine, clock)))
        await asyncio.wait({started[-1]}, timeout=2)
        assert started[-1].done()  # passed over, not waited for
        return started[-1].result()

    try:
        await post.execute(
            select(Participant.id).where(Participant.id == busy).with_for_update(key_share=True)
        )
        assert await at_once() is None
        _, (other,) = await queued_runs(pg_engine, clock, "claimfree", AgentName.PERSONA)
        assert await at_once() == other
        await post.commit()
    finally:
        await post.close()  # lets a candidate that waited end, so a failure does not hang
        await asyncio.gather(*started, return_exceptions=True)
    assert await at_once() == held


async def test_a_claim_skips_a_run_another_worker_is_claiming(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    _, (first,) = await queued_runs(pg_engine, clock, "claimskipsa", AgentName.PERSONA)
    _, (second,) = await queued_runs(pg_engine, clock, "claimskipsb", AgentName.PERSONA)
    worker = Db(create_sessionmaker(pg_engine))  # another worker, mid-claim of the oldest
    try:
        assert await RunRepository(worker).candidate_locking_pane(clock.now()) == first
        other = asyncio.create_task(_candidate(pg_engine, clock))
        await asyncio.wait({other}, timeout=5)
        assert other.done()  # it skipped the run being claimed instead of waiting for it
    finally:
        await worker.close()
    assert await other == second


async def test_a_pane_with_a_running_persona_offers_only_its_distil(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    _, (persona, _next_persona, distil) = await queued_runs(
        pg_engine, clock, "claimbusy", AgentName.PERSONA, AgentName.PERSONA, AgentName.DISTIL
    )
    db = Db(create_sessionmaker(pg_engine))
    try:
        row = await RunRepository(db).by_id(persona, lock=True)
        assert row is not None
        row.status = RunStatus.RUNNING.value
        await db.commit()
    finally:
        await db.close()

    assert await _candidate(pg_engine, clock) == distil  # not the pane's next persona


async def test_claims_racing_over_a_few_panes_take_each_run_once_in_order(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """Six workers claim at once over four panes of six queued personas each, each claim
    committed and its run done a moment later: a candidate another worker claimed after the
    candidate's snapshot is refused by the claim's re-check, never claimed twice; no pane
    ever has two runs running; each pane's runs go in the order they were queued."""
    queued = [
        (await queued_runs(pg_engine, clock, f"claimrace{i}", *[AgentName.PERSONA] * 6))[1]
        for i in range(4)
    ]
    total = sum(len(runs) for runs in queued)
    taken: list[uuid.UUID] = []
    most_running: list[int] = []

    async def worker() -> None:
        while len(taken) < total:
            db = Db(create_sessionmaker(pg_engine))
            try:
                until = clock.now() + timedelta(seconds=60)
                runs = RunRepository(db)
                candidate = await runs.candidate_locking_pane(clock.now())
                run = None
                if candidate is not None:
                    run = await runs.claim(clock.now(), until, run_id=candidate)
                if run is None:
                    await db.rollback()
                    await asyncio.sleep(0.005)
                    continue
                await db.commit()
                taken.append(run.id)
                most_running.append(await _running(pg_engine, run.participant_id))
                await db.execute(
                    update(AgentRun).where(AgentRun.id == run.id).values(status="done")
                )
                await db.commit()
            finally:
                await db.close()

    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(6))), timeout=60)
    assert sorted(taken) == sorted(run for runs in queued for run in runs)  # each once
    assert max(most_running) == 1
    for runs in queued:
        assert [run for run in taken if run in runs] == runs


async def _running(engine: AsyncEngine, pane: uuid.UUID) -> int:
    db = Db(create_sessionmaker(engine))
    try:
        found = await db.scalar(
            select(func.count(AgentRun.id)).where(
                AgentRun.participant_id == pane, AgentRun.status == "running"
            )
        )
        return int(found or 0)
    finally:
        await db.close()
