"""Where many followed streams end, read at once (the process heartbeat,
``services/heartbeats.py``): a pane's last stored event is its newest message or its room's
newest stage change; an offer's is its newest stage change. One statement per chunk."""

from __future__ import annotations

import uuid
from collections.abc import Collection

from sqlalchemy import func, select

from dealroom.persistence.db import Db
from dealroom.persistence.models import OfferEvent, Participant, Room

CHUNK = 500


async def pane_ends(db: Db, participant_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
    """``participant id -> cursor`` of each pane's last stored event; a pane that is gone is
    missing."""
    ends: dict[uuid.UUID, int] = {}
    ids = list(participant_ids)
    for start in range(0, len(ids), CHUNK):
        rows = await db.execute(
            select(Participant.id, Participant.pane_seq, Room.stage_seq)
            .join(Room, Room.id == Participant.room_id)
            .where(Participant.id.in_(ids[start : start + CHUNK]))
        )
        for row in rows.all():
            participant_id, pane_seq, stage_seq = tuple(row)  # the three selected columns
            ends[participant_id] = max(int(pane_seq), int(stage_seq))
    return ends


async def offer_ends(db: Db, offer_ids: Collection[uuid.UUID]) -> dict[uuid.UUID, int]:
    """``offer id -> cursor`` of each offer's last stage change (offers with none missing)."""
    ends: dict[uuid.UUID, int] = {}
    ids = list(offer_ids)
    for start in range(0, len(ids), CHUNK):
        rows = await db.execute(
            select(OfferEvent.offer_id, func.max(OfferEvent.seq))
            .where(OfferEvent.offer_id.in_(ids[start : start + CHUNK]))
            .group_by(OfferEvent.offer_id)
        )
        for row in rows.all():
            offer_id, seq = tuple(row)  # the two selected columns
            ends[offer_id] = int(seq or 0)
    return ends
