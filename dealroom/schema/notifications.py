"""Notification fields, merged into the root types by ``schema/root.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import strawberry

from dealroom.resolvers import notifications
from dealroom.schema.context import Info
from dealroom.schema.notification_types import (
    NotificationConnection,
    NotificationEvent,
    NotificationPreference,
    NotificationPreferenceInput,
)


@strawberry.type
class NotifyQuery:
    @strawberry.field(
        description="The signed-in account's notifications, newest first, with the unread "
        "count. first: 1-100. UNAUTHENTICATED when anonymous."
    )
    async def notifications(
        self,
        info: Info,
        first: Annotated[int, strawberry.argument(description="Page size, 1-100.")] = 20,
        after: Annotated[
            str | None, strawberry.argument(description="endCursor of the previous page.")
        ] = None,
    ) -> NotificationConnection:
        return await notifications.notifications(info, first, after)

    @strawberry.field(
        description="How each kind of notification reaches the signed-in account by email "
        "(its choice, else the default)."
    )
    async def notification_preferences(self, info: Info) -> list[NotificationPreference]:
        return await notifications.preferences_of(info)


@strawberry.type
class NotifyMutation:
    @strawberry.mutation(
        description="Mark the signed-in account's notifications read: those named, or all "
        "when `ids` is null. Returns the unread count left."
    )
    async def mark_notifications_read(
        self,
        info: Info,
        ids: Annotated[
            list[strawberry.ID] | None,
            strawberry.argument(description="Notification ids; null: every one."),
        ] = None,
    ) -> int:
        return await notifications.mark_read(info, ids)

    @strawberry.mutation(
        description="Choose how kinds of notification reach the signed-in account by email "
        "(IMMEDIATE, DIGEST, OFF). Kinds not named keep their mode. A kind that cannot be "
        "chosen (DIGEST) is BAD_USER_INPUT and nothing changes. Returns every kind's mode."
    )
    async def set_notification_preferences(
        self,
        info: Info,
        preferences: Annotated[
            list[NotificationPreferenceInput],
            strawberry.argument(description="The kinds to set and their modes."),
        ],
    ) -> list[NotificationPreference]:
        return await notifications.set_preferences(info, preferences)


@strawberry.type
class NotifySubscription:
    @strawberry.subscription(
        description="The signed-in account's new notifications, live, each with the unread "
        "count. UNAUTHENTICATED when anonymous; sessions only (an API key is FORBIDDEN). "
        "UNAVAILABLE (extensions.retryAfterSeconds) when too many subscriptions are starting "
        "at once: subscribe again after that long."
    )
    async def notification_events(self, info: Info) -> AsyncIterator[NotificationEvent]:
        async for event in notifications.notification_events(info):
            yield event
