"""SQLAlchemy 2 models. Relationships are not mapped: repositories load what callers need.

GraphQL types are never these rows; resolvers map them (``from_row``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC on the way out, whatever the backend stores (SQLite stores naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime, dict[str, Any]: JSON}


class Account(Base):
    """A person or business. No stored type: roles are derived per room (seed 000)."""

    __tablename__ = "accounts"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    handle: Mapped[str] = mapped_column(String(32), unique=True)
    display_name: Mapped[str] = mapped_column(String(80))
    avatar_url: Mapped[str | None] = mapped_column(String(500))
    is_operator: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class Credential(Base):
    __tablename__ = "credentials"

    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    updated_at: Mapped[datetime] = mapped_column(default=_now)


class AuthSession(Base):
    """An opaque bearer token, stored only as its SHA-256."""

    __tablename__ = "sessions"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=_now)
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class AccountManager(Base):
    """The act-as permission edge: ``manager`` may act as ``managed``."""

    __tablename__ = "account_managers"

    manager_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    managed_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    created_at: Mapped[datetime] = mapped_column(default=_now)


class Service(Base):
    """Something an account offers (a sponsored post, a keynote)."""

    __tablename__ = "services"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    updated_at: Mapped[datetime] = mapped_column(default=_now)


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
    created_at: Mapped[datetime] = mapped_column(default=_now)


class Room(Base):
    __tablename__ = "rooms"
    __table_args__ = (Index("ix_rooms_host_activity", "host_account_id", "last_activity_at"),)

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
    deal rooms (ZLY-1897)."""
    event_seq: Mapped[int] = mapped_column(Integer, default=0)
    """The room's event sequence: the last number handed out, under the room's row lock."""
    stage_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The cursor of the room's newest stage change (kept by a trigger on ``offer_events``,
    migration 0011): half of every pane's end (``services.pane_log``)."""
    model_picks: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)
    last_activity_at: Mapped[datetime] = mapped_column(default=_now)


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
    created_at: Mapped[datetime] = mapped_column(default=_now)
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
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    created_at: Mapped[datetime] = mapped_column(default=_now)
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
    created_at: Mapped[datetime] = mapped_column(default=_now)


class AgentRun(Base):
    """One agent run: the durable job (queued → running → done | failed) and its record.

    A turn is a persona run (and a Distil run beside it). Runs are claimed from this table by
    any process, so nothing about a pending turn lives only in one process's memory; the
    reply's ``client_message_id`` is ``run:<id>`` so a re-run can never post twice."""

    __tablename__ = "agent_runs"
    __table_args__ = (
        Index("ix_agent_runs_due", "status", "not_before"),
        Index("ix_agent_runs_pane", "participant_id", "status"),
        # The queue in age order, queued runs only (PostgreSQL's claim reads its oldest few:
        # claim_statements.claim_candidate); a claimed run's entry is dead from then on, and
        # vacuum removes it.
        Index(
            "ix_agent_runs_queued",
            "created_at",
            "id",
            postgresql_where=text("status = 'queued'"),
            sqlite_where=text("status = 'queued'"),
        ),
        UniqueConstraint("participant_id", "trigger_event_id", name="uq_agent_runs_pane_event"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    agent: Mapped[str] = mapped_column(String(24))
    trigger_message_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    trigger_dispatch_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    chain_depth: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime] = mapped_column(default=_now)
    lease_until: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)
    reply_message_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    no_op: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=_now)
    finished_at: Mapped[datetime | None]
    trigger_event_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    """A stage notice: the ``offer_events`` row it tells (unique per pane: once per event)."""
    watch_generation: Mapped[int | None] = mapped_column(Integer)
    """A Guard run: the room watch's generation it fired for (stale once a reply re-arms)."""


