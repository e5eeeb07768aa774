"""Resolvers for joining and leaving a room's sides: invitations, removal, shared panes and
who approves offers for the buyer."""

from __future__ import annotations

from datetime import timedelta

import strawberry

from dealroom.schema.context import Info
from dealroom.schema.invitation_types import Invitation
from dealroom.schema.room_types import Room
from dealroom.services.accounts import abuse
from dealroom.services.rooms import invitations
from dealroom.services.rooms.service import parse_id


async def invite_to_room(info: Info, room_id: strawberry.ID, email: str) -> Invitation:
    ctx = info.context
    settings = ctx.app.settings
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        issued = await invitations.invite_to_room(
            db,
            ctx.app.broker,
            ctx.app.clock,
            identity,
            parse_id(room_id, "room"),
            email,
            max_participants=settings.max_participants,
            valid_for=timedelta(days=settings.invitation_days),
            public_url=settings.public_url,
            band_percent=settings.firewall_band_percent,
        )
        assert identity.account is not None  # invite_to_room refused anyone else
        await abuse.count_invitation(db, settings, identity.account.id, ctx.app.clock.now())
        return Invitation.from_issued(issued)


async def accept_invitation(info: Info, token: str) -> Room:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        room = await invitations.accept_invitation(
            db,
            ctx.app.broker,
            ctx.app.clock,
            identity,
            token,
            max_participants=ctx.app.settings.max_participants,
        )
    return Room.for_reader(room)


async def remove_participant(
    info: Info, room_id: strawberry.ID, participant_id: strawberry.ID
) -> Room:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        room = await invitations.remove_participant(
            db,
            ctx.app.broker,
            ctx.app.clock,
            identity,
            parse_id(room_id, "room"),
            parse_id(participant_id, "participant"),
        )
    return Room.for_reader(room)


async def share_participant_pane(
    info: Info, room_id: strawberry.ID, participant_id: strawberry.ID, shared: bool
) -> Room:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        room = await invitations.share_pane(
            db,
            ctx.app.broker,
            identity,
            parse_id(room_id, "room"),
            parse_id(participant_id, "participant"),
            shared,
        )
    return Room.for_reader(room)


async def allow_offer_approval(
    info: Info, room_id: strawberry.ID, participant_id: strawberry.ID, allowed: bool
) -> Room:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        room = await invitations.allow_approval(
            db,
            identity,
            parse_id(room_id, "room"),
            parse_id(participant_id, "participant"),
            allowed,
        )
    return Room.for_reader(room)
