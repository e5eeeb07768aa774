"""A persona run's first reads are made in its claim's transaction: one unit of work less per run.
A ``prepare`` that fails rolls its claim back, and the run is claimed again without it, so the
handler reads for itself and a failure takes the run's own path instead of the run being claimed
and rolled back for ever."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.jobs.persona import PersonaTurn
from dealroom.jobs.runner import TurnRunner
from dealroom.jobs.wiring import create_runner
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, Message
from dealroom.realtime.broker import Broker
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import Ledger
from dealroom.services.turns.runs import RunnerDeps
from tests.support.clock import ManualClock
from tests.support.rooms import queued_runs


@contextmanager
def transactions(engine: AsyncEngine) -> Iterator[list[int]]:
    """How many transactions the engine began while the block ran (``len`` of the list)."""
    begun: list[int] = []

    def record(_conn: Any) -> None:
        begun.append(1)

    event.listen(engine.sync_engine, "begin", record)
    try:
        yield begun
    finally:
        event.remove(engine.sync_engine, "begin", record)


async def test_a_persona_run_reads_its_context_in_its_claims_transaction(
    engine: AsyncEngine, clock: ManualClock, broker: Broker, settings: Settings
) -> None:
    pane, (run_id,) = await queued_runs(engine, clock, "claimload", AgentName.PERSONA)
    client = OfflineClient()
    runner = create_runner(settings, create_sessionmaker(engine), broker, clock, client)
    try:
        await runner.sweep()  # the periodic upkeep, due at once, outside what is counted
        with transactions(engine) as begun:
            assert await runner.run_once()
    finally:
        await client.close()
    # the claim with the context's reads, then the apply (a separate load made it three)
    assert len(begun) == 2
    row, replies = await _outcome(engine, run_id, pane)
    assert (row.status, row.error) == ("done", None)
    assert replies == 1


async def test_a_failing_prepare_gives_the_run_to_its_handler_unprepared(
    engine: AsyncEngine, clock: ManualClock, broker: Broker, settings: Settings
) -> None:
    pane, (run_id,) = await queued_runs(engine, clock, "claimfails", AgentName.PERSONA)
    client = OfflineClient()
    sessionmaker = create_sessionmaker(engine)
    deps = RunnerDeps(settings, sessionmaker, broker, clock, Ledger(client, sessionmaker, clock))
    runner = TurnRunner(deps)
    calls: list[RunSnapshot] = []

    async def prepare(_db: Db, run: RunSnapshot) -> RunSnapshot:
        calls.append(run)
        raise RuntimeError("a prepare that fails")

    runner.register(AgentName.PERSONA, PersonaTurn(deps), prepare)
    try:
        assert await runner.run_once()
    finally:
        await client.close()
    assert len(calls) == 1  # the second claim did not prepare
    row, replies = await _outcome(engine, run_id, pane)
    assert (row.status, row.attempts) == ("done", 1)  # the rolled-back claim spent nothing
    assert replies == 1


async def _outcome(engine: AsyncEngine, run_id: Any, pane: Any) -> tuple[AgentRun, int]:
    db = Db(create_sessionmaker(engine))
    try:
        row = await db.scalar(select(AgentRun).where(AgentRun.id == run_id))
        assert row is not None
        replies = await db.scalars(
            select(Message.id).where(Message.participant_id == pane, Message.author_kind == "agent")
        )
        return row, len(replies)
    finally:
        await db.close()
