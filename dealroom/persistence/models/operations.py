"""Operators' actions and their takeovers of a pane's agent seat."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Uuid
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
