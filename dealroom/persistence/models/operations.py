"""Operators' actions and their takeovers of a pane's agent seat."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class OpsAction(Base):
    """The audit trail of every operator action: who, what, where, when."""

    __tablename__ = "ops_actions"
    __table_args__ = (
        Index("ix_ops_actions_created", "created_at"),
        Index("ix_ops_actions_room", "room_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    operator_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    action: Mapped[str] = mapped_column(String(40))
    room_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """No foreign key: the record outlives the room."""
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class PaneTakeover(Base):
    """An operator speaks in this pane's agent seat: the agent stays silent there until it
    is released."""

    __tablename__ = "pane_takeovers"

    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE"), primary_key=True
    )
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    operator_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    taken_at: Mapped[datetime] = mapped_column(default=utc_now)


class OperatorRead(Base):
    """Every read of a room by an operator: who, when, what (the parts of the room the read
    selected, e.g. ``transcript:visitor``, ``memory``, ``offers``). Operators are trusted, not
    invisible."""

    __tablename__ = "operator_reads"
    __table_args__ = (
        Index("ix_operator_reads_room", "room_id", "created_at"),
        Index("ix_operator_reads_operator", "operator_account_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    operator_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    room_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    """No foreign key: the record outlives the room."""
    what: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class RoomMemoryChange(Base):
    """One changed leaf of a room's memory: the history operators (and the host, for the
    host's branch) read and an operator may revert (a revert is itself a change,
    ``reverts_id`` naming the one undone). ``old_value``/``new_value`` are SQL NULL when the
    leaf was absent before/after."""

    __tablename__ = "room_memory_changes"
    __table_args__ = (Index("ix_room_memory_changes_room", "room_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    """The room memory version this change produced."""
    path: Mapped[str] = mapped_column(String(600))
    old_value: Mapped[Any | None] = mapped_column(JSON(none_as_null=True))
    new_value: Mapped[Any | None] = mapped_column(JSON(none_as_null=True))
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    agent: Mapped[str] = mapped_column(String(24))
    """The writing agent (``distil``, ``guard``), or ``operator``."""
    actor_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    """The operator, for an operator's edit or revert."""
    reason: Mapped[str | None] = mapped_column(Text)
    reverts_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
