"""The mutations that bring people into a room's sides and take them out, share a pane with
its side and choose who approves written offers for the buyer (``Room.participants`` reads
the result)."""

from __future__ import annotations

from typing import Annotated

import strawberry

from dealroom.resolvers import invitations
from dealroom.schema.context import Info
from dealroom.schema.invitation_types import Invitation
from dealroom.schema.room_types import Room


@strawberry.type(description="Joining and leaving a room's sides.")
class InvitationsMutation:
    @strawberry.mutation(
        description="Invite someone by email to the reader's side of a deal room: a "
        "single-use link that expires (DEALROOM_INVITATION_DAYS), emailed to the address "
        "(and shown in the app of an invitee who has an account). UNAUTHENTICATED (reason "
        "LOGIN_REQUIRED) when anonymous; "
        "FORBIDDEN (GUEST_CANNOT_INVITE) for a guest; NOT_FOUND for a room the reader holds "
        "no pane in; BAD_USER_INPUT for a bad email, the reader's own (INVITE_SELF) or a "
        "home room (NOT_A_DEAL_ROOM); CONFLICT (ROOM_FULL) when the room holds "
        "DEALROOM_MAX_PARTICIPANTS people; RATE_LIMITED (with retryAfterSeconds) past "
        "DEALROOM_INVITATIONS_PER_HOUR."
    )
    async def invite_to_room(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        email: Annotated[str, strawberry.argument(description="The invitee's email address.")],
    ) -> Invitation:
        return await invitations.invite_to_room(info, room_id, email)

    @strawberry.mutation(
        description="Accept an invitation: the signed-in account joins the inviter's side of "
        "the room with a pane of its own; already on that side, the room is returned "
        "unchanged. UNAUTHENTICATED (LOGIN_REQUIRED) when not signed in; NOT_FOUND "
        "(INVITATION_INVALID) for an unknown token; CONFLICT with reason INVITATION_USED, "
        "INVITATION_EXPIRED, ALREADY_ON_OTHER_SIDE or ROOM_FULL; FORBIDDEN "
        "(INVITATION_FOR_ANOTHER_ADDRESS) when a link to the host's side, which reads every "
        "pane, is opened by an account signed in with another address. A refusal changes nothing."
    )
    async def accept_invitation(
        self,
        info: Info,
        token: Annotated[
            str, strawberry.argument(description="The token: the last part of the link.")
        ],
    ) -> Room:
        return await invitations.accept_invitation(info, token)

    @strawberry.mutation(
        description="Take a participant out of a room: the host side may remove anyone but "
        "the host, the visitor who opened the room the members of its side, and a member may "
        "leave. The removed person's streams of the room end at once. FORBIDDEN with reason "
        "CANNOT_REMOVE_HOST or NOT_YOUR_SIDE; CONFLICT (LAST_OF_SIDE) for a side's lead; "
        "NOT_FOUND for an unknown participant."
    )
    async def remove_participant(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        participant_id: Annotated[
            strawberry.ID, strawberry.argument(description="The participant (Room.participants).")
        ],
    ) -> Room:
        return await invitations.remove_participant(info, room_id, participant_id)

    @strawberry.mutation(
        description="The visitor who opened the room lets the rest of its side read a pane of "
        "that side, or stops it (Participant.sharedWithSide). The host side reads every pane "
        "already. FORBIDDEN (NOT_THE_LEAD) for anyone else or a host-side pane."
    )
    async def share_participant_pane(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        participant_id: Annotated[
            strawberry.ID, strawberry.argument(description="Whose pane (Room.participants).")
        ],
        shared: Annotated[bool, strawberry.argument(description="Share it, or stop sharing.")],
    ) -> Room:
        return await invitations.share_participant_pane(info, room_id, participant_id, shared)

    @strawberry.mutation(
        description="The buying account (the visitor who opened the room) lets a member of "
        "its side approve written offers, or stops it (Participant.mayApprove); anyone on that "
        "side may pay. FORBIDDEN (NOT_THE_BUYER) for anyone else; BAD_USER_INPUT "
        "(NOT_A_MEMBER) for a participant not on the buyer's side."
    )
    async def allow_offer_approval(
        self,
        info: Info,
        room_id: Annotated[strawberry.ID, strawberry.argument(description="The room.")],
        participant_id: Annotated[
            strawberry.ID, strawberry.argument(description="The member (Room.participants).")
        ],
        allowed: Annotated[bool, strawberry.argument(description="Allow it, or stop it.")],
    ) -> Room:
        return await invitations.allow_offer_approval(info, room_id, participant_id, allowed)
