"""What the payment provider told us (each Stripe event, recorded once) and what is owed to
hosts (the payout ledger)."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Index, Numeric, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class StripeEvent(Base):
    """A verified Stripe event, one row per event id (the primary key): a redelivery finds its
    row and changes nothing. ``outcome`` says what applying it did."""

    __tablename__ = "stripe_events"
    __table_args__ = (Index("ix_stripe_events_outcome", "outcome", "received_at"),)

    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    """Stripe's event id (``evt_...``)."""
    type: Mapped[str] = mapped_column(String(80))
    payment_ref: Mapped[str | None] = mapped_column(String(128))
    """The PaymentIntent the event is about, when it names one."""
    outcome: Mapped[str] = mapped_column(String(32))
    """applied, unchanged (a late or repeated fact), unknown_payment, amount_mismatch, ignored."""
    detail: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column()
    """When Stripe created the event."""
    received_at: Mapped[datetime] = mapped_column(default=utc_now)


class HostPayout(Base):
    """PL7: what a captured payment owes its host (the due slice: captured less the platform
    fee), and what was sent (a Connect transfer's reference), one row per payment."""

    __tablename__ = "host_payouts"
    __table_args__ = (Index("ix_host_payouts_host", "host_account_id", "created_at"),)

    payment_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("payments.id", ondelete="CASCADE"), primary_key=True
    )
    host_account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE")
    )
    offer_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    currency: Mapped[str] = mapped_column(String(3))
    owed: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    sent: Mapped[Decimal] = mapped_column(Numeric(18, 4), default=Decimal(0))
    transfer_ref: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    sent_at: Mapped[datetime | None]
