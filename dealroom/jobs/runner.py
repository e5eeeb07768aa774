"""The agent turn's worker loop (ARCHITECTURE "The turn").

``postMessage`` stores the message and, in the same transaction, a persona run and a Distil
run for its pane; it never waits for a model. Workers in any process claim due runs from
``agent_runs`` (one running persona per pane at a time), execute them, and either mark them
done together with their effects in one transaction, or schedule a retry. A run is never
lost: a crash leaves it ``running`` with an expiring lease, and it is re-queued. The queue's
rows are made in ``run_queue``; what a handler is given is ``run_handler``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import structlog

from dealroom.agents.models.base import AgentName, ModelError
from dealroom.domain import durable
from dealroom.jobs.handler import Handler
from dealroom.persistence.db import Db
from dealroom.persistence.runs import RunRepository
from dealroom.services.live.publish import RUNS_CHANNEL, RunSignal
from dealroom.services.turns.context import ClaimLoad, RunSnapshot
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, still_claimed, system_line
from dealroom.services.unit_of_work import UnitOfWork, reading

log = structlog.get_logger(__name__)

__all__ = ["RUNS_CHANNEL", "TurnRunner"]

IDLE_POLL_SECONDS = 0.1
"""How often `wait_idle` counts outstanding runs when no run of this process has ended."""

CLAIM_TRIES = 3
"""Candidates one PostgreSQL claim tries before it reports nothing due: a candidate its
statement saw queued may have been claimed by another worker a moment before."""


Prepare = Callable[[Db, RunSnapshot], Awaitable[RunSnapshot]]
"""A handler's first reads, made in the claim's own transaction: given the claimed run, it
returns the run with what it read (``ClaimLoad.prepared``). Reads only: it must not wait on a
row lock (the claim holds its pane's) nor write."""


class _PrepareFailed(Exception):
    """A handler's ``prepare`` raised (the run's id): the claim is rolled back and made again
    without it."""


@dataclass
class _Sweep:
    run: Callable[[], Awaitable[object]]
    every: timedelta
    last: datetime | None = None


class TurnRunner:
    """Claims and executes agent runs. One per process; ``workers`` runs at a time."""

    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self._tasks: list[asyncio.Task[None]] = []
        self._finished = asyncio.Event()
        """Set (and replaced) each time a run of this process finishes: ``wait_idle`` looks."""
        self._closing = False
        self._handlers: dict[str, Handler] = {}
        self._prepares: dict[str, Prepare] = {}
        self._last_sweep: datetime | None = None
        self._sweeps: list[_Sweep] = []
        self._sweeping = asyncio.Lock()
        self._listener: asyncio.Task[None] | None = None

    def register(self, agent: AgentName, handler: Handler, prepare: Prepare | None = None) -> None:
        """``prepare``: the handler's first reads, made in the claim's transaction (one unit
        of work less per run); the handler reads for itself when the run has none."""
        self._handlers[agent.value] = handler
        if prepare is not None:
            self._prepares[agent.value] = prepare

    def add_sweep(
        self, sweep: Callable[[], Awaitable[object]], every: timedelta = timedelta(seconds=5)
    ) -> None:
        """Periodic upkeep the workers run about every ``every`` on the clock (payment
        captures every 5 seconds, due room watches every second)."""
        self._sweeps.append(_Sweep(sweep, every))

    def handles(self, agent: AgentName) -> bool:
        """Whether a handler is registered for ``agent`` (the curator step asks)."""
        return agent.value in self._handlers

    async def sweep(self, *, due_only: bool = False) -> None:
        """Run the periodic upkeep now (``due_only``: the sweeps whose interval passed); one
        failing sweep does not stop the others."""
        # One pass at a time in this process: two workers (or a worker and an explicit call)
        # sweeping at once would both read "nothing queued yet" and queue the same work twice.
        async with self._sweeping:
            now = self.deps.clock.now()
            for sweep in self._sweeps:
                if due_only and sweep.last is not None and now - sweep.last <= sweep.every:
                    continue
                sweep.last = now
                try:
                    await sweep.run()
                except Exception:
                    log.exception("sweep_failed")

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self._closing = False
        for index in range(self.deps.settings.workers):
            self._tasks.append(asyncio.create_task(self._worker(), name=f"agent-worker-{index}"))
        if self.deps.settings.workers:
            self._listener = asyncio.create_task(self._listen(), name="agent-runs-listener")

    async def close(self) -> None:
        self._closing = True
        self.wake()
        tasks = [*self._tasks, *([self._listener] if self._listener else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self._listener = None

    def wake(self) -> None:
        """New runs may be due: wake idle workers now instead of at the next poll."""
        self.deps.signal.wake()

    async def announce(self) -> None:
        """Tell every process's runner (and this one) that runs were queued."""
        await self.deps.signal.announce()

    @property
    def signal(self) -> RunSignal:
        """What a request hands its after-commit publish to announce the runs it queued in
        the same round trip as its events (``publish.publish_after_commit``)."""
        return self.deps.signal

    async def _listen(self) -> None:
        async with self.deps.broker.subscribe([RUNS_CHANNEL]) as subscription:
            async for _payload in subscription:
                self.wake()

    async def _worker(self) -> None:
        poll = self.deps.settings.worker_poll_seconds
        while not self._closing:
            signal = self.deps.signal
            generation, changed = signal.generation, signal.changed
            try:
                ran = await self.run_once()
            except Exception:
                log.exception("agent_worker_error")
                ran = False
            if ran or signal.generation != generation:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), poll)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no run is running or due (tests and benchmarks)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            finished = self._finished  # taken before counting: a run ending meanwhile is seen
            async with reading(self.deps.sessionmaker) as db:
                outstanding = await RunRepository(db).outstanding(self.deps.clock.now())
            if outstanding == 0:
                return
            remaining = deadline - loop.time()
            if remaining < 0:
                raise TimeoutError(f"{outstanding} agent runs still outstanding")
            # Only a run ending can bring the count to 0 (a queued one adds to it): one of
            # this process's wakes this at once; the poll sees other processes' runs.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(finished.wait(), min(IDLE_POLL_SECONDS, remaining))

    # --- one run ----------------------------------------------------------------------------

    async def run_once(self) -> bool:
        """Claim one due run and execute it. False when nothing was due."""
        if self._sweeps:
            await self.sweep(due_only=True)
        run = await self._claim()
        if run is None:
            return False
        handler = self._handlers.get(run.agent)
        heartbeat = asyncio.create_task(self._heartbeat(run), name=f"lease-{run.id}")
        try:
            if handler is None:
                raise RuntimeError(f"no handler for agent {run.agent!r}")
            await handler(run)
        except Exception as exc:
            log.warning(
                "agent_run_failed",
                run_id=str(run.id),
                agent=run.agent,
                attempt=run.attempts,
                error=f"{type(exc).__name__}: {exc}",
            )
            await self._fail(run, exc)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            finished, self._finished = self._finished, asyncio.Event()
            finished.set()
        return True

    async def _heartbeat(self, run: RunSnapshot) -> None:
        """Extend the run's lease while it works, so a slow model call (the SDK may retry for
        minutes) is never taken for a dead worker and run twice."""
        seconds = self.deps.settings.run_lease_seconds
        while True:
            await asyncio.sleep(max(0.05, seconds / 3))
            try:
                async with UnitOfWork(self.deps.sessionmaker) as unit:
                    db = unit.db
                    until = self.deps.clock.now() + timedelta(seconds=seconds)
                    await RunRepository(db).extend_lease(run.id, run.attempts, until)
            except Exception:
                log.warning("run_heartbeat_failed", run_id=str(run.id))

    async def _claim(self) -> RunSnapshot | None:
        """Claim a due run, with its handler's first reads (``prepare``) in the same
        transaction. A ``prepare`` that fails rolls the claim back, and the claim is made
        again without it: the handler then reads for itself, and a failure there takes the
        run's own path (a retry, then failed) instead of the run being claimed and rolled
        back again and again."""
        try:
            return await self._claim_once(prepare=True)
        except _PrepareFailed as failed:
            cause = failed.__cause__
            log.warning(
                "run_prepare_failed", run_id=str(failed), error=f"{type(cause).__name__}: {cause}"
            )
            return await self._claim_once(prepare=False)

    async def _claim_once(self, *, prepare: bool) -> RunSnapshot | None:
        """One statement on SQLite (``UPDATE … RETURNING`` choosing the run inside it); on
        PostgreSQL two: a ``SKIP LOCKED`` candidate with its pane's row lock, then the same
        ``UPDATE … RETURNING`` re-checking under a fresh snapshot that no sibling of the pane
        started."""
        settings = self.deps.settings
        async with self.deps.unit() as uow:
            runs = RunRepository(uow.db)
            now = self.deps.clock.now()
            if self._last_sweep is None or now - self._last_sweep > timedelta(seconds=5):
                self._last_sweep = now
                await runs.requeue_expired(now, settings.turn_attempts)
            lease_until = now + timedelta(seconds=settings.run_lease_seconds)
            if uow.db.dialect == "sqlite":  # one writer: claims are serial
                run = _snapshot(await runs.claim(now, lease_until))
            else:
                # The candidate never waits on a lock, so trying again in the same
                # transaction cannot deadlock. Again: a candidate the statement's snapshot
                # still saw queued may have been claimed by another worker just before.
                run = None
                for _ in range(CLAIM_TRIES):
                    candidate = await runs.candidate_locking_pane(now)
                    if candidate is None:
                        return None
                    # one persona (one Distil) per pane at a time, in order
                    run = _snapshot(await runs.claim(now, lease_until, run_id=candidate))
                    if run is not None:
                        break
            reads = self._prepares.get(run.agent) if run is not None and prepare else None
            if run is None or reads is None:
                return run
            try:
                return await reads(uow.db, run)
            except Exception as exc:
                raise _PrepareFailed(str(run.id)) from exc

    async def _fail(self, run: RunSnapshot, exc: BaseException) -> None:
        """Schedule a retry (or give up) and tell the pane. The user's message is stored
        already; nothing of the failed attempt was committed, so a re-run has no double
        effects."""
        settings = self.deps.settings
        async with self.deps.unit() as uow:
            db = uow.db
            row = await still_claimed(db, run)
            if row is None:
                uow.discard()
                return  # another worker owns it now
            now = self.deps.clock.now()
            queued = row.not_before  # the attempt's, before a retry moves it
            retry = row.attempts < settings.turn_attempts and (
                not isinstance(exc, ModelError) or exc.transient
            )
            row.error = f"{type(exc).__name__}: {exc}"[:2000]
            if retry:
                row.status = RunStatus.QUEUED.value
                delay = settings.turn_retry_seconds * (2 ** (row.attempts - 1))
                row.not_before = now + timedelta(seconds=delay)
                uow.wake()
            else:
                row.status = RunStatus.FAILED.value
                row.finished_at = now
            if run.agent == AgentName.PERSONA.value:
                text = (
                    "The agent could not answer just now; it is trying again."
                    if retry
                    else "The agent could not answer. Use retry to run this turn again."
                )
                # Its own kind: clients drop the attempt's streamed draft, and offer retryTurn
                # on a turn that failed for good.
                key = durable.turn_failed_key(run.id, queued, again=retry)
                line = await system_line(db, self.deps.clock, run, text, key=key)
                if line is not None:
                    uow.publish(line)


def _snapshot(row: Any | None) -> RunSnapshot | None:
    if row is None:
        return None
    return RunSnapshot(
        id=row.id,
        room_id=row.room_id,
        participant_id=row.participant_id,
        agent=row.agent,
        trigger_message_id=row.trigger_message_id,
        trigger_dispatch_id=row.trigger_dispatch_id,
        chain_depth=row.chain_depth,
        attempts=row.attempts,
        trigger_event_id=row.trigger_event_id,
        watch_generation=row.watch_generation,
        loaded=ClaimLoad(
            room_kind=row.room_kind,
            model_picks=dict(row.room_model_picks or {}),
            memory=dict(row.room_memory or {}),
            memory_version=int(row.room_memory_version or 0),
            taken_over=bool(row.taken_over),
            merge_maybe_due=bool(row.merge_maybe_due),
            offer_status=row.offer_status,
            offer_brand_approved_at=row.offer_brand_approved_at,
        ),
    )
