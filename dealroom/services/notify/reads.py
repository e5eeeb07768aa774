"""The in-app list: an account's notifications newest first, its unread count, marking read.
Every read is the signed-in account's own (nobody reads another's list)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from dealroom.domain.cursors import parse_room_cursor, room_cursor
from dealroom.domain.errors import unauthenticated
from dealroom.persistence.db import Db
from dealroom.persistence.models import Account, Notification
from dealroom.persistence.notifications import NotificationRepository
from dealroom.services.accounts.identity import Identity


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[Notification]
    has_next: bool
    unread: int


def reader(identity: Identity) -> Account:
    if identity.account is None:
        raise unauthenticated()
    return identity.account


async def page(db: Db, identity: Identity, *, first: int, after: str | None) -> Page:
    account = reader(identity)
    repo = NotificationRepository(db)
    rows = await repo.page(
        account.id,
        limit=first + 1,
        after_row=None if after is None else parse_room_cursor(after),
    )
    return Page(rows=rows[:first], has_next=len(rows) > first, unread=await repo.unread(account.id))


def cursor(row: Notification) -> str:
    return room_cursor(row.created_at, row.id)


async def mark_read(db: Db, identity: Identity, ids: list[uuid.UUID] | None, now: datetime) -> int:
    """Mark the reader's notifications read (``ids``, or all); returns the unread count left."""
    account = reader(identity)
    repo = NotificationRepository(db)
    await repo.mark_read(account.id, ids, now)
    return await repo.unread(account.id)


async def one(db: Db, account_id: uuid.UUID, notification_id: uuid.UUID) -> Notification | None:
    """One of the account's notifications (None if it is not the account's)."""
    rows = await NotificationRepository(db).by_ids([notification_id])
    return next((r for r in rows if r.account_id == account_id), None)


async def unread(db: Db, account_id: uuid.UUID) -> int:
    return await NotificationRepository(db).unread(account_id)
