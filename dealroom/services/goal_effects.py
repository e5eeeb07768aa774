"""What a goal's status flip does, in the transaction that records it (seed 000 "Goals are
structured envelopes"): ``new-offer`` met queues Offer-Gen, abandoned closes the live offer.
One place, so a persona's ruling and an operator's override fire the same effects."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from dealroom.domain import memory as memdoc
from dealroom.domain import offers as offer_rules
from dealroom.domain.seats import RoomKind
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun
from dealroom.services.offers import close_live_offer, queue_offer_gen


@dataclass
class GoalEffects:
    runs: list[AgentRun] = field(default_factory=list)
    published: list[tuple[str, str]] = field(default_factory=list)


async def fire(
    db: Db,
    effects: GoalEffects,
    *,
    room_id: uuid.UUID,
    kind: RoomKind,
    host_pane: uuid.UUID | None,
    key: str,
    status: str,
    now: datetime,
    actor: str,
) -> None:
    """The effect of one flip of ``key`` to ``status`` (the caller has seen it flip)."""
    if key != offer_rules.NEW_OFFER or kind is not RoomKind.DEAL:
        return
    if status == memdoc.GoalStatus.MET and host_pane is not None:
        effects.runs.append(queue_offer_gen(room_id, host_pane, now))
    elif status == memdoc.GoalStatus.ABANDONED:
        effects.published += await close_live_offer(db, room_id, now=now, actor=actor)
