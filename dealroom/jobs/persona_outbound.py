"""What a persona turn sends out of its pane, inside the apply's transaction (ARCHITECTURE
"The turn", step 5): each goal flip's ``goal_events`` row, its notify lines (GN1, GN2) and its
effect (Offer-Gen, closing the offer), and the turn's own sends — a ruling rendered by code
(C1-C4), free text screened for private values (F1-F6, C5). Everything goes out through the
choke point (``effects.Outbound``), which holds it for a guest."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.agents.persona import PersonaOutput
from dealroom.config import Settings
from dealroom.domain import crossing, goal_notices, memory_records, open_questions
from dealroom.domain import memory as memdoc
from dealroom.domain.seats import Seat, may_send, on_host_side, side_of
from dealroom.persistence.db import Db
from dealroom.persistence.models import GoalEvent
from dealroom.services.gate import effects, goal_effects, held_sends, sends
from dealroom.services.turns.context import RunSnapshot, TurnContext

log = structlog.get_logger(__name__)

GOAL_ORIGIN = "goal"
"""``dispatches.payload.origin`` of a goal flip's notify effect."""
NOTIFY_POSITION = 1000
"""Dispatch positions of notify effects start here, after any of the turn's own sends."""


async def goal_flips(
    db: Db,
    settings: Settings,
    run: RunSnapshot,
    ctx: TurnContext,
    before: dict[str, str],
    document: dict[str, Any],
    now: datetime,
    outbound: effects.Outbound,
    rows: list[object],
) -> None:
    """Every flip of a goal's status is a ``goal_events`` row; code fires the effect of a
    flip once, here, in the transaction that records it (seed 000 "Goals are structured
    envelopes"): ``new-offer`` met mints the written offer (Offer-Gen), abandoned closes
    the live one. Both go out through the choke point (held for a guest)."""
    after = memory_records.goal_statuses(document)
    for key, status in after.items():
        if before.get(key) == status:
            continue
        entry = document.get(memdoc.GOALS, {}).get(key, {})
        rows.append(
            GoalEvent(
                id=uuid.uuid4(),
                room_id=ctx.room_id,
                goal_key=key,
                from_status=before.get(key),
                to_status=status,
                by_pane=ctx.pane_key,
                agent=AgentName.PERSONA.value,
                run_id=run.id,
                reason=str(entry.get("reason", ""))[:2000],
                created_at=now,
            )
        )
        await _notify(db, settings, run, ctx, key, status, outbound)
        host = ctx.participant(Seat.HOST.value)
        await goal_effects.fire(
            db,
            outbound,
            kind=ctx.kind,
            host_pane=host.id if host is not None else None,
            key=key,
            status=status,
            actor=AgentName.PERSONA.value,
        )


async def _notify(
    db: Db,
    settings: Settings,
    run: RunSnapshot,
    ctx: TurnContext,
    goal: str,
    status: str,
    outbound: effects.Outbound,
) -> None:
    """A flip's notify effect (GN1, GN2): code's text, through the choke point like any
    send; the delivery does not chain on."""
    told = goal_notices.notices(goal, status, ruled_in=ctx.pane_key)
    # Every pane of a side the flip concerns hears it (a teammate's too), never the pane
    # that ruled.
    targets = [
        (told[side], target)
        for target in ctx.participants
        if (side := side_of(target.key)) in told and target.id != ctx.pane.id
    ]
    for position, (text, target) in enumerate(targets, start=NOTIFY_POSITION):
        await sends.code_send(
            db,
            outbound,
            source_id=ctx.pane.id,
            target_id=target.id,
            position=position,
            substance=text,
            origin=GOAL_ORIGIN,
            settings=settings,
        )


async def pane_sends(
    db: Db,
    settings: Settings,
    run: RunSnapshot,
    ctx: TurnContext,
    output: PersonaOutput,
    outbound: effects.Outbound,
) -> None:
    """Each send goes out through the choke point: a dispatch row and a persona run in the
    recipient's pane (seed 000 "Agents reach out…"), or a held effect for a guest. The
    chain is bounded by ``max_chain_depth``."""
    if run.chain_depth >= settings.max_chain_depth or ctx.trigger_event is not None:
        if output.sends:
            log.info("sends_dropped_chain_bound", run_id=str(run.id), count=len(output.sends))
        return
    for position, send in enumerate(output.sends):
        target = ctx.participant(send.to)
        if target is None or not may_send(ctx.pane_key, target.key):
            continue
        substance = send.substance
        payload: dict[str, Any] = (
            open_questions.crossing(send.open_questions)
            if on_host_side(ctx.pane_key)
            else {"open_questions": list(send.open_questions)}
        )
        ruling = (
            crossing.safe_ruling(send.ruling.model_dump())
            if send.ruling is not None and on_host_side(ctx.pane_key)
            else None  # only the host side rules on a proposal
        )
        if ruling is None and on_host_side(ctx.pane_key) and ctx.trigger_dispatch is not None:
            # C3: woken by the other side's news, the host side may answer it only with a
            # ruling. Its free text is written with the private rules in view, and no
            # principal asked for it to be passed on, so it does not cross.
            log.info("host_free_text_send_dropped", run_id=str(run.id), to=send.to)
            continue
        if ruling is not None:
            # C1/C2: only the ruling crosses. Its wording is rendered by code from fields
            # of a fixed shape; the host-side model's own text (written with the private
            # rules in view) stays on the host's side. C4: a deliverable the visitor's
            # side never named is a covert channel, and is dropped.
            ruling = await held_sends.known_ruling(db, ctx, target, ruling)
            substance = crossing.render(ruling, ctx.represents.name)
            # OQ1/OQ2: its open questions cross as the offer's terms (``payload`` above).
            payload = {"ruling": ruling.to_json(), **payload}
        # F1-F6, C5: a host→visitor send that would reveal a private value is held for the
        # principal by the choke point
        reveals = (
            held_sends.screen(
                ctx.memory,
                substance,
                payload,
                ctx.dispatches,
                band_percent=settings.firewall_band_percent,
                principal_said=held_sends.principal_words(ctx),
            )
            if held_sends.faces_visitor(ctx, target)
            else []
        )
        await effects.emit(
            db,
            outbound,
            effects.PaneSend(
                from_participant_id=ctx.pane.id,
                to_participant_id=target.id,
                substance=substance,
                payload=payload,
                position=position,
                reveals=tuple(reveals),
                chain_depth=run.chain_depth + 1,
            ),
        )
