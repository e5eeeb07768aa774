"""Partners: API keys, webhooks and their events, deliveries and attempts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class ApiKey(Base):
    """A partner's API key: ``dr_…``, stored only as its SHA-256, with the scopes it carries.
    Revoked keys stay for the audit trail."""

    __tablename__ = "api_keys"
    __table_args__ = (Index("ix_api_keys_account", "account_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(80))
    prefix: Mapped[str] = mapped_column(String(16))
    """The key's first characters, shown so an owner can tell keys apart."""
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class Webhook(Base):
    """A partner endpoint receiving an account's offer events, signed with ``secret``
    (Standard Webhooks). The secret is kept as given out: HMAC signing needs it."""

    __tablename__ = "webhooks"
    __table_args__ = (Index("ix_webhooks_account", "account_id", "status"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(String(2000))
    events: Mapped[list[str]] = mapped_column(JSON, default=list)
    secret: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(16), default="active")
    """``active`` or ``disabled`` (after sustained failure, until the owner re-enables it)."""
    disabled_at: Mapped[datetime | None]
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    last_success_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class WebhookEvent(Base):
    """One logical event (a stage change, a payment outcome). Its id is what partners see as
    ``webhook-id`` and dedupe on; ``source`` makes writing it twice impossible."""

    __tablename__ = "webhook_events"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    type: Mapped[str] = mapped_column(String(40))
    source: Mapped[str] = mapped_column(String(120), unique=True)
    offer_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("offers.id", ondelete="CASCADE"))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class WebhookDelivery(Base):
    """The outbox row: written in the transaction of the change it reports, delivered (and
    retried) by any process's webhook workers."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("webhook_id", "event_id", name="uq_webhook_deliveries_event"),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_webhook", "webhook_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    webhook_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("webhook_events.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    """``pending`` (due at ``next_attempt_at``), ``delivered`` or ``failed`` (gave up)."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utc_now)
    lease_until: Mapped[datetime | None]
    """Set while a worker holds the attempt; an expired lease (a killed worker) is retried."""
    last_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    first_attempt_at: Mapped[datetime | None]
    delivered_at: Mapped[datetime | None]


class WebhookAttempt(Base):
    """The delivery log: one row per HTTP attempt."""

    __tablename__ = "webhook_attempts"
    __table_args__ = (Index("ix_webhook_attempts_delivery", "delivery_id", "attempt"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    delivery_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE")
    )
    attempt: Mapped[int] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
