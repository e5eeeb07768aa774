"""The login gate's line: when the gate goes up in a guest's room (the first held effect, or
the guest message cap), the guest's own agent says — in its words, against the pane as it
stands — that it needs a sign-in (seed 000: "I was just about to share an update — sign in").

A ``gate`` run in the visitor's pane. It speaks after the pane's persona runs (the reply the
gate follows), and not at all once the room is claimed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import assert_never

from dealroom.agents.models.base import AgentName
from dealroom.agents.persona import PersonaOutput, Trigger
from dealroom.domain.seats import AuthorKind
from dealroom.jobs.persona import PersonaTurn
from dealroom.persistence.effects import PendingEffectRepository
from dealroom.persistence.models import Participant
from dealroom.persistence.runs import RunRepository
from dealroom.services.gate import effects
from dealroom.services.turns.context import RunSnapshot, load
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus, new_run
from dealroom.services.turns.runs import fence, system_line
from dealroom.services.unit_of_work import reading

OUTSTANDING = ("queued", "running")


def waiting_phrase(kinds: list[tuple[str, bool]], host: str) -> str:
    """What waits, said by kind only (never its substance: a held ruling was written on the
    host's side). ``kinds`` is (kind, from the visitor's pane)."""
    phrases: list[str] = []
    for kind, from_visitor in kinds:
        match effects.EffectKind(kind):
            case effects.EffectKind.PANE_SEND:
                phrase = f"a note for {host}" if from_visitor else f"news from {host}"
            case effects.EffectKind.OFFER_MINT:
                phrase = "the written offer"
            case effects.EffectKind.OFFER_CLOSE:
                phrase = "closing the written offer"
            case effects.EffectKind.RELEASE:
                # The host's yes to a send the firewall held on the host's side: it goes
                # out to this pane once the guest signs in.
                phrase = f"news from {host}"
            case unknown:
                assert_never(unknown)
        if phrase not in phrases:
            phrases.append(phrase)
    return "; ".join(phrases) or "an update"


class GateTurn(PersonaTurn):
    async def __call__(self, run: RunSnapshot) -> None:
        async with reading(self.deps.sessionmaker) as db:
            busy = await RunRepository(db).pane_has(
                run.participant_id, AgentName.PERSONA.value, statuses=OUTSTANDING
            )
            ctx = None if busy else await load(db, run)
            visitor = await db.get(Participant, run.participant_id)
            rows = await PendingEffectRepository(db).kinds_in(run.room_id, effects.HELD)
            held = [
                (kind, (payload or {}).get("from") == str(run.participant_id))
                for kind, payload in rows
            ]
        if busy:
            await self._later(run)  # speak after the reply this gate follows
            return
        if ctx is None or visitor is None or visitor.account_id is not None:
            await self._finish_orphan(run)  # claimed meanwhile: nothing to ask for
            return
        site = CallSite(ctx.room_id, run.id, rows=[])
        try:
            trigger = Trigger(
                kind="gate",
                body=waiting_phrase(held, ctx.represents.name),
                reason=effects.GateReason.HELD.value if held else effects.GateReason.CAP.value,
            )
            request = await self.compose(run, ctx, site, trigger)
            generation = await self.deps.ledger.generate(request, site)
            output = generation.output
            assert isinstance(output, PersonaOutput)
            await self._store(run, output.reply, site)
        except Exception:
            await self.deps.ledger.keep(site)
            raise

    async def _later(self, run: RunSnapshot) -> None:
        """Finish this run and queue the same gate a moment later (a fresh run, so a stale
        worker's claim can never pass for it)."""
        async with self.deps.unit() as uow:
            db = uow.db
            row = await fence(db, run)
            now = self.deps.clock.now()
            row.status, row.finished_at, row.no_op = RunStatus.DONE.value, now, True
            later = new_run(
                room_id=run.room_id,
                participant_id=run.participant_id,
                agent=AgentName.GATE,
                now=now,
            )
            later.not_before = now + timedelta(seconds=self.deps.settings.replay_poll_seconds)
            await db.add(later)

    async def _store(self, run: RunSnapshot, text: str, site: CallSite) -> None:
        async with self.deps.unit() as uow:
            db = uow.db
            row = await fence(db, run)
            line = await system_line(
                db,
                self.deps.clock,
                run,
                text.strip() or "…",
                key=f"run:{run.id}",
                author=AuthorKind.AGENT,
            )
            row.status, row.finished_at = RunStatus.DONE.value, self.deps.clock.now()
            await db.add(*site.rows)
            if line is not None:
                uow.publish(line)  # sent once the line commits, never before
        site.rows.clear()  # stored: nothing left for the failure path to keep
