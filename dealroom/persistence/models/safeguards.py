"""What watches a room: the cross-room throttle, quiet-room watches and Guard's verdicts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class Throttle(Base):
    """One counter of a throttle (``services/accounts/throttle.py``): hits on ``key`` (an action and
    its subject: an account, a guest key, an IP) in the fixed window starting at
    ``window_start``. In the database so every process counts the same hits."""

    __tablename__ = "throttles"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)


class RoomWatch(Base):
    """A room's quiet-room watch (ARCHITECTURE "Background jobs").

    Every reply re-arms it in the reply's own transaction: ``generation`` += 1, ``armed_at``
    = the reply's time, ``step`` = guard. A step is due once the room has been quiet for its
    window after ``armed_at``; firing it is checked against ``generation`` under the row lock,
    so a stale or duplicated timer fires nothing."""

    __tablename__ = "room_watches"
    __table_args__ = (Index("ix_room_watches_due", "step", "armed_at"),)

    room_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    generation: Mapped[int] = mapped_column(Integer, default=1)
    step: Mapped[str] = mapped_column(String(16), default="guard")
    """guard (Guard next), curator (the curator step next) or done (nothing until a reply)."""
    armed_at: Mapped[datetime] = mapped_column(default=utc_now)
    fired_at: Mapped[datetime | None]


class GuardVerdict(Base):
    """Every Guard audit's verdict, for operators (seed 000 "A guard audits quiet rooms")."""

    __tablename__ = "guard_verdicts"
    __table_args__ = (Index("ix_guard_verdicts_room", "room_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    run_id: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True)
    verdict: Mapped[str] = mapped_column(String(16))
    """healthy, repaired or unrepaired."""
    findings: Mapped[list[str]] = mapped_column(JSON, default=list)
    edits: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    """What was repaired, one entry per edit (kind, target, detail)."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


# --- partners and operators --------------------------------------------------------------------
