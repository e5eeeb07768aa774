"""Deal rooms, their participants (one pane each), the messages and held effects."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from dealroom.persistence.models.base import Base, utc_now


class Room(Base):
    __tablename__ = "rooms"
    __table_args__ = (
        Index("ix_rooms_host_activity", "host_account_id", "last_activity_at"),
        Index("ix_rooms_activity", "last_activity_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    kind: Mapped[str] = mapped_column(String(16))
    mode: Mapped[str] = mapped_column(String(16))
    host_account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE")
    )
    service_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("services.id", ondelete="SET NULL")
    )
    title: Mapped[str] = mapped_column(String(200))
    memory: Mapped[dict[str, Any]] = mapped_column(default=dict)
    memory_version: Mapped[int] = mapped_column(Integer, default=0)
    memory_updated_at: Mapped[datetime | None]
    """When a writer last changed ``memory``: a home room newer than durable memory seeds new
    deal rooms."""
    event_seq: Mapped[int] = mapped_column(Integer, default=0)
    """The room's event sequence: the last number handed out, under the room's row lock."""
    stage_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The cursor of the room's newest stage change (kept by a trigger on ``offer_events``,
    migration 0011): half of every pane's end (``services.pane_log``)."""
    model_picks: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    last_activity_at: Mapped[datetime] = mapped_column(default=utc_now)


class Participant(Base):
    """A seat in a room, with exactly one pane."""

    __tablename__ = "participants"
    __table_args__ = (
        UniqueConstraint("room_id", "key", name="uq_participants_room_key"),
        Index("ix_participants_account", "account_id"),
        Index("ix_participants_guest", "guest_key_hash"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(32))
    account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    guest_key_hash: Mapped[str | None] = mapped_column(String(64))
    last_merged_memory_version: Mapped[int] = mapped_column(Integer, default=0)
    first_spoke_at: Mapped[datetime | None]
    """When this participant first posted: a visitor who has spoken ends empty-room reuse."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    # The pane's tail and its post counter, kept by a trigger on ``messages`` (migration 0011)
    # so that every writer keeps them; read by ``services.pane_log`` instead of the messages.
    pane_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The cursor of the pane's newest message (0: none)."""
    pane_session_no: Mapped[int | None] = mapped_column(Integer)
    """The session of the pane's newest message."""
    pane_last_at: Mapped[datetime | None]
    """When the pane's newest message was stored."""
    posts_window_start: Mapped[datetime | None]
    """When the participant's current one-minute posting window opened (the rate limit)."""
    posts_in_window: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """How many posts the participant made in that window."""
    removed_at: Mapped[datetime | None]
    """When the participant was removed: its account and guest key are unbound then, so it
    holds nothing; its pane stays for the host to read."""
    shared: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Its side's lead let the rest of that side read this pane (access R8)."""
    may_approve: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """The buying account let this member of its side approve written offers."""
    invited_by: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """The participant whose invitation brought this one in (None for the two leads)."""


class Invitation(Base):
    """A single-use, expiring link that adds its bearer to the inviter's side of a room."""

    __tablename__ = "invitations"
    __table_args__ = (
        UniqueConstraint("token_hash", name="uq_invitations_token"),
        Index("ix_invitations_room", "room_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    side: Mapped[str] = mapped_column(String(16))
    inviter_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(320))
    token_hash: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
    used_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("room_id", "seq", name="uq_messages_room_seq"),
        UniqueConstraint("participant_id", "client_message_id", name="uq_messages_pane_client_id"),
        Index("ix_messages_pane_seq", "participant_id", "seq"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    seq: Mapped[int] = mapped_column(Integer)
    author_kind: Mapped[str] = mapped_column(String(16))
    author_account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL")
    )
    body: Mapped[str] = mapped_column(Text)
    session_no: Mapped[int] = mapped_column(Integer, default=1)
    client_message_id: Mapped[str | None] = mapped_column(String(64))
    relayed_dispatch_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)


class PendingEffect(Base):
    """An outbound effect held while the visitor is an unclaimed guest (seed 000 "login gate")."""

    __tablename__ = "pending_effects"
    __table_args__ = (
        UniqueConstraint("room_id", "seq", name="uq_pending_effects_room_seq"),
        Index("ix_pending_effects_status", "status", "room_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="held")
    """``held`` (waiting on sign-in), ``performed`` (replayed; its runs still working) or
    ``replayed``."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    source_run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """The run whose turn would have performed it."""
    spawned_run_ids: Mapped[list[str] | None] = mapped_column(JSON)
    """The runs its replay queued: the next held effect waits for them (replay order)."""
    performed_at: Mapped[datetime | None]


class GuestKeyMint(Base):
    """A guest key handed out, by the client address's hash: minting is rate limited per IP,
    and the guest message cap counts an address's keys together (persistence/guest_posts)."""

    __tablename__ = "guest_key_mints"
    __table_args__ = (
        Index("ix_guest_key_mints_ip", "ip_hash", "created_at"),
        Index("ix_guest_key_mints_key", "guest_key_hash"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    ip_hash: Mapped[str] = mapped_column(String(64))
    guest_key_hash: Mapped[str | None] = mapped_column(String(64))
    """The key minted (its digest); null for mints recorded before it was kept."""
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
