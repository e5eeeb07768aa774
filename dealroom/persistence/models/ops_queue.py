"""What operators did with an item of their queue (``domain/ops_queue.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class OpsQueueItem(Base):
    """An item operators acted on: acknowledged, assigned or resolved. Items nobody has touched
    have no row (the queue is read from the facts themselves); a resolved item's row is its
    entry in the room's history, with what the item was when it was first acted on."""

    __tablename__ = "ops_queue_items"
    __table_args__ = (
        UniqueConstraint("kind", "source_id", name="uq_ops_queue_items_source"),
        Index("ix_ops_queue_items_room", "room_id", "resolved_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    kind: Mapped[str] = mapped_column(String(16))
    source_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    room_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """No foreign key: the history outlives the room."""
    level: Mapped[str] = mapped_column(String(8))
    summary: Mapped[str] = mapped_column(Text)
    raised_at: Mapped[datetime]
    """When the fact needing a person arose (the item's age runs from it)."""
    acknowledged_at: Mapped[datetime | None]
    acknowledged_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    assigned_to: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    resolved_at: Mapped[datetime | None]
    resolved_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)
