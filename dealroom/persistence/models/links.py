"""Perceived links: what a URL in a message said when it was read, kept on that message."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base


class PerceivedLink(Base):
    """One link of one message, read once (``domain/links.py``). Only the agents of the
    message's own pane are shown it, as quoted material."""

    __tablename__ = "perceived_links"
    __table_args__ = (
        UniqueConstraint("message_id", "url", name="uq_perceived_links_message_url"),
        Index("ix_perceived_links_room_url", "room_id", "url", "fetched_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    message_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    """The pane the message was posted in: the only pane whose agents see what it says."""
    position: Mapped[int] = mapped_column(Integer, default=0)
    """Order of the link within its message."""
    url: Mapped[str] = mapped_column(String(2000))
    final_url: Mapped[str | None] = mapped_column(String(2000))
    status: Mapped[str] = mapped_column(String(16))
    """``read`` or ``unreadable``."""
    reason: Mapped[str | None] = mapped_column(String(32))
    """Why unreadable (``domain.links.Reason``)."""
    detail: Mapped[str | None] = mapped_column(String(300))
    """For operators: the technical cause (``HTTP 403``, ``loopback address``)."""
    title: Mapped[str | None] = mapped_column(Text)
    text: Mapped[str | None] = mapped_column(Text)
    content_type: Mapped[str | None] = mapped_column(String(100))
    reader: Mapped[str] = mapped_column(String(32))
    """``gemini_url_context``, ``fetch`` or ``cache`` (``domain.links.Reader``)."""
    fetched_at: Mapped[datetime]
