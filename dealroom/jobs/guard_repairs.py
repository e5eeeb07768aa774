"""How the Guard's verdict is applied (G2-G5 in ``jobs/guard.py``): each repair
through an existing write path, each refusal and finding recorded for the verdict row."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from dealroom.agents.guard import GuardOutput
from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.domain import (
    leaks,
    memory_records,
    offer_stage,
    open_questions,
    provenance,
    visibility,
)
from dealroom.domain import memory as memdoc
from dealroom.domain.seats import Seat, may_send, on_host_side
from dealroom.jobs.persona import GUARD_ORIGIN
from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch, Flag, GoalEvent, Participant
from dealroom.services.gate import effects, held_sends, sends
from dealroom.services.turns.context import RunSnapshot

GUARD_BY = "guard"
"""``goals.<key>.by`` and ``goal_events.by_pane`` of a goal the Guard reopened."""


CORRECTION_WORDS: Final = (
    "To correct an earlier message: it is not booked yet, not written, not paid. "
    + offer_stage.vocabulary()
)
"""G6: the words a Guard correction in a visitor's pane may use besides that side's own lines:
the stage vocabulary and how a correction opens. It is written with the host's private branch
in view, and no principal can release it, so it says nothing the visitor's side has not seen
(held_sends C6 for free text, memory M17 for writes)."""
UNSHOWN: Final = "words the visitor's side has not been shown"


class Verdict:
    HEALTHY = "healthy"
    REPAIRED = "repaired"
    UNREPAIRED = "unrepaired"


@dataclass
class Outcome:
    findings: list[str] = field(default_factory=list)
    edits: list[dict[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.refused or self.flags or (self.findings and not self.edits):
            return Verdict.UNREPAIRED
        return Verdict.REPAIRED if self.edits else Verdict.HEALTHY


class GuardRepairs:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def reopen_goals(
        self,
        db: Db,
        run: RunSnapshot,
        output: GuardOutput,
        document: dict[str, Any],
        outcome: Outcome,
        now: datetime,
    ) -> dict[str, Any]:
        """G2: a goal goes back to open, and only from a status it holds."""
        statuses = memory_records.goal_statuses(document)
        for fix in output.goals:
            current = statuses.get(fix.key)
            if current is None or current == memdoc.GoalStatus.OPEN:
                outcome.refused.append(f"goal {fix.key}: nothing to reopen")
                continue
            document, skipped = memory_records.rule_goals(
                document, [(fix.key, memdoc.GoalStatus.OPEN.value, fix.reason)], by=GUARD_BY
            )
            if skipped:
                outcome.refused.append(f"goal {fix.key}: not a goal key")
                continue
            await db.add(
                GoalEvent(
                    id=uuid.uuid4(),
                    room_id=run.room_id,
                    goal_key=fix.key,
                    from_status=current,
                    to_status=memdoc.GoalStatus.OPEN.value,
                    by_pane=GUARD_BY,
                    agent=AgentName.GUARD.value,
                    run_id=run.id,
                    reason=fix.reason[:2000],
                    created_at=now,
                )
            )
            statuses[fix.key] = memdoc.GoalStatus.OPEN.value
            outcome.edits.append({"kind": "goal", "target": fix.key, "detail": f"{current} → open"})
        return document

    def fix_memory(
        self,
        document: dict[str, Any],
        participants: Sequence[Participant],
        output: GuardOutput,
        outcome: Outcome,
        visible: Sequence[provenance.Said] = (),
    ) -> dict[str, Any]:
        """G2: targeted changes under the participants' branches and ``deal`` (never the
        reserved parts), each stating only what a visitor-facing pane's lines (``visible``)
        already show (memory M17), and stale plans cleared."""
        # A host's teammate's branch is no participant's own to repair: it sits on the host's
        # side, where a figure would read as the buyer's (firewall F10).
        branches = (
            p.key for p in participants if p.key == Seat.HOST.value or not on_host_side(p.key)
        )
        allowed = (*branches, memdoc.DEAL)
        applied = memdoc.apply_changes(
            document,
            [memdoc.Change(memdoc.Op(c.op), c.path, c.value) for c in output.memory],
            allowed=allowed,
            sees_private=True,  # M14: the Guard read the host's private branch
            visible=visible,  # M17
            band_percent=self.settings.firewall_band_percent,
        )
        document = applied.document
        for change in applied.applied:
            outcome.edits.append({"kind": "memory", "target": change.path, "detail": change.op})
        for rejected in applied.rejected:
            outcome.refused.append(f"memory {rejected.change.path}: {rejected.reason}")
        for pane in output.clear_plans:
            if memory_records.own_plan(document, pane) and pane in allowed:
                document = memdoc.apply_changes(
                    document,
                    [memdoc.Change(memdoc.Op.REMOVE, f"{memdoc.PLANS}.{pane}")],
                    allowed=None,
                ).document
                outcome.edits.append({"kind": "plan", "target": pane, "detail": "cleared"})
        return document

    async def deliver(
        self,
        db: Db,
        run: RunSnapshot,
        participants: Sequence[Participant],
        output: GuardOutput,
        memory: dict[str, Any],
        held: Sequence[Dispatch],
        outcome: Outcome,
        outbound: effects.Outbound,
        visible: Sequence[str] = (),
    ) -> None:
        """G2, G3: owed deliveries through the choke point like any send (guest gate, pair
        cap, the firewall's screen); a delivery never chains on. A send from the host's pane
        that the screen matches is held for the principal (``outbound.screened``; the caller
        asks in the host's pane); a correction in a visitor-facing pane that it matches is
        refused, since no principal could release it."""
        by_key = {p.key: p for p in participants}
        for position, owed in enumerate(output.sends):
            source, target = by_key.get(owed.from_pane), by_key.get(owed.to)
            if source is None or target is None:
                outcome.refused.append(f"send {owed.from_pane} → {owed.to}: no such pane")
                continue
            if source.key != target.key and not may_send(source.key, target.key):
                # A correction stays in its pane; anything else crosses only where an agent's
                # send may (never between two people off the host's side).
                outcome.refused.append(f"send {source.key} → {target.key}: no such crossing")
                continue
            asked = (
                open_questions.crossing(owed.open_questions)
                if on_host_side(source.key)
                else {"open_questions": list(owed.open_questions)}
            )
            payload = {**asked, "origin": GUARD_ORIGIN}  # OQ1: the Guard's questions as typed
            if not on_host_side(source.key) and visibility.is_visitor_facing(target.key):
                reveals = [
                    r
                    for r in held_sends.screen(
                        memory,
                        owed.substance,
                        payload,
                        held,
                        band_percent=self.settings.firewall_band_percent,
                    )
                    if r != held_sends.FREE_TEXT
                ]
                if not provenance.states(f"{CORRECTION_WORDS} {' '.join(visible)}", owed.substance):
                    reveals.append(UNSHOWN)  # G6
                if reveals:  # G3
                    outcome.refused.append(
                        f"send {source.key} → {target.key}: refused, it would reveal "
                        f"{'; '.join(reveals)}"
                    )
                    continue
            waiting, screened = outbound.held, len(outbound.screened)
            delivery = await sends.code_send(
                db,
                outbound,
                source_id=source.id,
                target_id=target.id,
                position=position,
                substance=owed.substance,
                origin=GUARD_ORIGIN,
                settings=self.settings,
                open_questions=owed.open_questions,
            )
            if len(outbound.screened) > screened:
                detail = "held for the principal"  # G3: the host's pane asks
            elif delivery is not None:
                detail = str(delivery.trigger_dispatch_id)
            elif outbound.held > waiting:
                detail = "held"  # for a guest's sign-in
            else:
                outcome.refused.append(f"send {source.key} → {target.key}: capped")
                continue
            outcome.edits.append(
                {"kind": "send", "target": f"{source.key} → {target.key}", "detail": detail}
            )

    def flag_unruled(
        self,
        run: RunSnapshot,
        participants: Sequence[Participant],
        unruled: Sequence[Dispatch],
        memory: dict[str, Any],
        outcome: Outcome,
        now: datetime,
    ) -> None:
        """G4: a host-side free-text send that carried a private value is flagged to
        operators (it crossed already; the flag is the record, no agent reads it)."""
        host = next((p for p in participants if p.key == Seat.HOST.value), None)
        if host is None:
            return
        for dispatch in unruled:
            carried = leaks.private_values_in(
                dispatch.substance, memory, band_percent=self.settings.firewall_band_percent
            )
            if not carried:
                continue
            finding = (
                f"host-side send {dispatch.id} crossed without a ruling and carried "
                f"{', '.join(carried)}"
            )
            outcome.findings.append(finding)
            outcome.flags.append(
                Flag(
                    room_id=run.room_id,
                    participant_id=host.id,
                    run_id=run.id,
                    level="high",
                    evidence=f"guard: {finding}"[:2000],
                    created_at=now,
                )
            )
