"""Queries for notifications: the outbox, the in-app list, preferences and the waits on a
principal. Repositories flush, never commit."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    Credential,
    Message,
    Notification,
    NotificationSettings,
    Participant,
    Room,
)
from dealroom.persistence.paging import After, after

WAITING = ("waiting", "reminded")
"""Wait states whose next step is still to come."""


@dataclass(frozen=True, slots=True)
class Recipient:
    account_id: uuid.UUID
    handle: str
    display_name: str
    email: str | None
    settings: NotificationSettings | None


@dataclass(frozen=True, slots=True)
class RoomFacts:
    """What a notification about a room says and links to."""

    room_id: uuid.UUID
    title: str
    kind: str
    memory: dict[str, object]
    host_account_id: uuid.UUID
    host_handle: str
    host_name: str
    seats: dict[str, uuid.UUID | None]
    """Participant key → its account (None for an unclaimed guest)."""
    participant_ids: dict[str, uuid.UUID]
    names: dict[str, str]
    """Participant key → the bound account's display name (a seat with none is absent)."""
    locales: dict[str, str | None] = field(default_factory=dict)
    """Participant key → the bound account's stored locale (``domain/locale.py``)."""


def _same_room(room_id: uuid.UUID | None) -> ColumnElement[bool]:
    if room_id is None:
        return Notification.room_id.is_(None)
    return Notification.room_id == room_id


class NotificationRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    # --- writing ---------------------------------------------------------------------------

    async def room_facts(self, room_id: uuid.UUID) -> RoomFacts | None:
        """The room, its host and its seats: two statements."""
        row = (
            await self.db.execute(
                select(Room, Account)
                .join(Account, Account.id == Room.host_account_id)
                .where(Room.id == room_id)
            )
        ).first()
        if row is None:
            return None
        # the statement selects exactly these two entities
        room, host = cast(tuple[Room, Account], tuple(row))
        seats = (
            await self.db.execute(
                select(
                    Participant.key,
                    Participant.account_id,
                    Participant.id,
                    Account.display_name,
                    Account.locale,
                )
                .outerjoin(Account, Account.id == Participant.account_id)
                .where(Participant.room_id == room_id)
            )
        ).all()
        # the statement selects exactly these five columns
        rows = [
            cast(tuple[str, uuid.UUID | None, uuid.UUID, str | None, str | None], tuple(seat))
            for seat in seats
        ]
        return RoomFacts(
            room_id=room.id,
            title=room.title or "",
            kind=room.kind,
            memory=dict(room.memory or {}),
            host_account_id=host.id,
            host_handle=host.handle,
            host_name=host.display_name or host.handle,
            seats={key: account for key, account, _id, _name, _locale in rows},
            participant_ids={key: pid for key, _account, pid, _name, _locale in rows},
            names={key: name for key, _account, _id, name, _locale in rows if name},
            locales={key: locale for key, _account, _id, _name, locale in rows},
        )

    async def recipients(self, account_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Recipient]:
        """Each account with its sign-in address (if any) and its settings row: one
        statement."""
        if not account_ids:
            return {}
        rows = (
            await self.db.execute(
                select(Account, Credential.email, NotificationSettings)
                .outerjoin(Credential, Credential.account_id == Account.id)
                .outerjoin(NotificationSettings, NotificationSettings.account_id == Account.id)
                .where(Account.id.in_(list(set(account_ids))))
            )
        ).all()
        found: dict[uuid.UUID, Recipient] = {}
        for row in rows:
            # the statement selects exactly these three
            account, email, settings = cast(
                tuple[Account, str | None, NotificationSettings | None], tuple(row)
            )
            found[account.id] = Recipient(
                account_id=account.id,
                handle=account.handle,
                display_name=account.display_name or account.handle,
                email=email,
                settings=settings,
            )
        return found

    async def operators(self) -> list[uuid.UUID]:
        return list(await self.db.scalars(select(Account.id).where(Account.is_operator)))

    async def add_once(self, row: Notification) -> bool:
        """Insert ``row`` unless its source is written already; False then. The unique source
        decides, so two units writing one source at once write it once and neither rolls back
        (a check then an insert let the second one's commit fail)."""
        values = {
            column.key: getattr(row, column.key)
            for column in Notification.__table__.columns
            if getattr(row, column.key, None) is not None
        }
        insert = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        found = await self.db.execute(
            insert(Notification)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["source"])
            .returning(Notification.id)
        )
        return found.first() is not None

    async def written(self, sources: Sequence[str]) -> set[str]:
        """Which of ``sources`` were written already (a notification is written once)."""
        if not sources:
            return set()
        return set(
            await self.db.scalars(
                select(Notification.source).where(Notification.source.in_(list(sources)))
            )
        )

    async def same_room_open(self, carrier: Notification) -> list[Notification]:
        """The other emails to the carrier's account about its room not yet claimed by any
        worker, locked: they join the carrier's email (coalescing)."""
        return list(
            await self.db.scalars(
                select(Notification)
                .where(
                    Notification.account_id == carrier.account_id,
                    _same_room(carrier.room_id),
                    Notification.status == "pending",
                    Notification.attempts == 0,
                    Notification.lease_until.is_(None),
                    Notification.id != carrier.id,
                )
                .order_by(Notification.id)
                .with_for_update()
                .execution_options(populate_existing=True)
            )
        )

    async def unsent_email(self, row: Notification) -> Notification | None:
        """Another email to the row's account about its room that a worker has claimed and
        not yet sent (in flight, or waiting for its retry)."""
        return await self.db.scalar(
            select(Notification)
            .where(
                Notification.account_id == row.account_id,
                _same_room(row.room_id),
                Notification.status == "pending",
                Notification.attempts > 0,
                Notification.id != row.id,
            )
            .order_by(Notification.next_attempt_at)
            .limit(1)
        )

    async def last_email_at(
        self, account_id: uuid.UUID, room_id: uuid.UUID | None, since: datetime
    ) -> datetime | None:
        """When the last email to this account about this room was first attempted, if at or
        after ``since``."""
        found: datetime | None = await self.db.scalar(
            select(func.max(Notification.sent_at)).where(
                Notification.account_id == account_id,
                _same_room(room_id),
                Notification.sent_at >= since,
            )
        )
        return found

    async def settings_of(
        self, account_id: uuid.UUID, *, lock: bool = False
    ) -> NotificationSettings | None:
        statement = select(NotificationSettings).where(
            NotificationSettings.account_id == account_id
        )
        if lock:
            statement = statement.with_for_update()
        return await self.db.scalar(statement)

    # --- delivery --------------------------------------------------------------------------

    async def due(self, now: datetime, limit: int) -> list[Notification]:
        """Up to ``limit`` emails due at ``now`` and leased to nobody, oldest due first:
        candidates only, unlocked; a worker claims one under :meth:`hold_room` and
        :meth:`claimable`."""
        return list(
            await self.db.scalars(
                select(Notification)
                .where(
                    Notification.status == "pending",
                    Notification.next_attempt_at <= now,
                    or_(Notification.lease_until.is_(None), Notification.lease_until < now),
                )
                .order_by(Notification.next_attempt_at)
                .limit(limit)
            )
        )

    async def hold_room(self, account_id: uuid.UUID | None, room_id: uuid.UUID | None) -> bool:
        """Take, for this transaction, the right to decide the emails to this account about
        this room; False if another worker holds it now. On PostgreSQL a transaction-scoped
        advisory lock (claims of different rooms never wait on each other, so never
        deadlock); SQLite's ``BEGIN IMMEDIATE`` already runs one claim at a time."""
        if self.db.dialect != "postgresql":
            return True
        digest = hashlib.blake2b(
            f"notify-email:{account_id}:{room_id}".encode(), digest_size=8
        ).digest()
        key = int.from_bytes(digest, "big", signed=True)
        return bool(await self.db.scalar(select(func.pg_try_advisory_xact_lock(key))))

    async def claimable(self, row_id: uuid.UUID, now: datetime) -> Notification | None:
        """The row as it is now, locked, if it is still due and leased to nobody."""
        return await self.db.scalar(
            select(Notification)
            .where(
                Notification.id == row_id,
                Notification.status == "pending",
                Notification.next_attempt_at <= now,
                or_(Notification.lease_until.is_(None), Notification.lease_until < now),
            )
            .with_for_update()
            .execution_options(populate_existing=True)
        )

    async def renew(self, row_id: uuid.UUID, attempt: int, lease_until: datetime) -> bool:
        """Move a claimed send's lease to ``lease_until`` if attempt ``attempt`` is still the
        row's latest and unsent (no other worker has claimed it again since)."""
        result = await self.db.execute(
            update(Notification)
            .where(
                Notification.id == row_id,
                Notification.attempts == attempt,
                Notification.status == "pending",
            )
            .values(lease_until=lease_until)
        )
        return bool(getattr(result, "rowcount", 0))

    async def by_ids(self, ids: Sequence[uuid.UUID]) -> list[Notification]:
        if not ids:
            return []
        return list(
            await self.db.scalars(select(Notification).where(Notification.id.in_(list(ids))))
        )

    async def carried(self, carrier_ids: Sequence[uuid.UUID]) -> list[Notification]:
        """The notifications that joined these emails, oldest first."""
        if not carrier_ids:
            return []
        return list(
            await self.db.scalars(
                select(Notification)
                .where(Notification.carried_by.in_(list(carrier_ids)))
                .order_by(Notification.created_at, Notification.id)
            )
        )

    async def digests_due(self, before: datetime, limit: int) -> list[uuid.UUID]:
        """Accounts whose oldest digested notification is older than ``before``."""
        found = await self.db.scalars(
            select(Notification.account_id)
            .where(Notification.status == "digest")
            .group_by(Notification.account_id)
            .having(func.min(Notification.created_at) <= before)
            .limit(limit)
        )
        return [account_id for account_id in found if account_id is not None]

    async def digested(self, account_id: uuid.UUID) -> list[Notification]:
        return list(
            await self.db.scalars(
                select(Notification)
                .where(Notification.account_id == account_id, Notification.status == "digest")
                .order_by(Notification.created_at, Notification.id)
                .with_for_update()
            )
        )

    # --- the in-app list -------------------------------------------------------------------

    async def page(
        self, account_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[Notification]:
        """The account's notifications, newest first (the digest carriers' own rows are the
        notifications they carry, so a carrier of kind ``digest`` is not listed)."""
        statement = (
            select(Notification)
            .where(Notification.account_id == account_id, Notification.kind != "digest")
            .order_by(Notification.created_at.desc(), Notification.id.desc())
            .limit(limit)
        )
        statement = after(statement, Notification.created_at, Notification.id, after_row)
        return list(await self.db.scalars(statement))

    async def unread(self, account_id: uuid.UUID) -> int:
        return int(
            await self.db.scalar(
                select(func.count(Notification.id)).where(
                    Notification.account_id == account_id,
                    Notification.read_at.is_(None),
                    Notification.kind != "digest",
                )
            )
            or 0
        )

    async def mark_read(
        self, account_id: uuid.UUID, ids: Sequence[uuid.UUID] | None, now: datetime
    ) -> None:
        """Mark the account's notifications read: those of ``ids``, or all of them."""
        condition = and_(Notification.account_id == account_id, Notification.read_at.is_(None))
        if ids is not None:
            condition = and_(condition, Notification.id.in_(list(ids)))
        await self.db.execute(update(Notification).where(condition).values(read_at=now))

    # --- waits on a principal --------------------------------------------------------------

    async def waits_due(
        self, *, remind_before: datetime, escalate_before: datetime, limit: int
    ) -> list[Notification]:
        """Waits whose next step is due (a reminder after one window, the escalation after
        the other), locked, skipping rows another worker holds."""
        return list(
            await self.db.scalars(
                select(Notification)
                .where(
                    or_(
                        (Notification.wait_state == "waiting")
                        & (Notification.waiting_since <= remind_before),
                        (Notification.wait_state == "reminded")
                        & (Notification.waiting_since <= escalate_before),
                    )
                )
                .order_by(Notification.waiting_since)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
        )

    async def waits_in_room(self, room_id: uuid.UUID) -> list[Notification]:
        """The room's unsettled waits, locked."""
        return list(
            await self.db.scalars(
                select(Notification)
                .where(
                    Notification.room_id == room_id,
                    Notification.wait_state.in_((*WAITING, "escalated")),
                )
                .with_for_update()
            )
        )

    async def armed(self, room_id: uuid.UUID) -> int:
        """How many unsettled waits the room has."""
        return int(
            await self.db.scalar(
                select(func.count(Notification.id)).where(
                    Notification.room_id == room_id, Notification.wait_state.in_(WAITING)
                )
            )
            or 0
        )

    async def spoke_since(self, participant_id: uuid.UUID, since: datetime) -> bool:
        """Whether the participant itself wrote in its pane after ``since`` (an answer)."""
        found = await self.db.scalar(
            select(Message.id)
            .where(
                Message.participant_id == participant_id,
                Message.author_kind == "participant",
                Message.created_at > since,
            )
            .limit(1)
        )
        return found is not None

    async def operator_alerts(self, *, limit: int) -> list[Notification]:
        """The newest operator alerts (one per alert: the first operator's copy)."""
        return list(
            await self.db.scalars(
                select(Notification)
                .where(Notification.kind == "operator_alert")
                .order_by(Notification.created_at.desc())
                .limit(limit)
            )
        )
