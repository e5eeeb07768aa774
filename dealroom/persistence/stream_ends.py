"""Where many followed streams end, read at once (the process heartbeat,
``services/live/heartbeats.py``): a pane's last stored event is its newest message or its room's
newest stage change; an offer's is its newest stage change. Panes: one statement on
PostgreSQL, one per chunk on SQLite (``id_lists``); offers: one per chunk."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import func, select

from dealroom.persistence import id_lists
from dealroom.persistence.db import Db
from dealroom.persistence.models import OfferEvent, Participant, Room

_PANE_ENDS = select(Participant.id, Participant.pane_seq, Room.stage_seq).join(
    Room, Room.id == Participant.room_id
)
_PANE_ENDS_OF = _PANE_ENDS.where(id_lists.any_of(Participant.id, "participant_ids"))


async def pane_ends(db: Db, participant_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
    """``participant id -> cursor`` of each pane's last stored event; a pane that is gone is
    missing."""
    rows = await id_lists.rows_for(
        db,
        participant_ids,
        as_array=_PANE_ENDS_OF,
        param="participant_ids",
        in_list=lambda chunk: _PANE_ENDS.where(Participant.id.in_(chunk)),
    )
    ends: dict[uuid.UUID, int] = {}
    for row in rows:
        participant_id, pane_seq, stage_seq = tuple(row)  # the three selected columns
        ends[participant_id] = max(int(pane_seq), int(stage_seq))
    return ends


async def offer_ends(db: Db, offer_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
    """``offer id -> cursor`` of each offer's last stage change (offers with none missing)."""
    ends: dict[uuid.UUID, int] = {}
    for chunk in id_lists.chunks(offer_ids):
        rows = await db.execute(
            select(OfferEvent.offer_id, func.max(OfferEvent.seq))
            .where(OfferEvent.offer_id.in_(chunk))
            .group_by(OfferEvent.offer_id)
        )
        for row in rows.all():
            offer_id, seq = tuple(row)  # the two selected columns
            ends[offer_id] = int(seq or 0)
    return ends
