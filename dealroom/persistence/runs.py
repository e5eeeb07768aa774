"""Queries for the agent turn: runs (the durable job queue) and the pane's transcript as a turn
reads it. (Dispatches: ``persistence.dispatches``.) Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
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
from dealroom.persistence.models import AgentRun, Message


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

    async def queue_later(self, values: list[dict[str, Any]]) -> None:
        """Insert new queued runs, given as their columns' values, with the unit's other
        deferred writes (``Db.insert_values``: one INSERT, no mapped rows built)."""
        await self.db.insert_values(q.runs(), values, later=True)

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

    async def pane_has(
        self, participant_id: uuid.UUID, agent: str, *, statuses: Sequence[str]
    ) -> bool:
        """Whether the pane has a run of ``agent`` in one of ``statuses``."""
        found = await self.db.scalar(
            select(AgentRun.id)
            .where(
                AgentRun.participant_id == participant_id,
                AgentRun.agent == agent,
                AgentRun.status.in_(statuses),
            )
            .limit(1)
        )
        return found is not None

    async def pane_has_untried(self, participant_id: uuid.UUID, agent: str) -> bool:
        """Whether the pane has a run of ``agent`` queued and never started (no attempt yet)."""
        found = await self.db.scalar(
            select(AgentRun.id)
            .where(
                AgentRun.participant_id == participant_id,
                AgentRun.agent == agent,
                AgentRun.status == "queued",
                AgentRun.attempts == 0,
            )
            .limit(1)
        )
        return found is not None

    async def any_in(self, run_ids: Sequence[uuid.UUID], *, statuses: Sequence[str]) -> bool:
        """Whether any of these runs is in one of ``statuses``."""
        found = await self.db.scalar(
            select(AgentRun.id)
            .where(AgentRun.id.in_(run_ids), AgentRun.status.in_(statuses))
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

    async def failed_in_room(self, room_id: uuid.UUID) -> int:
        """How many of the room's runs failed for good."""
        return int(
            await self.db.scalar(
                select(func.count(AgentRun.id)).where(
                    AgentRun.room_id == room_id, AgentRun.status == "failed"
                )
            )
            or 0
        )

    async def queue_depth(self) -> list[tuple[str, str, int]]:
        """``(agent, status, count)`` of the runs queued or running."""
        found = await self.db.execute(
            select(AgentRun.agent, AgentRun.status, func.count(AgentRun.id))
            .where(AgentRun.status.in_(("queued", "running")))
            .group_by(AgentRun.agent, AgentRun.status)
        )
        rows = (tuple(row) for row in found.all())  # the three selected columns
        return [(str(agent), str(status), int(count)) for agent, status, count in rows]

    async def failed_for_pane(self, participant_id: uuid.UUID) -> list[AgentRun]:
        return list(
            await self.db.scalars(
                select(AgentRun)
                .where(AgentRun.participant_id == participant_id, AgentRun.status == "failed")
                .with_for_update()
            )
        )

    async def absorb(
        self,
        participant_id: uuid.UUID,
        agent: str,
        message_ids: Sequence[uuid.UUID],
        now: datetime,
        *,
        reply_message_id: uuid.UUID | None = None,
    ) -> int:
        """Mark the pane's queued ``agent`` runs of ``message_ids`` done: another run of the
        pane read those posts and answered them (``reply_message_id``). Only queued runs: one
        that already ran keeps its own outcome."""
        if not message_ids:
            return 0
        result = await self.db.execute(
            update(AgentRun)
            .where(
                AgentRun.participant_id == participant_id,
                AgentRun.agent == agent,
                AgentRun.status == "queued",
                AgentRun.trigger_message_id.in_(message_ids),
            )
            .values(
                status="done",
                finished_at=now,
                no_op=True,
                reply_message_id=reply_message_id,
            )
            .execution_options(synchronize_session=False)
        )
        return int(getattr(result, "rowcount", 0) or 0)

    async def answered(
        self, participant_id: uuid.UUID, message_ids: Sequence[uuid.UUID]
    ) -> dict[uuid.UUID, uuid.UUID]:
        """Which reply answered each of ``message_ids``: the pane's finished persona runs,
        trigger message → reply message."""
        if not message_ids:
            return {}
        rows = await self.db.execute(
            select(AgentRun.trigger_message_id, AgentRun.reply_message_id).where(
                AgentRun.participant_id == participant_id,
                AgentRun.agent == "persona",
                AgentRun.trigger_message_id.in_(message_ids),
                AgentRun.reply_message_id.is_not(None),
            )
        )
        pairs = (tuple(row) for row in rows.all())  # the two selected columns
        return {post: reply for post, reply in pairs if post is not None and reply is not None}


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


# Rows are read into it by position (``_make``): two columns of one type could swap silently
# if the statement's columns and these fields ever differed in order.
if SessionMessage._fields != tuple(column.key for column in q.SESSION_COLUMNS):
    raise RuntimeError("SessionMessage's fields and its statement's columns differ")


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

    async def before(self, participant_id: uuid.UUID, seq: int, *, limit: int) -> list[Message]:
        """The pane's ``limit`` messages before ``seq``, newest first."""
        return list(
            await self.db.scalars(
                select(Message)
                .where(Message.participant_id == participant_id, Message.seq < seq)
                .order_by(Message.seq.desc())
                .limit(limit)
            )
        )

    async def current_session(self, participant_id: uuid.UUID) -> list[SessionMessage]:
        """The pane's current session (its newest ``session_no``), whole, oldest first."""
        rows = await self.db.rows(q.current_session(), {"pane": participant_id})
        return [SessionMessage._make(row) for row in reversed(rows)]

    async def by_id(self, message_id: uuid.UUID) -> SessionMessage | None:
        rows = await self.db.rows(q.session_message(), {"id": message_id})
        return SessionMessage._make(rows[0]) if rows else None
