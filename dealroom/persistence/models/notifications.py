"""Notifications: the outbox of what reaches people outside the room (email and the in-app
list), and each account's preferences."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class Notification(Base):
    """One notification to one account: written in the transaction of the fact that causes it
    (``source`` makes writing it twice impossible), listed in the app at once, and emailed by
    any process's delivery workers. Its id is the email's ``Message-ID``."""

    __tablename__ = "notifications"
    __table_args__ = (
        Index("ix_notifications_account", "account_id", "created_at"),
        Index("ix_notifications_due", "status", "next_attempt_at"),
        Index("ix_notifications_waits", "wait_state", "waiting_since"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE")
    )
    """None for an email to an address with no account yet (an invitation): ``email_to``."""
    room_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    audience: Mapped[str] = mapped_column(String(16))
    """``host``, ``visitor`` or ``operator``: a visitor's text passed the private-value screen."""
    source: Mapped[str] = mapped_column(String(160), unique=True)
    title: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    link: Mapped[str] = mapped_column(String(500))
    """The room's path for this reader (``/r/<roomId>`` or ``/z/<handle>/<roomId>``)."""
    reason: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    """``pending`` (an email due at ``next_attempt_at``), ``digest`` (waits for the daily
    digest), ``joined`` (carried by the email of ``carried_by``), ``sent``, ``failed`` (gave up,
    ``last_error`` says why), ``kept`` (in-app only: no address, email off, or no SMTP)."""
    email_to: Mapped[str | None] = mapped_column(String(320))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utc_now)
    lease_until: Mapped[datetime | None]
    """Set while a worker holds the send; an expired lease (a killed worker) is sent again."""
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None]
    carried_by: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    read_at: Mapped[datetime | None]
    wait_state: Mapped[str | None] = mapped_column(String(16))
    """For a wait on the principal (a decision, an approval): ``waiting``, ``reminded``,
    ``escalated`` or ``settled``; the timers fire only after checking the rows still wait."""
    waiting_since: Mapped[datetime | None]
    """Since when the principal has been waited on: the reminder is due
    ``DEALROOM_REMIND_AFTER_HOURS`` later, the escalation ``DEALROOM_ESCALATE_AFTER_HOURS``."""
    wait: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """What the wait is on: ``{"dispatch": id}`` or ``{"offer": id, "stage": ..., "version": n}``
    and the waiting side's participant."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class NotificationSettings(Base):
    """An account's choices per kind (``immediate``, ``digest``, ``off``; a kind not named takes
    its default) and the secret its unsubscribe links are signed with."""

    __tablename__ = "notification_settings"

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    modes: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    secret: Mapped[str] = mapped_column(String(64))
    digest_sent_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)