class Dispatch(Base):
    """The dispatch record: a send from one pane to another, and whether it was delivered.

    The ground truth of deliveries (seed 000 "Guidance cannot deliver"): memory may never
    claim a delivery this table does not show."""

    __tablename__ = "dispatches"
    __table_args__ = (
        UniqueConstraint("source_run_id", "position", name="uq_dispatches_run_position"),
        Index("ix_dispatches_room", "room_id", "created_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    from_participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    to_participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    source_run_id: Mapped[uuid.UUID] = mapped_column(Uuid)
    position: Mapped[int] = mapped_column(Integer)
    substance: Mapped[str] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    chain_depth: Mapped[int] = mapped_column(Integer, default=1)
    delivered_message_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    created_at: Mapped[datetime] = mapped_column(default=_now)
    delivered_at: Mapped[datetime | None]


class ModelCall(Base):
    """The ledger: one row per model call, with tokens, price and latency."""

    __tablename__ = "model_calls"
    __table_args__ = (Index("ix_model_calls_room", "room_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    agent: Mapped[str] = mapped_column(String(24))
    engine: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(64))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, default=0)
    price_usd: Mapped[Decimal | None] = mapped_column(Numeric(12, 6))
    latency_ms: Mapped[int] = mapped_column(Integer, default=0)
    ok: Mapped[bool] = mapped_column(Boolean, default=True)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class Flag(Base):
    """A frustration flag: visible to operators, never to an agent (seed 000)."""

    __tablename__ = "flags"
    __table_args__ = (Index("ix_flags_room", "room_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    room_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    participant_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("participants.id", ondelete="CASCADE")
    )
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    level: Mapped[str] = mapped_column(String(16))
    evidence: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class Lease(Base):
    """The room memory writer's lease. ``token`` grows on every grant: a writer whose token
    is no longer current (its lease expired and was taken) cannot write (fencing)."""

    __tablename__ = "leases"

    room_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    token: Mapped[int] = mapped_column(Integer, default=0)
    holder: Mapped[str | None] = mapped_column(String(64))
    expires_at: Mapped[datetime | None]


class Offer(Base):
    """A written offer: the thing the parties approve and pay against (seed 000 "Records are
    made by a specialist"). Its stage is derived from ``status`` and ``brand_approved_at``
    (``domain/offer_stage.py``); memory holds only ``offers.<key>.offerId``.

    ``status`` is an offers-system label (APPROVED means drawn and waiting on approvals), never
    a stage. ``version`` grows on every material rewrite, which clears the brand's stamp."""

    __tablename__ = "offers"
    __table_args__ = (
        Index("ix_offers_room", "room_id", "created_at"),
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
    created_at: Mapped[datetime] = mapped_column(default=_now)
    updated_at: Mapped[datetime] = mapped_column(default=_now)
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
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    """``pending`` (capture pending), ``captured`` or ``declined``."""
    currency: Mapped[str] = mapped_column(String(3))
    due: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    platform_fee: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    total: Mapped[Decimal] = mapped_column(Numeric(18, 4))
    error: Mapped[str | None] = mapped_column(Text)
    offer_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=_now)
    updated_at: Mapped[datetime] = mapped_column(default=_now)


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
    created_at: Mapped[datetime] = mapped_column(default=_now)


class Throttle(Base):
    """One counter of a throttle (``services/throttle.py``): hits on ``key`` (an action and
    its subject: an account, a guest key, an IP) in the fixed window starting at
    ``window_start``. In the database so every process counts the same hits."""

    __tablename__ = "throttles"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=_now)


class RoomWatch(Base):
    """A room's quiet-room watch (issue 12; ARCHITECTURE "Background jobs").

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
    armed_at: Mapped[datetime] = mapped_column(default=_now)
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
    created_at: Mapped[datetime] = mapped_column(default=_now)


# --- partners and operators (issue 16) -------------------------------------------------------


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
    created_at: Mapped[datetime] = mapped_column(default=_now)
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
    created_at: Mapped[datetime] = mapped_column(default=_now)


class WebhookEvent(Base):
    """One logical event (a stage change, a payment outcome). Its id is what partners see as
    ``webhook-id`` and dedupe on; ``source`` makes writing it twice impossible."""

    __tablename__ = "webhook_events"

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    type: Mapped[str] = mapped_column(String(40))
    source: Mapped[str] = mapped_column(String(120), unique=True)
    offer_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("offers.id", ondelete="CASCADE"))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    next_attempt_at: Mapped[datetime] = mapped_column(default=_now)
    lease_until: Mapped[datetime | None]
    """Set while a worker holds the attempt; an expired lease (a killed worker) is retried."""
    last_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=_now)
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
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    created_at: Mapped[datetime] = mapped_column(default=_now)


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
    taken_at: Mapped[datetime] = mapped_column(default=_now)
