"""One way a message reaches another participant's pane: a ``dispatches`` row and a persona
run in the recipient's pane that delivers it in that agent's own voice (seed 000 "Agents
reach out to each other's participants").

Every sender goes through ``send`` — a persona's ``sends``, the Guard's repairs, a goal's
notify effect — so whatever gates an outbound send (the rate cap here; the guest gate and the
firewall as they land) covers all of them in one place.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Dispatch
from dealroom.persistence.runs import DispatchRepository
from dealroom.services.turns import new_run

log = structlog.get_logger(__name__)

CAP_WINDOW = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class Outbound:
    """A send, as its sender decided it."""

    room_id: uuid.UUID
    source_id: uuid.UUID
    """The sending pane's participant id."""
    target_id: uuid.UUID
    source_run_id: uuid.UUID
    position: int
    substance: str
    payload: dict[str, Any]
    chain_depth: int
    """The delivery's depth in the chain (the recipient's run gets the same)."""


async def send(
    db: Db, outbound: Outbound, *, now: datetime, per_pair_cap: int
) -> tuple[Dispatch, AgentRun | None]:
    """Record the dispatch and queue its delivery; a send over the pair's cap is recorded as
    ``capped`` and never delivered (no run)."""
    recent = await DispatchRepository(db).recent_between(
        outbound.source_id, outbound.target_id, now - CAP_WINDOW
    )
    capped = recent >= per_pair_cap
    dispatch = Dispatch(
        id=uuid.uuid4(),
        room_id=outbound.room_id,
        from_participant_id=outbound.source_id,
        to_participant_id=outbound.target_id,
        source_run_id=outbound.source_run_id,
        position=outbound.position,
        substance=outbound.substance,
        payload=outbound.payload,
        status="capped" if capped else "pending",
        chain_depth=outbound.chain_depth,
        created_at=now,
    )
    await db.add(dispatch)
    if capped:
        log.warning("send_capped", room_id=str(outbound.room_id), to=str(outbound.target_id))
        return dispatch, None
    run = new_run(
        room_id=outbound.room_id,
        participant_id=outbound.target_id,
        agent=AgentName.PERSONA,
        now=now,
        trigger_dispatch_id=dispatch.id,
        chain_depth=outbound.chain_depth,
    )
    return dispatch, run


async def code_send(
    db: Db,
    *,
    room_id: uuid.UUID,
    source_id: uuid.UUID,
    target_id: uuid.UUID,
    source_run_id: uuid.UUID,
    position: int,
    substance: str,
    origin: str,
    settings: Settings,
    now: datetime,
    open_questions: Sequence[str] = (),
) -> tuple[Dispatch, AgentRun | None]:
    """A send code decided (the Guard's repair, a goal's notice), marked with its ``origin``:
    delivered at the chain's bound, so the recipient's agent cannot send on from it."""
    return await send(
        db,
        Outbound(
            room_id=room_id,
            source_id=source_id,
            target_id=target_id,
            source_run_id=source_run_id,
            position=position,
            substance=substance,
            payload={"open_questions": list(open_questions), "origin": origin},
            chain_depth=settings.max_chain_depth,
        ),
        now=now,
        per_pair_cap=settings.sends_per_pair_per_10_minutes,
    )
