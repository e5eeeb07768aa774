"""What a goal's status flip does, in the transaction that records it (seed 000 "Goals are
structured envelopes"): ``new-offer`` met mints the written offer (Offer-Gen), abandoned closes the
live one. One place, so a persona's ruling and an operator's override fire the same effects —
through the outbound choke point, so a guest's room holds them."""

from __future__ import annotations

import uuid

from dealroom.domain import memory as memdoc
from dealroom.domain import offers as offer_rules
from dealroom.domain.seats import RoomKind
from dealroom.persistence.db import Db
from dealroom.services.gate import effects


async def fire(
    db: Db,
    outbound: effects.Outbound,
    *,
    kind: RoomKind,
    host_pane: uuid.UUID | None,
    key: str,
    status: str,
    actor: str,
) -> None:
    """The effect of one flip of ``key`` to ``status`` (the caller has seen it flip)."""
    if key != offer_rules.NEW_OFFER or kind is not RoomKind.DEAL:
        return
    if status == memdoc.GoalStatus.MET and host_pane is not None:
        await effects.emit(db, outbound, effects.OfferMint(host_pane))
    elif status == memdoc.GoalStatus.ABANDONED:
        await effects.emit(db, outbound, effects.OfferClose(actor))
