"""Queries for the agent turn: runs (the durable job queue), dispatches, the model ledger,
frustration flags and the memory writer's lease. Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    func,
    or_,
    select,
    update,
)

from dealroom.persistence import claim_statements as claims
from dealroom.persistence import run_statements as q
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    AgentRun,
    Dispatch,
    Message,
)


class RunRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def by_id(self, run_id: uuid.UUID, *, lock: bool = False) -> AgentRun | None:
        statement = select(AgentRun).where(AgentRun.id == run_id)
        if lock:
            statement = statement.with_for_update()
        return await self.db.scalar(statement)

    async def candidate_locking_pane(self, now: datetime) -> uuid.UUID | None:
        """PostgreSQL: the id of a due run that may start now (the oldest queued run of its
        pane and agent, with none of them running; runs of a busy pane never hide other
        panes'), skipping runs another worker is claiming and panes someone holds, with its
        pane's row lock taken: claims are serialised per pane, and never wait on a lock. One
        statement (:func:`claim_statements.claim_candidate`); the caller then claims it with
        :meth:`claim`."""
        params = {"now": now, "limit": claims.CANDIDATES}
        found = await self.db.rows(claims.claim_candidate(), params)
        return found[0].id if found else None

    async def claim(
        self, now: datetime, lease_until: datetime, *, run_id: uuid.UUID | None = None
    ) -> Any | None:
        """Mark one due run running and return its row with what a turn reads first (the
        room's head and memory, the pane's takeover, whether a durable merge may be due, the
        current offer's stage inputs; :data:`claim_statements.CLAIM_LOAD`), in one statement
        (``UPDATE … RETURNING``). Without ``run_id`` the oldest claimable run is chosen inside the
        statement (SQLite: one writer, so the choice cannot race). With ``run_id`` (a candidate
        PostgreSQL chose with ``SKIP LOCKED`` and whose pane is locked by the caller) the
        statement re-checks, under a fresh snapshot, that no sibling of the pane started."""
        params: dict[str, Any] = {"now": now, "until": lease_until}
        if run_id is None:
            statement = claims.claim_chosen()
            params["limit"] = 1
        else:
            statement = claims.claim_by_id()
            params["run_id"] = run_id
        found = await self.db.rows(statement, params)
        return found[0] if found else None

    def finish_later(
        self,
        run_id: uuid.UUID,
        attempts: int,
        now: datetime,
        *,
        reply_message_id: uuid.UUID | None,
        stale: Callable[[], BaseException],
    ) -> None:
        """Mark the run done with its reply, only while it is still this claim (status
        running, same attempt: the ``UPDATE … RETURNING`` is the stale-run check and the
        write), sent with the unit's other deferred writes (``Db.defer``); when another
        worker owns the run now, ``stale()`` is raised where they are sent and the unit
        rolls back. (The room's memory the apply rewrites comes with the reply's append,
        read under the room's lock.)"""
        self.db.defer(
            q.finish(),
            {"run_id": run_id, "attempt": attempts, "at": now, "reply_id": reply_message_id},
            refuse=stale,
        )

    def done_later(
        self,
        run_id: uuid.UUID,
        attempts: int,
        now: datetime,
        *,
        no_op: bool,
        error: str | None,
        stale: Callable[[], BaseException],
    ) -> None:
        """Mark a run without a reply done, only while it is still this claim (status
        running, same attempt: the ``UPDATE … RETURNING`` is the stale-run check and the
        write), sent with the unit's other deferred writes (``Db.defer``); when another
        worker owns the run now, ``stale()`` is raised where they are sent and the unit
        rolls back."""
        self.db.defer(
            q.done(),
            {
                "run_id": run_id,
                "attempt": attempts,
                "at": now,
                "set_no_op": no_op,
                "set_error": error,
            },
            refuse=stale,
        )

    async def write_memory(
        self, room_id: uuid.UUID, document: dict[str, Any], now: datetime
    ) -> int:
        """Store the room's memory document and bump its version (``UPDATE … RETURNING``);
        the caller holds the room's row lock."""
        (row,) = await self.db.rows(
            q.write_memory(), {"room_id": room_id, "document": document, "at": now}
        )
        return int(row[0])

    def write_memory_later(
        self, room_id: uuid.UUID, document: dict[str, Any], now: datetime
    ) -> None:
        """:meth:`write_memory` without its answer, sent with the unit's other deferred
        writes (``Db.defer``)."""
        self.db.defer(q.write_memory(), {"room_id": room_id, "document": document, "at": now})

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

    async def recent(self, room_id: uuid.UUID, limit: int) -> list[DispatchLine]:
        """The room's newest dispatches, oldest first, as plain values (read, never
        changed: a run reads them every turn, and ORM rows cost twice the CPU)."""
        rows = await self.db.rows(q.recent_dispatches(), {"room_id": room_id, "limit": limit})
        return [DispatchLine._make(row) for row in reversed(rows)]

    async def held(self, room_id: uuid.UUID) -> list[Dispatch]:
        """The room's sends the firewall still holds for the principal (status ``held``),
        oldest first."""
        rows = await self.db.scalars(
            select(Dispatch)
            .where(Dispatch.room_id == room_id, Dispatch.status == "held")
            .order_by(Dispatch.created_at, Dispatch.position)
        )
        return list(rows)

    async def held_payloads(self, room_id: uuid.UUID) -> list[dict[str, Any]]:
        """What the firewall's held sends carry (F6: their figures stay out of memory)."""
        rows = await self.db.rows(q.held_payloads(), {"room_id": room_id})
        return [dict(row[0] or {}) for row in rows]

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


class DispatchLine(NamedTuple):
    """A dispatch as a turn reads it (``run_statements.DISPATCH_COLUMNS``): plain values,
    not an ORM row."""

    id: uuid.UUID
    room_id: uuid.UUID
    from_participant_id: uuid.UUID
    to_participant_id: uuid.UUID
    source_run_id: uuid.UUID
    position: int
    substance: str
    payload: dict[str, Any]
    status: str
    chain_depth: int
    delivered_message_id: uuid.UUID | None
    created_at: datetime
    delivered_at: datetime | None


class SessionMessage(NamedTuple):
    """A message as a turn reads it (``run_statements.SESSION_COLUMNS``): plain values, not
    an ORM row."""

    id: uuid.UUID
    participant_id: uuid.UUID
    seq: int
    author_kind: str
    body: str
    client_message_id: str | None
    relayed_dispatch_id: uuid.UUID | None


# Rows are read into them by position (``_make``): two columns of one type could swap
# silently if a statement's columns and these fields ever differed in order.
for _line, _columns in ((SessionMessage, q.SESSION_COLUMNS), (DispatchLine, q.DISPATCH_COLUMNS)):
    if _line._fields != tuple(column.key for column in _columns):
        raise RuntimeError(f"{_line.__name__}'s fields and its statement's columns differ")


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

    async def current_session(self, participant_id: uuid.UUID, limit: int) -> list[SessionMessage]:
        """The pane's current session (its newest ``session_no``), oldest first. ``limit``
        is a safety cap far above any sitting, not a context budget."""
        rows = await self.db.rows(q.current_session(), {"pane": participant_id, "limit": limit})
        return [SessionMessage._make(row) for row in reversed(rows)]

    async def by_id(self, message_id: uuid.UUID) -> SessionMessage | None:
        rows = await self.db.rows(q.session_message(), {"id": message_id})
        return SessionMessage._make(rows[0]) if rows else None
