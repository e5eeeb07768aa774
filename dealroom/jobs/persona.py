"""A persona run (ARCHITECTURE "The turn", steps 3-5): load the pane, compose the request
(memory by visibility, narrowed by the context filter), stream the reply
(``persona_stream``), then apply its structured output in one transaction: the reply, the
run's fenced finish, goal rulings, its plan and the delivery it made. What the turn sends out
of the pane (goal flips' effects, its sends) is ``persona_outbound``; the principal's release
of held sends is ``held_sends``."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from typing import Any

import structlog

from dealroom.agents import context_filter, persona
from dealroom.agents.links import LinkQuote
from dealroom.agents.models.base import AgentName, ModelRequest, parse_output
from dealroom.agents.persona import PersonaInput, PersonaOutput, Trigger
from dealroom.domain import (
    double_texts,
    instructions,
    memory_records,
    memory_sections,
    pane_words,
    stage_notices,
    visibility,
)
from dealroom.domain import memory as memdoc
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import (
    GUEST_NAME,
    AuthorKind,
    RoomKind,
    Seat,
    may_send,
    on_host_side,
    side_of,
)
from dealroom.domain.sessions import SessionRule
from dealroom.jobs import persona_outbound, persona_stream, watches
from dealroom.jobs.perceive import Perception
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.models import Dispatch
from dealroom.persistence.runs import RunRepository
from dealroom.services.gate import effects, held_sends
from dealroom.services.live.events import (
    AgentTypingEvent,
    MessageAddedEvent,
    MessageView,
    pane_channel,
)
from dealroom.services.notify import triggers as notify_triggers
from dealroom.services.rooms import pane_log
from dealroom.services.rooms.pane_log import NotStored, Stored
from dealroom.services.turns.context import Prepared, RunSnapshot, TurnContext, load
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, StaleRun, model_for
from dealroom.services.unit_of_work import reading

log = structlog.get_logger(__name__)

ALWAYS_KEEP = ("goals", "offers", "rulings", "pendingPrincipalDecisions", "host.public")
"""Small, code-written parts every persona keeps; the free-form branches are what the filter
narrows."""


class PersonaTurn:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps
        self.perception = Perception(deps)

    async def prepare(self, db: Db, run: RunSnapshot) -> RunSnapshot:
        """The turn's context, read in the claim's transaction (``TurnRunner.register``): the
        pane, its participants, the host's services, the session and the recent dispatches.
        Not for a run whose room may merge durable memory first or whose pane an operator
        holds: the merge changes what it would read, and a silenced run reads nothing."""
        head = run.loaded
        if head is None or head.merge_maybe_due or head.taken_over:
            return run
        ctx = await load(db, run, claimed=True)
        return dataclasses.replace(run, loaded=dataclasses.replace(head, prepared=Prepared(ctx)))

    async def __call__(self, run: RunSnapshot) -> None:
        prepared = run.loaded.prepared if run.loaded is not None else None
        if prepared is not None:
            ctx = prepared.context
        else:
            async with reading(self.deps.sessionmaker) as db:
                ctx = await load(db, run, claimed=True)
        if ctx is None:
            await self._finish_orphan(run)
            return
        site = CallSite(ctx.room_id, run.id, rows=[])
        try:
            await self._turn(run, ctx, site)
        except Exception:
            await self.deps.ledger.keep(site)  # calls that succeeded were billed all the same
            raise

    async def _turn(self, run: RunSnapshot, ctx: TurnContext, site: CallSite) -> None:
        if await held_sends.confirm(self.deps, run, ctx):
            return  # the principal's yes released held sends: no model
        # Perception before the persona: the pane's links, the new message's read now.
        links = await self.perception.links(run, ctx)
        request = await self.compose(run, ctx, site, None, links=links)
        message_id = uuid.uuid4()
        channel = pane_channel(ctx.room_id, ctx.pane_key)
        await persona_stream.ephemeral(
            self.deps.broker,
            channel,
            AgentTypingEvent(ctx.last_seq, message_id, AgentName.PERSONA.value).encode(),
        )
        text = await persona_stream.stream(
            self.deps.ledger, self.deps.broker, request, site, channel, message_id, ctx.last_seq
        )
        output = parse_output(request, text)
        assert isinstance(output, PersonaOutput)
        await self._apply(run, ctx, output, message_id, site)

    # --- the request ----------------------------------------------------------------------

    async def request(self, run: RunSnapshot, ctx: TurnContext, site: CallSite) -> ModelRequest:
        """The persona's request: memory filtered by visibility for this pane (seed 002),
        then narrowed by the context filter when large; its own plan; host facts; the
        current session; the tail directives."""
        return await self.compose(run, ctx, site, None)

    async def compose(
        self,
        run: RunSnapshot,
        ctx: TurnContext,
        site: CallSite,
        trigger: Trigger | None,
        *,
        links: Sequence[LinkQuote] = (),
    ) -> ModelRequest:
        """:meth:`request` with ``trigger`` overriding the run's own (the login gate's line);
        such a turn may send nothing."""
        pane = ctx.pane_key
        visible = visibility.visible_memory(ctx.memory, pane=pane, room_kind=ctx.kind)
        if len(json.dumps(visible)) > self.deps.settings.filter_threshold_chars:
            visible = await self._filter(ctx, visible, site)
        send_to = [
            p.key
            for p in ctx.participants
            if may_send(pane, p.key)
            and run.chain_depth < self.deps.settings.max_chain_depth
            and trigger is None
            and ctx.trigger_event is None  # a stage notice tells both sides itself
        ]
        people = (
            {p.key: ctx.names.get(p.key, GUEST_NAME) for p in ctx.participants if p.key != pane}
            if on_host_side(pane) and len(ctx.participants) > 2
            else {}
        )
        inputs = PersonaInput(
            room_kind=ctx.kind.value,
            pane=pane,
            represents=ctx.represents,
            speaking_with=ctx.speaking_with,
            memory=visible,
            plan=memory_records.own_plan(ctx.memory, pane),
            account_facts=ctx.host_facts,
            session=ctx.session,
            trigger=trigger or _trigger(ctx, self._later_posts(run, ctx)),
            send_to=send_to,
            deliveries=ctx.deliveries_for(pane),
            stage=ctx.stage,
            links=links,
            guest=is_guest_pane(ctx),
            locale=ctx.pane_locale,
            people=people,
        )
        return persona.build(inputs, model=model_for(self.deps, AgentName.PERSONA, ctx.model_picks))

    def _later_posts(self, run: RunSnapshot, ctx: TurnContext) -> list[int]:
        """The session lines of the later posts this run answers with its own (DT1)."""
        trigger = str(run.trigger_message_id) if run.trigger_message_id else None
        authors = [line.author for line in ctx.session]
        if len(ctx.session_ids) != len(authors):
            return []
        return double_texts.later_posts(
            authors, ctx.session_ids, trigger, self.deps.settings.double_text
        )

    async def _filter(
        self, ctx: TurnContext, visible: dict[str, Any], site: CallSite
    ) -> dict[str, Any]:
        """Generous selection of existing sections; it sees only the visible document."""
        request = context_filter.build(
            context_filter.FilterInput(
                pane=ctx.pane_key,
                memory=visible,
                paths=memory_sections.section_paths(visible),
                session=ctx.session,
            ),
            model=model_for(self.deps, AgentName.CONTEXT_FILTER, ctx.model_picks),
            visitor_facing=visibility.is_visitor_facing(ctx.pane_key),
        )
        generation = await self.deps.ledger.generate(request, site)
        output = generation.output
        assert isinstance(output, context_filter.FilterOutput)
        return memory_sections.select_paths(
            visible, output.paths, always=(*ALWAYS_KEEP, ctx.pane_key)
        )

    # --- applying the output ----------------------------------------------------------------

    async def _apply(
        self,
        run: RunSnapshot,
        ctx: TurnContext,
        output: PersonaOutput,
        message_id: uuid.UUID,
        site: CallSite,
    ) -> None:
        deps = self.deps
        now = deps.clock.now()
        async with deps.unit() as uow:
            db = uow.db
            runs = RunRepository(db)
            dispatch = ctx.trigger_dispatch
            unprompted = dispatch is not None or ctx.trigger_event is not None
            # The reply first, through the pane log: the room's row lock and sequence, the
            # pane's tail, the insert and the room's memory as it is now (read under that
            # lock) in one append (lock order: room, pane, then the run below). Keyed by the
            # run: a re-run of an applied run stores no second reply.
            done = await pane_log.append(
                db,
                ctx.pane,
                author_kind=AuthorKind.AGENT.value,
                body=pane_words.in_people_words(output.reply) or "…",  # PW2
                client_message_id=f"run:{run.id}",
                now=now,
                session=SessionRule.OPENS if unprompted else SessionRule.CONTINUES,
                session_pause=deps.settings.session_pause,
                message_id=message_id,
                relayed_dispatch_id=dispatch.id if dispatch else None,
                reading_memory=True,
            )
            # The stale-run check and the run's own write, at the commit with the unit's other
            # deferred writes: another worker owns the run, StaleRun there, nothing is kept.
            runs.finish_later(
                run.id,
                run.attempts,
                now,
                reply_message_id=_reply_id(done),
                stale=lambda: StaleRun(str(run.id)),
            )
            if isinstance(done, NotStored):
                # A worker that vanished after its commit: done, nothing applied twice (the
                # reply stays the one already stored).
                return
            assert done.memory is not None  # asked for
            if later := self._later_posts(run, ctx):
                # DT1: the later posts this reply read are answered by it; their own runs
                # (queued behind this one: one persona per pane) end here, in its commit.
                await runs.absorb(
                    ctx.pane.id,
                    AgentName.PERSONA.value,
                    [uuid.UUID(ctx.session_ids[i]) for i in later],
                    now,
                    reply_message_id=message_id,
                )
            memory = done.memory
            rows: list[object] = []  # inserted together, in one flush
            if not guard_push(dispatch):
                watches.arm(db, ctx.room_id, now)  # QW1; the Guard's push never re-arms
            view = MessageView.from_row(done.row, ctx.pane_key)
            uow.publish(
                (
                    pane_channel(ctx.room_id, ctx.pane_key),
                    MessageAddedEvent(cursor=done.row.seq, prev=done.prev, message=view).encode(),
                )
            )
            before = memory_records.goal_statuses(memory)
            # A plan is the model's own note: an overlong one is cut, never a failed turn.
            plan = output.plan[: memdoc.MAX_VALUE_CHARS]
            document = memory_records.set_plan(memory, ctx.pane_key, plan)
            document, _rejected = memory_records.rule_goals(
                document, [(g.key, g.status, g.reason) for g in output.goals], by=ctx.pane_key
            )
            # Every outbound effect of the turn goes through the choke point (held for a guest).
            outbound = effects.Outbound(ctx.room_id, run.id, now, deps.settings)
            # The reply already asked the guest to sign in, naming what waits: the gate needs
            # no second line (one message, seed 000).
            outbound.gate_said = is_guest_pane(ctx) and pane_words.asks_sign_in(output.reply)
            await persona_outbound.goal_flips(
                db, deps.settings, run, ctx, before, document, now, outbound, rows
            )
            delivered_now: Dispatch | None = None
            if dispatch is not None:
                live = await DispatchRepository(db).by_id(dispatch.id)
                if live is not None and live.status != "delivered":
                    delivered_now = live
                    live.status = "delivered"
                    live.delivered_message_id = message_id
                    live.delivered_at = now
                    ruling = (live.payload or {}).get("ruling")
                    if isinstance(ruling, dict):
                        # Only now, with the delivery in the record, may memory say it crossed.
                        document = memory_records.record_ruling(
                            document, ctx.pane_key, ruling, str(live.id)
                        )
                        # PI2: a ruling on new terms lapses the instructions that covered others.
                        document = instructions.lapse(document)
            await persona_outbound.pane_sends(db, deps.settings, run, ctx, output, outbound)
            uow.publish(*outbound.published)
            names = {
                d.to_participant_id: ctx.names.get(ctx.key_of(d.to_participant_id), "them")
                for d, _reveals in outbound.screened
            }
            held = held_sends.held_of(outbound, names)
            uow.publish(*await held_sends.notify(db, ctx.room_id, ctx.pane, run.id, held, now))
            # People outside the room: a decision waiting on the principal, or an answer the
            # waiting side hears (no statement when the turn concerns neither).
            uow.publish(
                *await notify_triggers.after_turn(
                    db,
                    room_id=ctx.room_id,
                    pane_key=ctx.pane_key,
                    keys={p.id: p.key for p in ctx.participants},
                    delivered=delivered_now,
                    held=[d for d, _reveals in outbound.screened],
                    replied_to={r.participant_id for r in outbound.runs}
                    | {d.to_participant_id for d, _reveals in outbound.screened},
                    room_held=ctx.dispatches,
                    now=now,
                    band_percent=deps.settings.firewall_band_percent,
                )
            )
            await db.add(*rows, *outbound.runs)
            # The closing writes (the watch's re-arm above, the memory, the ledger's row) go
            # at the commit, in one statement on PostgreSQL (Db.defer): nothing reads them back.
            if document != memory:
                runs.write_memory_later(ctx.room_id, document, now)
            await db.insert(site.rows, later=True)
            if outbound.runs:
                uow.announce()
        site.rows.clear()  # stored: nothing left for the failure path to keep

    async def _finish_orphan(self, run: RunSnapshot) -> None:
        async with self.deps.unit() as uow:
            row = await RunRepository(uow.db).by_id(run.id, lock=True)
            if row is not None:
                row.status, row.finished_at = RunStatus.DONE.value, self.deps.clock.now()
                row.no_op = True


GUARD_ORIGIN = "guard"
"""``dispatches.payload.origin`` of a send the Guard made."""


def is_guest_pane(ctx: TurnContext) -> bool:
    """A deal room's visitor pane whose seat no account holds: what it sends waits on the
    login gate (a demo room's visitor seat is its host's, so it is never one)."""
    return (
        ctx.kind is RoomKind.DEAL and not on_host_side(ctx.pane_key) and ctx.pane.account_id is None
    )


def guard_push(dispatch: Dispatch | None) -> bool:
    return dispatch is not None and (dispatch.payload or {}).get("origin") == GUARD_ORIGIN


def _trigger(ctx: TurnContext, later: list[int]) -> Trigger:
    event = ctx.trigger_event
    if event is not None:
        told = stage_notices.notices(Stage(event.stage), event.version, event.actor)
        return Trigger(kind="stage", body=told.get(side_of(ctx.pane_key) or Seat.VISITOR, ""))
    dispatch = ctx.trigger_dispatch
    if dispatch is not None:
        payload = dispatch.payload or {}
        ruling = payload.get("ruling")
        origin = payload.get("origin")
        return Trigger(
            kind="delivery",
            body=dispatch.substance,
            sender=ctx.key_of(dispatch.from_participant_id),
            ruling=ruling if isinstance(ruling, dict) else None,
            open_questions=tuple(payload.get("open_questions") or ()),
            held=payload.get("held") if isinstance(payload.get("held"), dict) else None,
            origin=origin if isinstance(origin, str) else None,
        )
    body = ctx.trigger_message.body if ctx.trigger_message is not None else ""
    # DT2: a run answering a burst reads it as one message.
    body = double_texts.joined([body, *(ctx.session[i].body for i in later)])
    return Trigger(kind="message", body=body)


def _reply_id(done: Stored | NotStored) -> uuid.UUID | None:
    """The run's reply: the one just stored, or the one a first, committed attempt stored."""
    if isinstance(done, Stored):
        return done.row.id
    return done.existing.id if done.existing is not None else None
