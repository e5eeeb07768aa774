"""Operator resolvers for one pane's lines and plan, behind OpsRoom.transcript and a taken-over
pane's fields (kept apart from ``ops_room`` because ``schema/ops_types`` calls them)."""

from __future__ import annotations

import uuid

from dealroom.domain.errors import bad_input
from dealroom.domain.seats import Seat, side_of
from dealroom.schema.context import Info
from dealroom.schema.ops_room_view import OpsTranscript, ops_transcript
from dealroom.schema.pane_types import Message
from dealroom.services.live.events import MessageView
from dealroom.services.ops import reads as ops_reads
from dealroom.services.ops import room_view


def _cap(info: Info, first: int) -> int:
    return ops_reads.page_size(first, info.context.app.settings.max_page_size)


async def room_transcript(
    info: Info,
    room_id: uuid.UUID,
    seat: Seat | None,
    key: str | None,
    first: int,
    before: int | None,
) -> OpsTranscript:
    identity = await info.context.identity()
    if (seat is None) == (key is None):
        raise bad_input("Give seat or key, not both.", "key")
    pane = key if key is not None else Seat(str(seat)).value
    page = await room_view.transcript(
        info.context.db, identity, room_id, pane, first=_cap(info, first), before=before
    )
    side = side_of(pane) or Seat.VISITOR
    return OpsTranscript(
        seat=pane,
        nodes=[
            Message.from_view(MessageView.from_row(m, pane), side, operator_shown=True)
            for m in page.rows
        ],
        has_next_page=page.has_next,
        before=page.rows[-1].seq if page.rows else None,
    )


async def pane_transcript(
    info: Info, room_id: uuid.UUID, seat: Seat, first: int, before: int | None
) -> OpsTranscript:
    identity = await info.context.identity()
    size = _cap(info, first)
    page = await room_view.transcript(
        info.context.db, identity, room_id, seat.value, first=size, before=before
    )
    return ops_transcript(seat, page)


async def last_plan(info: Info, room_id: uuid.UUID, seat: Seat) -> str | None:
    identity = await info.context.identity()
    return await room_view.last_plan(info.context.db, identity, room_id, seat)
