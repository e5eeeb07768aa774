"""Written offers, their stage events, agreements, payments and goal events."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class Offer(Base):
    """A written offer: the thing the parties approve and pay against (seed 000 "Records are
    made by a specialist"). Its stage is derived from ``status`` and ``brand_approved_at``
    (``domain/offer_stage.py``); memory holds only ``offers.<key>.offerId``.

    ``status`` is an offers-system label (APPROVED means drawn and waiting on approvals), never
    a stage. ``version`` grows on every material rewrite, which clears the brand's stamp."""

    __tablename__ = "offers"
    __table_args__ = (
        Index("ix_offers_room", "room_id", "created_at"),
        Index("ix_offers_status_created", "status", "created_at"),
        Index("ix_offers_created", "created_at", "id"),
        UniqueConstraint("source_run_id", name="uq_offers_source_run"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64))
    seller_account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE")
    )
    buyer_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    status: Mapped[str] = mapped_column(String(24))
    brand_approved_at: Mapped[datetime | None]
    terms: Mapped[dict[str, Any]] = mapped_column(default=dict)
    open_questions: Mapped[list[str]] = mapped_column(JSON, default=list)
    version: Mapped[int] = mapped_column(Integer, default=1)
    fingerprint: Mapped[str] = mapped_column(String(64))
    source_run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """The Offer-Gen run that minted it: a re-run of that job can never mint twice."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)
    accepted_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]


class OfferEvent(Base):
    """A stage change of an offer, numbered in the room's event sequence: the replay source of
    ``StageChanged`` pane events and of the ``offerStage`` subscription."""

    __tablename__ = "offer_events"
    __table_args__ = (
        UniqueConstraint("room_id", "seq", name="uq_offer_events_room_seq"),
        Index("ix_offer_events_offer", "offer_id", "seq"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    offer_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("offers.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    stage: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    actor: Mapped[str] = mapped_column(String(32))
    """Who moved it: ``host``/``visitor`` (a click), ``offer_gen``, ``persona``, ``payment``."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class Agreement(Base):
    """A lawyer-reviewable draft of an offer, drawn from its commercial fields only and keyed
    by their fingerprint: when the fields change, a new draft is drawn."""

    __tablename__ = "agreements"
    __table_args__ = (
        UniqueConstraint("offer_id", "fingerprint", name="uq_agreements_offer_fingerprint"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    offer_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("offers.id", ondelete="CASCADE"))
    fingerprint: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class Payment(Base):
    """The brand's payment of an offer's due slice plus the platform fee."""

    __tablename__ = "payments"
    __table_args__ = (
        UniqueConstraint("offer_id", "idempotency_key", name="uq_payments_offer_key"),
        Index("ix_payments_status", "status"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    offer_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("offers.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str] = mapped_column(String(64))
    payer_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    method: Mapped[str] = mapped_column(String(64))
    provider: Mapped[str] = mapped_column(String(32))
    provider_ref: Mapped[str | None] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    """``pending`` (capture pending), ``captured`` (held), ``declined``, and after the hold
    ``released`` (taken for good), ``cancelled`` (the hold given back) or ``disputed``."""
    currency: Mapped[str] = mapped_column(String(3))
    due: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    platform_fee: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    total: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    error: Mapped[str | None] = mapped_column(Text)
    offer_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now)
    held_at: Mapped[datetime | None]
    """When the provider said the funds are held (the auto-release clock starts no earlier)."""
    released_at: Mapped[datetime | None]
    refunded: Mapped[Decimal] = mapped_column(Numeric(18, 4), default=Decimal(0))
    """What was given back to the payer: a whole cancelled hold, or refunds after release."""


class GoalEvent(Base):
    """A goal's status flip (seed 000 "Goals are structured envelopes"): from, to, which
    agent in which pane, when. Effects fire on these flips, once."""

    __tablename__ = "goal_events"
    __table_args__ = (Index("ix_goal_events_room", "room_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    goal_key: Mapped[str] = mapped_column(String(64))
    from_status: Mapped[str | None] = mapped_column(String(16))
    to_status: Mapped[str] = mapped_column(String(16))
    by_pane: Mapped[str] = mapped_column(String(32))
    agent: Mapped[str] = mapped_column(String(24))
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
