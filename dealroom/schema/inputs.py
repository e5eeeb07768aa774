"""GraphQL input types."""

from __future__ import annotations

import strawberry

from dealroom.schema.enums import Seat


@strawberry.input(description="A new account. Its home room is created with it.")
class SignUpInput:
    email: str = strawberry.field(description="Sign-in email; unique.")
    password: str = strawberry.field(description="8 to 256 characters.")
    handle: str = strawberry.field(
        description="3-32 lowercase letters, digits, '-' or '_'; the link is /z/<handle>."
    )
    display_name: str = strawberry.field(description="The name shown to others, 1-80 chars.")


@strawberry.input(description="Credentials for signIn.")
class SignInInput:
    email: str = strawberry.field(description="Sign-in email.")
    password: str = strawberry.field(description="Password.")


@strawberry.input(description="A message for the reader's own pane.")
class PostMessageInput:
    room_id: strawberry.ID = strawberry.field(description="The room.")
    body: str = strawberry.field(description="1-8000 characters after trimming.")
    client_message_id: str = strawberry.field(
        description="Client-chosen idempotency key, unique per pane: a retry with the same "
        "key returns the original message and stores nothing."
    )
    seat: Seat | None = strawberry.field(
        default=None,
        description="Which of the reader's own panes (defaults to Room.readerSeat). Only a "
        "host previewing its agent in a demo room holds two.",
    )
