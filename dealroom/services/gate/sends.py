"""Sends that code decides (the Guard's repairs, a goal's notify effect).

They reach another pane exactly like a persona's send: through the outbound choke point
(``services/gate/effects.py``), so the guest gate holds them for an unclaimed guest and the pair
cap counts them. The private-value firewall screens a send in the choke point when the
caller sets ``Outbound.screen``: the Guard does (``held_sends.screener``, so a match from
the host's pane is held for the principal like a persona's send); a goal's notice is fixed
words from ``domain/goal_notices.py`` and goes only to the host's pane, so there is nothing
to screen. A code send is marked with its ``origin`` and delivered at the chain's bound, so
the recipient's agent cannot send on from it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun
from dealroom.services.gate import effects


async def code_send(
    db: Db,
    outbound: effects.Outbound,
    *,
    source_id: uuid.UUID,
    target_id: uuid.UUID,
    position: int,
    substance: str,
    origin: str,
    settings: Settings,
    open_questions: Sequence[str] = (),
) -> AgentRun | None:
    """Emit the send; returns the delivery run queued for it now (None when it was held for a
    guest's sign-in, held by the firewall for the principal, or capped)."""
    queued = len(outbound.runs)
    await effects.emit(
        db,
        outbound,
        effects.PaneSend(
            from_participant_id=source_id,
            to_participant_id=target_id,
            substance=substance,
            payload={"open_questions": list(open_questions), "origin": origin},
            position=position,
            chain_depth=settings.max_chain_depth,
        ),
    )
    return next(
        (r for r in outbound.runs[queued:] if r.trigger_dispatch_id is not None),
        None,
    )
