"""Operator resolvers for one pane's lines and plan, behind OpsRoom.transcript and a taken-over
pane's fields (kept apart from ``ops_room`` because ``schema/ops_types`` calls them)."""

from __future__ import annotations

import uuid

from dealroom.domain.errors import bad_input
from dealroom.domain.seats import Seat
from dealroom.schema.context import Info
from dealroom.schema.ops_room_view import OpsTranscript, ops_transcript
from dealroom.services.ops import reads as ops_reads
from dealroom.services.ops import room_view


def _cap(info: Info, first: int) -> int:
    return ops_reads.page_size(first, info.context.app.settings.max_page_size)


def pane_key(seat: Seat | None, key: str | None) -> str:
    """The pane an operator names: by side (its lead's) or by participant key."""
    if (seat is None) == (key is None):
        raise bad_input("Give seat or key, not both.", "key")
    return key if key is not None else Seat(str(seat)).value


async def room_transcript(
    info: Info,
    room_id: uuid.UUID,
    seat: Seat | None,
    key: str | None,
    first: int,
    before: int | None,
) -> OpsTranscript:
    return await pane_transcript(info, room_id, pane_key(seat, key), first, before)


async def pane_transcript(
    info: Info, room_id: uuid.UUID, pane: str, first: int, before: int | None
) -> OpsTranscript:
    """A page of the pane's lines (by participant key), newest first."""
    identity = await info.context.identity()
    page = await room_view.transcript(
        info.context.db, identity, room_id, pane, first=_cap(info, first), before=before
    )
    return ops_transcript(pane, page)


async def last_plan(info: Info, room_id: uuid.UUID, pane: str) -> str | None:
    identity = await info.context.identity()
    return await room_view.last_plan(info.context.db, identity, room_id, pane)
