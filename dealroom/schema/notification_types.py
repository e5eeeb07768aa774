"""GraphQL types for notifications: the in-app list, its events and the preferences."""

from __future__ import annotations

from datetime import datetime

import strawberry

from dealroom.persistence import models
from dealroom.services.notify.kinds import Kind, Mode

strawberry.enum(
    Kind,
    name="NotificationKind",
    description="What a notification is about: DECISION (your agent asked you something it may "
    "not decide), APPROVAL (a written offer waits for your approval), STAGE (an offer was "
    "approved, booked, paid or closed), ANSWERED (the other side answered after a wait), "
    "REMINDER, ESCALATION, OPERATOR_ALERT (operators), DIGEST (the daily email).",
)
strawberry.enum(
    Mode,
    name="NotificationMode",
    description="How a kind reaches you by email: IMMEDIATE, in a daily DIGEST, or OFF (still "
    "listed in the app).",
)


@strawberry.type(description="A notification to the reader, listed in the app and emailed.")
class Notification:
    id: strawberry.ID = strawberry.field(description="Its id (the email's Message-ID too).")
    kind: Kind = strawberry.field(description="What it is about.")
    title: str = strawberry.field(description="One line (the email's subject).")
    body: str = strawberry.field(description="What happened, in a sentence or two.")
    room_id: strawberry.ID | None = strawberry.field(description="The room it is about.")
    link: str = strawberry.field(
        description="The room's path for the reader: /r/<roomId> for a host, "
        "/z/<handle>/<roomId> for a visitor."
    )
    reason: str = strawberry.field(description="Why the reader got it.")
    read: bool = strawberry.field(description="Whether the reader marked it read.")
    email_status: str = strawberry.field(
        description="pending, sent, failed, joined (carried by another email), digest "
        "(waits for the daily digest) or kept (not emailed: no address, email off, or no "
        "SMTP server configured)."
    )
    created_at: datetime = strawberry.field(description="When it was written (UTC).")

    @classmethod
    def from_row(cls, row: models.Notification) -> Notification:
        return cls(
            id=strawberry.ID(str(row.id)),
            kind=Kind(row.kind),
            title=row.title,
            body=row.body,
            room_id=strawberry.ID(str(row.room_id)) if row.room_id else None,
            link=row.link,
            reason=row.reason,
            read=row.read_at is not None,
            email_status=row.status,
            created_at=row.created_at,
        )


@strawberry.type(description="A page of the reader's notifications, newest first.")
class NotificationConnection:
    nodes: list[Notification] = strawberry.field(description="The notifications.")
    has_next_page: bool = strawberry.field(description="More follow the last one.")
    end_cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")
    unread_count: int = strawberry.field(description="The reader's unread notifications, all.")


@strawberry.type(description="A new notification for the reader, with the unread count.")
class NotificationEvent:
    notification: Notification = strawberry.field(description="The notification.")
    unread_count: int = strawberry.field(description="The reader's unread notifications now.")


@strawberry.type(description="How one kind of notification reaches the reader by email.")
class NotificationPreference:
    kind: Kind = strawberry.field(description="The kind.")
    mode: Mode = strawberry.field(description="IMMEDIATE, DIGEST or OFF.")


@strawberry.input(description="One kind's mode.")
class NotificationPreferenceInput:
    kind: Kind = strawberry.field(description="The kind (not DIGEST).")
    mode: Mode = strawberry.field(description="IMMEDIATE, DIGEST or OFF.")
