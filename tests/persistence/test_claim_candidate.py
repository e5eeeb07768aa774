"""PostgreSQL's claim chooses a run and takes its pane's row lock in one statement: a claim passes
over a pane a post or an apply holds, never waiting on it, skips a run another worker is claiming,
and never takes a run whose pane already has one running."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timedelta
from typing import cast

import pytest
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.persistence import claim_statements as q
from dealroom.persistence import raw_lane
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, Participant
from dealroom.persistence.runs import RunRepository
from dealroom.services.turns.queue import RunStatus
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


async def test_a_run_put_back_behind_a_running_sibling_waits_for_it(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """A failed run retried (queued again with its own, older time) while a younger sibling
    of its pane runs: the pane is busy, so only its Distil is offered."""
    _, (_retried, running, distil) = await queued_runs(
        pg_engine, clock, "claimretried", AgentName.PERSONA, AgentName.PERSONA, AgentName.DISTIL
    )
    async with pg_engine.begin() as conn:
        await conn.execute(update(AgentRun).where(AgentRun.id == running).values(status="running"))
    assert await _candidate(pg_engine, clock) == distil


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


BACKLOG = 2400
PANES = 60


def _runs(
    room: object, panes: list[uuid.UUID], at: datetime, status: str, count: int
) -> list[dict[str, object]]:
    """``count`` runs over ``panes`` in turn, personas and Distils alternating, a millisecond
    apart from ``at``."""
    made: list[dict[str, object]] = []
    for n in range(count):
        when = at + timedelta(milliseconds=n)
        made.append(
            dict(
                id=uuid.uuid4(),
                room_id=room,
                participant_id=panes[n % len(panes)],
                agent=(AgentName.PERSONA if n % 2 else AgentName.DISTIL).value,
                chain_depth=0,
                status=status,
                attempts=1,
                no_op=False,
                not_before=when,
                created_at=when,
            )
        )
    return made


async def _panes(
    engine: AsyncEngine, clock: ManualClock, handle: str, count: int
) -> tuple[object, list[uuid.UUID]]:
    """A room with ``count`` guest panes (the first a real guest's), and its id."""
    first, _ = await queued_runs(engine, clock, handle)
    async with engine.begin() as conn:
        room = await conn.scalar(select(Participant.room_id).where(Participant.id == first))
        others = [
            dict(
                id=uuid.uuid4(),
                room_id=room,
                key=f"{handle}-{n}",
                last_merged_memory_version=0,
                created_at=clock.now(),
            )
            for n in range(count - 1)
        ]
        await conn.execute(insert(Participant), others)
    return room, [first, *(cast(uuid.UUID, other["id"]) for other in others)]


@pytest.mark.parametrize("plan", ["custom", "generic"])
@pytest.mark.parametrize("statistics", ["taken while nothing was queued", "fresh"])
async def test_a_backlog_costs_a_claim_its_oldest_runs_whatever_the_statistics_say(
    pg_engine: AsyncEngine, clock: ManualClock, statistics: str, plan: str
) -> None:
    """A backlog of 2,400 runs over sixty panes: the candidate's statement reads a few times
    the oldest runs it looks at first, not the backlog, whether the planner's statistics were
    taken while nothing was queued (an ``ANALYZE`` between bursts) or with the backlog in
    them, and in the plan PostgreSQL's plan cache keeps for a prepared statement after five
    runs (``generic``: the parameters unknown, so only what the SQL itself says selects the
    partial index; with the statuses bound as parameters it read the whole table). Counted
    from PostgreSQL's own ``EXPLAIN ANALYZE`` (rows produced and rows filtered out, every
    node): the two ``NOT EXISTS`` the window replaced read the whole backlog for each
    queue's head with the first statistics (105,000 rows with 600 queued; a backlog of 5,000
    cost 1.7 s a claim), and the window over the whole queue reads all of it at least three
    times. The oldest run is still the one chosen."""
    room, panes = await _panes(pg_engine, clock, "backlog", PANES)
    async with pg_engine.begin() as conn:
        await conn.execute(insert(AgentRun), _runs(room, panes, clock.now(), "done", 2 * BACKLOG))
    if statistics != "fresh":
        async with pg_engine.begin() as conn:
            await conn.execute(text("ANALYZE agent_runs"))  # nothing queued in the sample
    clock.advance(timedelta(seconds=5))
    backlog = _runs(room, panes, clock.now(), "queued", BACKLOG)
    async with pg_engine.begin() as conn:
        await conn.execute(insert(AgentRun), backlog)
    if statistics == "fresh":
        async with pg_engine.begin() as conn:
            await conn.execute(text("ANALYZE agent_runs"))
    clock.advance(timedelta(seconds=5))

    read = await _rows_read_by_candidate(pg_engine, clock, generic=plan == "generic")
    assert read <= 16 * q.OLDEST, read
    assert await _candidate(pg_engine, clock) == backlog[0]["id"]


async def test_a_claim_finds_a_free_pane_behind_a_flood_in_a_held_one(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """More queued runs than a claim reads first, all one pane's personas, none running (so its
    head may start), and that pane held by a post: the claim passes it over for another pane's
    younger run instead of finding nothing (reading the whole queue only when none of the oldest
    heads a queue would leave the worker idle until its next poll)."""
    room, (flooded, other) = await _panes(pg_engine, clock, "heldflood", 2)
    flood = _runs(room, [flooded], clock.now(), "queued", q.OLDEST + 6)
    for run in flood:
        run["agent"] = AgentName.PERSONA.value
    clock.advance(timedelta(seconds=5))
    (younger,) = _runs(room, [other], clock.now(), "queued", 1)
    async with pg_engine.begin() as conn:
        await conn.execute(insert(AgentRun), [*flood, younger])
    clock.advance(timedelta(seconds=5))
    assert await _candidate(pg_engine, clock) == flood[0]["id"]
    post = Db(create_sessionmaker(pg_engine))  # a post in the flooded pane
    try:
        await post.execute(
            select(Participant.id).where(Participant.id == flooded).with_for_update(key_share=True)
        )
        found = await _candidate(pg_engine, clock)
    finally:
        await post.close()
    assert found == younger["id"]


async def test_a_claim_finds_a_younger_pane_behind_a_flood_in_one_busy_pane(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """More queued runs than a claim reads first, all one pane's personas while its persona
    runs: none of them may start, so the claim reads the whole queue and finds the younger
    run of another pane."""
    room, (flooded, other) = await _panes(pg_engine, clock, "flood", 2)
    flood = _runs(room, [flooded], clock.now(), "queued", q.OLDEST + 10)
    for run in flood:
        run["agent"] = AgentName.PERSONA.value
    flood[0]["status"] = "running"
    clock.advance(timedelta(seconds=5))
    (younger,) = _runs(room, [other], clock.now(), "queued", 1)
    async with pg_engine.begin() as conn:
        await conn.execute(insert(AgentRun), [*flood, younger])
    clock.advance(timedelta(seconds=5))
    assert await _candidate(pg_engine, clock) == younger["id"]


async def test_a_queue_waits_behind_its_head_however_long_the_queue_behind_it(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """A pane's head put back to wait five minutes (a retry), its next run due now, and more
    runs due now in other panes than a claim reads first: the claim goes by age, so it sees
    the waiting head and passes the pane's next run over for another pane's."""
    room, (waiting, *others) = await _panes(pg_engine, clock, "farhead", 4)
    head, following = _runs(room, [waiting], clock.now(), "queued", 2)
    head["not_before"] = clock.now() + timedelta(minutes=5)
    head["agent"] = following["agent"] = AgentName.PERSONA.value
    clock.advance(timedelta(seconds=5))
    crowd = _runs(room, others, clock.now(), "queued", q.OLDEST + 10)
    async with pg_engine.begin() as conn:
        await conn.execute(insert(AgentRun), [head, following, *crowd])
    clock.advance(timedelta(seconds=5))
    assert await _candidate(pg_engine, clock) == crowd[0]["id"]


async def _rows_read_by_candidate(
    engine: AsyncEngine, clock: ManualClock, *, generic: bool = False
) -> int:
    """The rows the candidate's plan reads (:func:`_rows_read`), prepared and executed as
    the lane runs it; ``generic``: in the plan PostgreSQL keeps for a prepared statement
    once it stops planning each run (``plan_cache_mode = force_generic_plan``)."""
    statement = q.claim_candidate()
    lane = raw_lane.compiled(statement, engine.dialect)
    assert lane is not None
    mode = "force_generic_plan" if generic else "force_custom_plan"
    async with engine.connect() as conn:
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None
        await driver.execute(f"SET plan_cache_mode = {mode}")
        await driver.execute(f"PREPARE claim_probe AS {lane.sql}")
        try:
            values = lane.parameters({"now": clock.now(), "limit": q.CANDIDATES})
            arguments = ", ".join(_literal(value) for value in values)  # EXECUTE binds none
            plan = await driver.fetchval(
                f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_probe({arguments})"
            )
        finally:
            await driver.execute("DEALLOCATE claim_probe")
            await driver.execute("RESET plan_cache_mode")
        await conn.rollback()
    found = json.loads(plan) if isinstance(plan, str) else plan  # the engine may decode JSON
    return _rows_read(found[0]["Plan"])


async def test_a_queue_waits_behind_its_head_while_the_head_is_not_due(
    pg_engine: AsyncEngine, clock: ManualClock
) -> None:
    """A run put back to wait (a retry, the memory lease) still heads its pane's queue: the
    runs queued after it wait too, and another pane's due run goes first."""
    _, (head, _younger) = await queued_runs(
        pg_engine, clock, "waitinghead", AgentName.PERSONA, AgentName.PERSONA
    )
    _, (other,) = await queued_runs(pg_engine, clock, "waitingother", AgentName.PERSONA)
    async with pg_engine.begin() as conn:
        later = clock.now() + timedelta(minutes=5)
        await conn.execute(update(AgentRun).where(AgentRun.id == head).values(not_before=later))
    assert await _candidate(pg_engine, clock) == other
    async with pg_engine.begin() as conn:
        await conn.execute(update(AgentRun).where(AgentRun.id == other).values(status="done"))
    assert await _candidate(pg_engine, clock) is None
    clock.advance(timedelta(minutes=6))
    assert await _candidate(pg_engine, clock) == head


def _literal(value: object) -> str:
    if isinstance(value, datetime):
        return f"'{value.isoformat()}'::timestamptz"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    assert isinstance(value, int), value
    return str(value)


def _rows_read(node: dict[str, object]) -> int:
    """Rows a plan's node and those under it produced or filtered out, over all its loops."""
    loops = int(cast(int, node.get("Actual Loops", 1)))
    own = int(cast(int, node.get("Actual Rows", 0))) * loops
    for key in ("Rows Removed by Filter", "Rows Removed by Join Filter"):
        own += int(cast(int, node.get(key, 0))) * loops
    below = cast(list[dict[str, object]], node.get("Plans", []))
    return own + sum(_rows_read(child) for child in below)
