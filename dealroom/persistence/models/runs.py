"""The agents' work: runs, dispatches across panes, model calls, flags and memory leases."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class AgentRun(Base):
    """One agent run: the durable job (queued → running → done | failed) and its record.

    A turn is a persona run (and a Distil run beside it). Runs are claimed from this table by
    any process, so nothing about a pending turn lives only in one process's memory; the
    reply's ``client_message_id`` is ``run:<id>`` so a re-run can never post twice."""

    __tablename__ = "agent_runs"
    __table_args__ = (
        Index("ix_agent_runs_due", "status", "not_before"),
        Index("ix_agent_runs_pane", "participant_id", "status"),
        # The queue in age order, queued runs only (PostgreSQL's claim reads its oldest few:
        # claim_statements.claim_candidate); a claimed run's entry is dead from then on, and
        # vacuum removes it.
        Index(
            "ix_agent_runs_queued",
            "created_at",
            "id",
            postgresql_where=text("status = 'queued'"),
            sqlite_where=text("status = 'queued'"),
        ),
        UniqueConstraint("participant_id", "trigger_event_id", name="uq_agent_runs_pane_event"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    agent: Mapped[str] = mapped_column(String(24))
    trigger_message_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    trigger_dispatch_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    chain_depth: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column(default=utc_now)
    lease_until: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)
    reply_message_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    no_op: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    finished_at: Mapped[datetime | None]
    trigger_event_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """A stage notice: the ``offer_events`` row it tells (unique per pane: once per event)."""
    watch_generation: Mapped[int | None] = mapped_column(Integer)
    """A Guard run: the room watch's generation it fired for (stale once a reply re-arms)."""


class Dispatch(Base):
    """The dispatch record: a send from one pane to another, and whether it was delivered.

    The ground truth of deliveries (seed 000 "Guidance cannot deliver"): memory may never
    claim a delivery this table does not show."""

    __tablename__ = "dispatches"
    __table_args__ = (
        UniqueConstraint("source_run_id", "position", name="uq_dispatches_run_position"),
        Index("ix_dispatches_room", "room_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    from_participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    to_participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    source_run_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    position: Mapped[int] = mapped_column(Integer)
    substance: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    chain_depth: Mapped[int] = mapped_column(Integer, default=1)
    delivered_message_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    delivered_at: Mapped[datetime | None]


class ModelCall(Base):
    """The ledger: one row per model call, with tokens, price and latency."""

    __tablename__ = "model_calls"
    __table_args__ = (Index("ix_model_calls_room", "room_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    agent: Mapped[str] = mapped_column(String(24))
    engine: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(64))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, default=0)
    price_usd: Mapped[Decimal | None] = mapped_column(Numeric(12, 6))
    latency_ms: Mapped[int] = mapped_column(Integer, default=0)
    ok: Mapped[bool] = mapped_column(Boolean, default=True)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class Flag(Base):
    """A frustration flag: visible to operators, never to an agent (seed 000)."""

    __tablename__ = "flags"
    __table_args__ = (
        Index("ix_flags_room", "room_id", "created_at"),
        Index("ix_flags_level_room", "level", "room_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    level: Mapped[str] = mapped_column(String(16))
    evidence: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class Lease(Base):
    """The room memory writer's lease. ``token`` grows on every grant: a writer whose token
    is no longer current (its lease expired and was taken) cannot write (fencing)."""

    __tablename__ = "leases"

    room_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    token: Mapped[int] = mapped_column(Integer, default=0)
    holder: Mapped[str | None] = mapped_column(String(64))
    expires_at: Mapped[datetime | None]
