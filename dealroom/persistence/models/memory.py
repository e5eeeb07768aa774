"""An account's long-term memory document, its leaf dates and its change log."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, Index, Integer, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class AccountMemory(Base):
    """One long-term document per account (seed 000 "Two memory layers")."""

    __tablename__ = "account_memory"

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    document: Mapped[dict[str, Any]] = mapped_column(default=dict)
    version: Mapped[int] = mapped_column(Integer, default=0)
    """Grows by one on every write that changes ``document`` (optimistic versioning): a room
    whose ``participants.last_merged_memory_version`` is lower is due an AccUpdate merge."""
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)


class MemoryLeafDate(Base):
    """When one leaf of an account's durable document last changed, written by code (seed 000
    "Recording dates on durable memory are written by code"). Unchanged writes never touch it;
    a removed leaf loses its row."""

    __tablename__ = "memory_leaf_dates"

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    path: Mapped[str] = mapped_column(String(600), primary_key=True)
    changed_on: Mapped[date] = mapped_column(Date)


class MemoryChange(Base):
    """One changed leaf of an account's durable document: the history the owner reads and an
    operator may revert (a revert is itself a change, ``reverts_id`` naming the one undone).
    ``old_value``/``new_value`` are SQL NULL when the leaf was absent before/after."""

    __tablename__ = "memory_changes"
    __table_args__ = (Index("ix_memory_changes_account", "account_id", "version"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    """The account memory version this change produced."""
    path: Mapped[str] = mapped_column(String(600))
    old_value: Mapped[Any | None] = mapped_column(JSON(none_as_null=True))
    new_value: Mapped[Any | None] = mapped_column(JSON(none_as_null=True))
    room_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("rooms.id", ondelete="SET NULL"))
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    agent: Mapped[str] = mapped_column(String(24))
    """``arvist``, or ``operator`` for a revert."""
    actor_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    """The operator who reverted, for an operator's change."""
    reverts_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
