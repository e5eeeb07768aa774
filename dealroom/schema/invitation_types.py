"""GraphQL type of an invitation to a room's side (``inviteToRoom``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import strawberry

from dealroom.schema.enums import Seat

if TYPE_CHECKING:
    from dealroom.services.rooms.invitations import Issued


@strawberry.type(
    description="A single-use, expiring link that adds whoever accepts it (signed in) to the "
    "inviter's side of a room."
)
class Invitation:
    id: strawberry.ID = strawberry.field(description="The invitation's id.")
    side: Seat = strawberry.field(description="The side the invitee joins: the inviter's.")
    email: str = strawberry.field(description="The address it was made out to.")
    expires_at: datetime = strawberry.field(description="After this the link is refused.")
    link: str = strawberry.field(
        description="The link to hand the invitee (/invite/<token>, under the server's public "
        "address). Shown only now: the server keeps only a digest of the token."
    )

    @classmethod
    def from_issued(cls, issued: Issued) -> Invitation:
        row = issued.invitation
        return cls(
            id=strawberry.ID(str(row.id)),
            side=Seat(row.side),
            email=row.email,
            expires_at=row.expires_at,
            link=issued.link,
        )
