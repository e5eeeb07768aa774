"""Notification resolvers: the reader's list, marking read, preferences, the live stream."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import strawberry

from dealroom.domain.errors import bad_input
from dealroom.resolvers.live import after_init_check, settle_credentials
from dealroom.schema.context import Info
from dealroom.schema.notification_types import (
    Notification,
    NotificationConnection,
    NotificationEvent,
    NotificationPreference,
    NotificationPreferenceInput,
)
from dealroom.schema.scope_gate import require_key_scope
from dealroom.services.accounts.identity import resolve_identity
from dealroom.services.notify import preferences, reads
from dealroom.services.notify.outbox import account_channel
from dealroom.services.rooms.service import parse_id


async def notifications(info: Info, first: int, after: str | None) -> NotificationConnection:
    cap = info.context.app.settings.max_page_size
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    identity = await info.context.identity()
    page = await reads.page(info.context.db, identity, first=first, after=after)
    return NotificationConnection(
        nodes=[Notification.from_row(r) for r in page.rows],
        has_next_page=page.has_next,
        end_cursor=reads.cursor(page.rows[-1]) if page.rows else None,
        unread_count=page.unread,
    )


async def mark_read(info: Info, ids: list[strawberry.ID] | None) -> int:
    ctx = info.context
    identity = await ctx.identity()
    parsed = None if ids is None else [parse_id(i, "notification") for i in ids]
    async with ctx.transaction() as db:
        return await reads.mark_read(db, identity, parsed, ctx.app.clock.now())


async def preferences_of(info: Info) -> list[NotificationPreference]:
    identity = await info.context.identity()
    account = reads.reader(identity)
    chosen = await preferences.of(info.context.db, account.id)
    return [NotificationPreference(kind=p.kind, mode=p.mode) for p in chosen]


async def set_preferences(
    info: Info, chosen: list[NotificationPreferenceInput]
) -> list[NotificationPreference]:
    ctx = info.context
    identity = await ctx.identity()
    account = reads.reader(identity)
    async with ctx.transaction() as db:
        stored = await preferences.set_modes(
            db, account.id, [(c.kind.value, c.mode.value) for c in chosen], ctx.app.clock.now()
        )
    return [NotificationPreference(kind=p.kind, mode=p.mode) for p in stored]


async def notification_events(info: Info) -> AsyncIterator[NotificationEvent]:
    """The reader's new notifications, live. The stream reads each from the database (the
    broker only wakes it), so what it yields is what is stored."""
    ctx = info.context
    await after_init_check(ctx)
    # A start-up like roomEvents': a burst queues for a slot and is refused UNAVAILABLE with a
    # retry hint, and a socket acked unchecked has its credentials checked here, in the slot.
    async with ctx.app.admission.start_up():
        if not await settle_credentials(info):
            return  # the socket is closed
        async with ctx.reading() as db:
            identity = await resolve_identity(db, ctx.app.clock, ctx.credentials())
            require_key_scope(identity, "notificationEvents")
    account_id = reads.reader(identity).id
    async with ctx.app.broker.subscribe([account_channel(account_id)]) as subscription:
        async for payload in subscription:
            try:
                notification_id = uuid.UUID(json.loads(payload)["id"])
            except (ValueError, KeyError, TypeError):
                continue  # a RESYNC or a foreign payload: nothing to read
            async with ctx.reading() as db:
                row = await reads.one(db, account_id, notification_id)
                unread = await reads.unread(db, account_id)
            if row is not None:
                yield NotificationEvent(
                    notification=Notification.from_row(row), unread_count=unread
                )
