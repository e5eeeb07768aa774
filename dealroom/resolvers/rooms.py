"""Room resolvers."""

from __future__ import annotations

import strawberry

from dealroom.domain.cursors import room_cursor
from dealroom.domain.errors import bad_input, not_found, unauthenticated
from dealroom.resolvers.accounts import after_claim
from dealroom.schema.context import GUEST_COOKIE, Info
from dealroom.schema.ops_types import Flag, GuardEdit, GuardVerdict, ModelUsage, RoomOps
from dealroom.schema.paging import PageInfo
from dealroom.schema.room_types import Room, RoomConnection, RoomEdge
from dealroom.schema.types import OpenRoomPayload
from dealroom.services.accounts import abuse
from dealroom.services.gate import claims
from dealroom.services.live.room_activity import announce_new_room
from dealroom.services.ops import flags as ops
from dealroom.services.rooms import service as rooms

GUEST_COOKIE_MAX_AGE = 400 * 24 * 3600  # browsers cap cookie lifetimes at 400 days


async def room(info: Info, id: strawberry.ID) -> Room:
    identity = await info.context.identity()
    found = await rooms.room_for_reader(info.context.db, identity, rooms.parse_id(id, "room"))
    info.context.loaders.participants.prime(found.room.id, found.participants)
    return Room.for_reader(found.room)


async def list_rooms(info: Info, first: int, after: str | None) -> RoomConnection:
    cap = info.context.app.settings.max_page_size
    if not 0 < first <= cap:
        raise bad_input(f"first must be between 1 and {cap}.", "first")
    identity = await info.context.identity()
    page = await rooms.rooms_for_reader(info.context.db, identity, first=first, after=after)
    edges = [
        RoomEdge(cursor=room_cursor(r.last_activity_at, r.id), node=Room.for_reader(r))
        for r in page.rooms
    ]
    return RoomConnection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=page.has_next,
            has_previous_page=after is not None,
            start_cursor=edges[0].cursor if edges else None,
            end_cursor=edges[-1].cursor if edges else None,
        ),
        total_count=page.total,
    )


async def open_visitor_room(
    info: Info, handle: str, new_conversation: bool, service: str | None = None
) -> OpenRoomPayload:
    ctx = info.context
    identity = await ctx.identity()
    async with ctx.transaction() as db:
        opened = await rooms.open_visitor_room(
            db,
            ctx.app.clock,
            identity,
            handle=handle,
            new_conversation=new_conversation,
            service=service,
            client_ip=ctx.request.client.host if ctx.request.client else None,
            guest_keys_per_hour=ctx.app.settings.guest_keys_per_ip_per_hour,
            greet=ctx.app.settings.greet_visitors,
            band_percent=ctx.app.settings.firewall_band_percent,
        )
        await abuse.count_visit(
            db,
            ctx.app.settings,
            ctx.client_ip,
            ctx.app.clock.now(),
            created=opened.created,
            minted=opened.guest_key is not None and opened.guest_key != identity.guest_key,
        )
        if opened.created:
            announce_new_room(db, ctx.app.broker, opened.room.host_account_id, opened.room.id)
    if opened.guest_key is not None:
        ctx.set_cookie(GUEST_COOKIE, opened.guest_key, GUEST_COOKIE_MAX_AGE)
        if identity.guest_key != opened.guest_key:
            # The rest of this response reads the room as the new guest.
            ctx.adopt_guest_key(opened.guest_key)
    return OpenRoomPayload(
        room=Room.for_reader(opened.room), guest_key=opened.guest_key, created=opened.created
    )


async def claim_room(info: Info, room_id: strawberry.ID) -> Room:
    """Bind the signed-in account to a room its guest key holds (and the key's other rooms)."""
    ctx = info.context
    identity = await ctx.identity()
    if identity.account is None:
        raise unauthenticated("Sign in before claiming a room.")
    parsed = rooms.parse_id(room_id, "room")
    if identity.guest_key is None:
        raise not_found("Room")
    async with ctx.transaction() as db:
        claimed = await claims.claim_guest_rooms(
            db, ctx.app.clock, identity.account, identity.guest_key, room_id=parsed
        )
        after_claim(ctx, db, claimed)
    found = await rooms.room_for_reader(ctx.db, identity, parsed)
    ctx.loaders.participants.prime(found.room.id, found.participants)
    return Room.for_reader(found.room)


async def room_ops(info: Info, room_id: strawberry.ID, flags: int) -> RoomOps:
    if not 0 < flags <= info.context.app.settings.max_page_size:
        raise bad_input("flags must be between 1 and 100.", "flags")
    identity = await info.context.identity()
    found = await ops.room_ops(
        info.context.db, identity, rooms.parse_id(room_id, "room"), flags=flags
    )
    usage = found.usage
    return RoomOps(
        room_id=strawberry.ID(str(found.room_id)),
        flags=[
            Flag(
                id=strawberry.ID(str(f.id)),
                level=f.level,
                evidence=f.evidence,
                created_at=f.created_at,
            )
            for f in found.flags
        ],
        usage=ModelUsage(
            calls=usage.calls,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            price_usd=str(usage.price_usd),
        ),
        failed_runs=found.failed_runs,
        guard_verdicts=[
            GuardVerdict(
                id=strawberry.ID(str(v.id)),
                verdict=v.verdict,
                findings=list(v.findings),
                edits=[
                    GuardEdit(
                        kind=str(e.get("kind", "")),
                        target=str(e.get("target", "")),
                        detail=str(e.get("detail", "")),
                    )
                    for e in v.edits
                ],
                created_at=v.created_at,
            )
            for v in found.verdicts
        ],
    )
