"""Queries for the agent turn: runs (the durable job queue), dispatches, the model ledger,
frustration flags and the memory writer's lease. Repositories flush, never commit."""

from __future__ import annotations

import functools
import uuid
from datetime import datetime

from sqlalchemy import Select, and_, bindparam, func, or_, select, update
from sqlalchemy.orm import aliased

from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    AgentRun,
    Dispatch,
    Lease,
    Message,
    Participant,
)


class RunRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, run_id: uuid.UUID, *, lock: bool = False) -> AgentRun | None:
        statement = select(AgentRun).where(AgentRun.id == run_id)
        if lock:
            statement = statement.with_for_update()
        return await self.db.scalar(statement)

    async def claimable(self, now: datetime, limit: int) -> list[AgentRun]:
        """Due runs that may start now: the oldest queued run of their (pane, agent), with no
        run of that (pane, agent) running. Runs of a busy pane never hide other panes' runs.
        PostgreSQL skips rows another worker is claiming; SQLite has one writer anyway."""
        return list(await self.db.scalars(_claimable(), {"now": now, "limit": limit}))

    async def lock_pane(self, participant_id: uuid.UUID) -> None:
        """Serialise claims per pane: the participant row lock (PostgreSQL)."""
        await self.db.execute(
            select(Participant.id).where(Participant.id == participant_id).with_for_update()
        )

    async def pane_busy(self, participant_id: uuid.UUID, agent: str) -> bool:
        found = await self.db.scalar(
            select(AgentRun.id)
            .where(
                AgentRun.participant_id == participant_id,
                AgentRun.agent == agent,
                AgentRun.status == "running",
            )
            .limit(1)
        )
        return found is not None

    async def extend_lease(self, run_id: uuid.UUID, attempts: int, until: datetime) -> None:
        """Only while the run is still this claim (status running, same attempt)."""
        await self.db.execute(
            update(AgentRun)
            .where(
                AgentRun.id == run_id,
                AgentRun.status == "running",
                AgentRun.attempts == attempts,
            )
            .values(lease_until=until)
        )

    async def requeue_expired(self, now: datetime, max_attempts: int) -> int:
        """Runs whose worker vanished (lease expired) go back to the queue, or fail when
        their attempts are spent."""
        failed = await self.db.execute(
            update(AgentRun)
            .where(
                AgentRun.status == "running",
                AgentRun.lease_until < now,
                AgentRun.attempts >= max_attempts,
            )
            .values(status="failed", error="worker lost", finished_at=now)
        )
        requeued = await self.db.execute(
            update(AgentRun)
            .where(AgentRun.status == "running", AgentRun.lease_until < now)
            .values(status="queued", not_before=now)
        )
        return int(getattr(failed, "rowcount", 0) or 0) + int(getattr(requeued, "rowcount", 0) or 0)

    async def outstanding(self, now: datetime) -> int:
        """Runs that are running, never tried yet, or queued and due: zero means the rooms
        are quiet (a retry waiting out its backoff does not count). A fresh run counts
        whatever its ``not_before``: one stamped after ``now`` was read is still pending."""
        return int(
            await self.db.scalar(
                select(func.count(AgentRun.id)).where(
                    or_(
                        AgentRun.status == "running",
                        (AgentRun.status == "queued")
                        & ((AgentRun.not_before <= now) | (AgentRun.attempts == 0)),
                    )
                )
            )
            or 0
        )

    async def failed_for_pane(self, participant_id: uuid.UUID) -> list[AgentRun]:
        return list(
            await self.db.scalars(
                select(AgentRun)
                .where(AgentRun.participant_id == participant_id, AgentRun.status == "failed")
                .with_for_update()
            )
        )


class DispatchRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, dispatch_id: uuid.UUID) -> Dispatch | None:
        return await self.db.get(Dispatch, dispatch_id)

    async def recent(self, room_id: uuid.UUID, limit: int) -> list[Dispatch]:
        """The room's newest dispatches, oldest first."""
        rows = await self.db.scalars(
            select(Dispatch)
            .where(Dispatch.room_id == room_id)
            .order_by(Dispatch.created_at.desc(), Dispatch.position.desc())
            .limit(limit)
        )
        return list(reversed(list(rows)))

    async def held(self, room_id: uuid.UUID) -> list[Dispatch]:
        """The room's sends the firewall still holds for the principal (status ``held``,
        issue 10), oldest first."""
        rows = await self.db.scalars(
            select(Dispatch)
            .where(Dispatch.room_id == room_id, Dispatch.status == "held")
            .order_by(Dispatch.created_at, Dispatch.position)
        )
        return list(rows)

    async def recent_between(self, from_id: uuid.UUID, to_id: uuid.UUID, since: datetime) -> int:
        return int(
            await self.db.scalar(
                select(func.count(Dispatch.id)).where(
                    Dispatch.from_participant_id == from_id,
                    Dispatch.to_participant_id == to_id,
                    Dispatch.created_at >= since,
                    Dispatch.status != "capped",
                )
            )
            or 0
        )


class LeaseRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def locked(self, room_id: uuid.UUID) -> Lease | None:
        return await self.db.scalar(select(Lease).where(Lease.room_id == room_id).with_for_update())


class TranscriptRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def recent(self, participant_id: uuid.UUID, limit: int) -> list[Message]:
        """The pane's newest ``limit`` messages, oldest first, across sessions."""
        rows = await self.db.scalars(
            select(Message)
            .where(Message.participant_id == participant_id)
            .order_by(Message.seq.desc())
            .limit(limit)
        )
        return list(reversed(rows))

    async def current_session(self, participant_id: uuid.UUID, limit: int) -> list[Message]:
        """The pane's current session (its newest ``session_no``), oldest first. ``limit``
        is a safety cap far above any sitting, not a context budget."""
        newest = (
            select(func.max(Message.session_no))
            .where(Message.participant_id == participant_id)
            .scalar_subquery()
        )
        rows = await self.db.scalars(
            select(Message)
            .where(Message.participant_id == participant_id, Message.session_no == newest)
            .order_by(Message.seq.desc())
            .limit(limit)
        )
        return list(reversed(list(rows)))

    async def by_id(self, message_id: uuid.UUID) -> Message | None:
        return await self.db.get(Message, message_id)


@functools.cache
def _claimable() -> Select[AgentRun]:
    """Built once: comparing aliased columns costs milliseconds of Python per build, more
    than the query itself."""
    other = aliased(AgentRun)
    same_pane = (other.participant_id == AgentRun.participant_id) & (other.agent == AgentRun.agent)
    busy = select(other.id).where(same_pane, other.status == "running").exists()
    older = (
        select(other.id)
        .where(
            same_pane,
            other.status == "queued",
            or_(
                other.created_at < AgentRun.created_at,
                and_(other.created_at == AgentRun.created_at, other.id < AgentRun.id),
            ),
        )
        .exists()
    )
    return (
        select(AgentRun)
        .where(
            AgentRun.status == "queued",
            AgentRun.not_before <= bindparam("now"),
            ~busy,
            ~older,
        )
        # Due first: a run put back to wait (for the memory lease, say) is due from the time
        # it was put back, so the runs it was queued beside go before it instead of behind
        # it again and again (issue 12: the Guard holds the lease while it thinks).
        .order_by(AgentRun.not_before, AgentRun.created_at, AgentRun.id)
        .limit(bindparam("limit"))
        .with_for_update(skip_locked=True)
    )
