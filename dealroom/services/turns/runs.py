"""What the runner and every agent run handler share: the :class:`Runner` interface requests
and the demo see of the job runner (``jobs/runner.py`` implements it), the
:class:`RunnerDeps` a handler is built with, :func:`model_for` (the model each agent runs
on), :class:`StaleRun` (raised when the run's fence shows another worker owns it), and
:func:`system_line`, the line a run writes into its own pane (a failure notice, a system or
agent line)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.domain.seats import AuthorKind
from dealroom.domain.sessions import SessionRule
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Participant
from dealroom.persistence.runs import RunRepository
from dealroom.realtime.broker import Broker
from dealroom.services.clock import Clock
from dealroom.services.live.events import MessageAddedEvent, MessageView, pane_channel
from dealroom.services.live.publish import RunSignal
from dealroom.services.rooms import pane_log
from dealroom.services.rooms.pane_log import Stored
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import Ledger
from dealroom.services.turns.queue import RunStatus
from dealroom.services.unit_of_work import UnitOfWork


class Runner(Protocol):
    """The job runner as requests, the app's lifespan and the demo use it; services depend on
    this interface so that they never import ``jobs``."""

    @property
    def signal(self) -> RunSignal: ...

    async def announce(self) -> None: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run_once(self) -> bool: ...

    async def wait_idle(self, timeout: float = 30.0) -> None: ...

    async def sweep(self, *, due_only: bool = False) -> None: ...


@dataclass
class RunnerDeps:
    settings: Settings
    sessionmaker: async_sessionmaker[AsyncSession]
    broker: Broker
    clock: Clock
    ledger: Ledger
    signal: RunSignal = field(init=False)
    """Wakes the workers; a handler sets it only through its unit of work."""

    def __post_init__(self) -> None:
        self.signal = RunSignal(self.broker)

    def unit(self) -> UnitOfWork:
        """A job's unit of work: commit on exit, publishes and wake-ups after the commit."""
        return UnitOfWork(self.sessionmaker, self.broker, self.signal)


class StaleRun(Exception):
    """The run was taken over (its lease expired and another worker claimed it)."""


async def still_claimed(db: Db, run: RunSnapshot) -> AgentRun | None:
    """The run's fence, checked in the transaction that is about to write: the run's row,
    locked, while this worker's claim still holds it (running, at the attempt it was claimed
    for); None once its lease expired and another worker claimed it again."""
    row = await RunRepository(db).by_id(run.id, lock=True)
    if row is None or row.status != RunStatus.RUNNING or row.attempts != run.attempts:
        return None
    return row


async def fence(db: Db, run: RunSnapshot) -> AgentRun:
    """:func:`still_claimed`, or :class:`StaleRun`: the write that follows must not happen."""
    row = await still_claimed(db, run)
    if row is None:
        raise StaleRun(str(run.id))
    return row


def model_for(deps: RunnerDeps, agent: AgentName, picks: dict[str, Any]) -> str:
    """Model per agent from config, overridden per room (``rooms.model_picks``)."""
    configured = {
        AgentName.PERSONA: deps.settings.persona_model,
        AgentName.DISTIL: deps.settings.distil_model,
        AgentName.CONTEXT_FILTER: deps.settings.filter_model,
        AgentName.OFFER_GEN: deps.settings.offer_gen_model,
        AgentName.AGREEMENT: deps.settings.agreement_model,
        AgentName.GUARD: deps.settings.guard_model,
    }[agent]
    picked = picks.get(agent.value)
    return picked if isinstance(picked, str) and picked else configured


async def system_line(
    db: Db,
    clock: Clock,
    run: RunSnapshot,
    body: str,
    *,
    key: str,
    author: AuthorKind = AuthorKind.SYSTEM,
) -> tuple[str, str] | None:
    """Store a system line (or, with ``author``, an agent's line) in the run's pane through
    the pane log; returns (channel, payload) to publish after commit, or None when the same
    line was stored before (idempotent on ``key``). S4: it continues the pane's session."""
    pane = await db.get(Participant, run.participant_id)
    assert pane is not None
    done = await pane_log.append(
        db,
        pane,
        author_kind=author.value,
        body=body,
        client_message_id=key,
        now=clock.now(),
        session=SessionRule.CONTINUES,
    )
    if not isinstance(done, Stored):
        return None
    view = MessageView.from_row(done.row, pane.key)
    event = MessageAddedEvent(cursor=done.row.seq, prev=done.prev, message=view)
    return pane_channel(run.room_id, pane.key), event.encode()
