"""A persona run: compose the reply (streamed), then apply its structured output in one
transaction: the reply, goal rulings, its plan, the delivery it made, and its sends
(ARCHITECTURE "The turn", steps 3-5)."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime
from typing import Any

import structlog
from pydantic_core import from_json

from dealroom.agents import context_filter, persona
from dealroom.agents.models.base import AgentName, ModelRequest, parse_output
from dealroom.agents.persona import PersonaInput, PersonaOutput, Trigger
from dealroom.domain import crossing, goal_notices, stage_notices, visibility
from dealroom.domain import memory as memdoc
from dealroom.domain.offer_stage import Stage
from dealroom.domain.seats import AuthorKind, Seat
from dealroom.domain.sessions import SessionRule
from dealroom.jobs import watches
from dealroom.persistence.db import Db
from dealroom.persistence.models import Dispatch, GoalEvent
from dealroom.persistence.runs import DispatchRepository, RunRepository
from dealroom.services import effects, goal_effects, held_sends, pane_log, sends
from dealroom.services.events import (
    AgentTypingEvent,
    MessageAddedEvent,
    MessageDeltaEvent,
    MessageView,
    pane_channel,
)
from dealroom.services.ledger import CallSite
from dealroom.services.pane_log import NotStored, Stored
from dealroom.services.turn_context import RunSnapshot, TurnContext, load
from dealroom.services.turns import RunnerDeps, RunStatus

log = structlog.get_logger(__name__)

DELTA_INTERVAL = 0.05
"""Seconds between MessageDelta events: deltas are coalesced, not one per token."""

ALWAYS_KEEP = ("goals", "offers", "rulings", "pendingPrincipalDecisions", "host.public")
"""Small, code-written parts every persona keeps; the free-form branches are what the filter
narrows."""


class StaleRun(Exception):
    """The run was taken over (its lease expired and another worker claimed it)."""


def model_for(deps: RunnerDeps, agent: AgentName, picks: dict[str, Any]) -> str:
    """Model per agent from config, overridden per room (``rooms.model_picks``)."""
    configured = {
        AgentName.PERSONA: deps.settings.persona_model,
        AgentName.DISTIL: deps.settings.distil_model,
        AgentName.CONTEXT_FILTER: deps.settings.filter_model,
        AgentName.OFFER_GEN: deps.settings.offer_gen_model,
        AgentName.AGREEMENT: deps.settings.agreement_model,
        AgentName.GUARD: deps.settings.guard_model,
    }[agent]
    picked = picks.get(agent.value)
    return picked if isinstance(picked, str) and picked else configured


class PersonaTurn:
    def __init__(self, deps: RunnerDeps) -> None:
        self.deps = deps

    async def __call__(self, run: RunSnapshot) -> None:
        db = Db(self.deps.sessionmaker)
        try:
            ctx = await load(db, run, line_cap=self.deps.settings.session_line_cap, claimed=True)
        finally:
            await db.close()
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
        request = await self.request(run, ctx, site)
        message_id = uuid.uuid4()
        channel = pane_channel(ctx.room_id, Seat(ctx.pane_key))
        await self._ephemeral(
            channel, AgentTypingEvent(ctx.last_seq, message_id, AgentName.PERSONA.value).encode()
        )
        text = await self._stream(request, site, channel, message_id, ctx.last_seq)
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
        self, run: RunSnapshot, ctx: TurnContext, site: CallSite, trigger: Trigger | None
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
            if p.key != pane
            and run.chain_depth < self.deps.settings.max_chain_depth
            and trigger is None
            and ctx.trigger_event is None  # a stage notice tells both sides itself
        ]
        inputs = PersonaInput(
            room_kind=ctx.kind.value,
            pane=pane,
            represents=ctx.represents,
            speaking_with=ctx.speaking_with,
            memory=visible,
            plan=memdoc.own_plan(ctx.memory, pane),
            account_facts=ctx.host_facts,
            session=ctx.session,
            trigger=trigger or _trigger(ctx),
            send_to=send_to,
            deliveries=ctx.deliveries_for(pane),
            stage=ctx.stage,
        )
        return persona.build(inputs, model=model_for(self.deps, AgentName.PERSONA, ctx.model_picks))

    async def _filter(
        self, ctx: TurnContext, visible: dict[str, Any], site: CallSite
    ) -> dict[str, Any]:
        """Generous selection of existing sections; it sees only the visible document."""
        request = context_filter.build(
            context_filter.FilterInput(
                pane=ctx.pane_key,
                memory=visible,
                paths=memdoc.section_paths(visible),
                session=ctx.session,
            ),
            model=model_for(self.deps, AgentName.CONTEXT_FILTER, ctx.model_picks),
            visitor_facing=visibility.is_visitor_facing(ctx.pane_key),
        )
        generation = await self.deps.ledger.generate(request, site)
        output = generation.output
        assert isinstance(output, context_filter.FilterOutput)
        return memdoc.select_paths(visible, output.paths, always=(*ALWAYS_KEEP, ctx.pane_key))

    async def _stream(
        self,
        request: ModelRequest,
        site: CallSite,
        channel: str,
        message_id: uuid.UUID,
        after: int,
    ) -> str:
        """Stream the output; publish the growing ``reply`` as coalesced deltas."""
        loop = asyncio.get_running_loop()
        parts: list[str] = []
        sent = 0
        last = loop.time()

        async def flush(final: bool) -> None:
            nonlocal sent, last
            reply = _partial_reply("".join(parts))
            if len(reply) > sent and (final or loop.time() - last >= DELTA_INTERVAL):
                delta = MessageDeltaEvent(after, message_id, reply[sent:])
                sent, last = len(reply), loop.time()
                await self._ephemeral(channel, delta.encode())

        async for chunk in self.deps.ledger.stream(request, site):
            if chunk.text:
                parts.append(chunk.text)
                await flush(final=False)
        await flush(final=True)
        return "".join(parts)

    async def _ephemeral(self, channel: str, payload: str) -> None:
        """Typing and deltas are best effort: a broker hiccup must not fail (and re-bill) a
        turn whose stored reply will reach every subscriber anyway."""
        try:
            await self.deps.broker.publish(channel, payload)
        except Exception:
            log.warning("ephemeral_publish_failed", channel=channel)

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
            # pane's tail and the insert in one append (lock order: room, pane, then the run
            # below). Keyed by the run: a re-run of an applied run stores no second reply.
            done = await pane_log.append(
                db,
                ctx.pane,
                author_kind=AuthorKind.AGENT.value,
                body=output.reply.strip() or "…",
                client_message_id=f"run:{run.id}",
                now=now,
                session=SessionRule.OPENS if unprompted else SessionRule.CONTINUES,
                message_id=message_id,
                relayed_dispatch_id=dispatch.id if dispatch else None,
            )
            # The stale-run check, the run's own write and the room's memory as it is now (under
            # the room's lock, taken by the append) in one statement; rolled back with the rest.
            finished = await runs.finish(
                run.id,
                run.attempts,
                now,
                reply_message_id=_reply_id(done),
            )
            if finished is None:
                raise StaleRun(str(run.id))
            if isinstance(done, NotStored):
                # A worker that vanished after its commit: done, nothing applied twice (the
                # reply stays the one already stored).
                return
            memory = finished.memory
            rows: list[object] = []  # inserted together, in one flush
            if not guard_push(dispatch):
                await watches.arm(db, ctx.room_id, now)  # W1; the Guard's push never re-arms
            view = MessageView.from_row(done.row, Seat(ctx.pane_key))
            uow.publish(
                (
                    pane_channel(ctx.room_id, Seat(ctx.pane_key)),
                    MessageAddedEvent(cursor=done.row.seq, prev=done.prev, message=view).encode(),
                )
            )
            before = memdoc.goal_statuses(memory)
            # A plan is the model's own note: an overlong one is cut, never a failed turn.
            plan = output.plan[: memdoc.MAX_VALUE_CHARS]
            document = memdoc.set_plan(memory, ctx.pane_key, plan)
            document, _rejected = memdoc.rule_goals(
                document, [(g.key, g.status, g.reason) for g in output.goals], by=ctx.pane_key
            )
            # Every outbound effect of the turn goes through the choke point (held for a guest).
            outbound = effects.Outbound(ctx.room_id, run.id, now, deps.settings)
            await self._goal_flips(db, run, ctx, before, document, now, outbound, rows)
            if dispatch is not None:
                live = await DispatchRepository(db).by_id(dispatch.id)
                if live is not None and live.status != "delivered":
                    live.status = "delivered"
                    live.delivered_message_id = message_id
                    live.delivered_at = now
                    ruling = (live.payload or {}).get("ruling")
                    if isinstance(ruling, dict):
                        # Only now, with the delivery in the record, may memory say it crossed.
                        document = memdoc.record_ruling(
                            document, ctx.pane_key, ruling, str(live.id)
                        )
            await self._sends(db, run, ctx, output, outbound)
            uow.publish(*outbound.published)
            names = {
                d.to_participant_id: ctx.names.get(ctx.key_of(d.to_participant_id), "them")
                for d, _reveals in outbound.screened
            }
            held = held_sends.held_of(outbound, names)
            uow.publish(*await held_sends.notify(db, ctx.room_id, ctx.pane, run.id, held, now))
            if document != memory:
                await runs.write_memory(ctx.room_id, document, now)
            await db.add(*rows, *site.rows, *outbound.runs)
            if outbound.runs:
                uow.announce()
        site.rows.clear()  # stored: nothing left for the failure path to keep

    async def _goal_flips(
        self,
        db: Db,
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
        after = memdoc.goal_statuses(document)
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
            await self._notify(db, run, ctx, key, status, outbound)
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
        self,
        db: Db,
        run: RunSnapshot,
        ctx: TurnContext,
        goal: str,
        status: str,
        outbound: effects.Outbound,
    ) -> None:
        """A flip's notify effect (GN1, GN2): code's text, through the choke point like any
        send; the delivery does not chain on."""
        told = goal_notices.notices(goal, status, ruled_in=ctx.pane_key)
        for position, (seat, text) in enumerate(sorted(told.items()), start=NOTIFY_POSITION):
            target = ctx.participant(seat.value)
            if target is None:
                continue
            await sends.code_send(
                db,
                outbound,
                source_id=ctx.pane.id,
                target_id=target.id,
                position=position,
                substance=text,
                origin=GOAL_ORIGIN,
                settings=self.deps.settings,
            )

    async def _sends(
        self,
        db: Db,
        run: RunSnapshot,
        ctx: TurnContext,
        output: PersonaOutput,
        outbound: effects.Outbound,
    ) -> None:
        """Each send goes out through the choke point: a dispatch row and a persona run in the
        recipient's pane (seed 000 "Agents reach out…"), or a held effect for a guest. The
        chain is bounded by ``max_chain_depth``."""
        settings = self.deps.settings
        if run.chain_depth >= settings.max_chain_depth or ctx.trigger_event is not None:
            if output.sends:
                log.info("sends_dropped_chain_bound", run_id=str(run.id), count=len(output.sends))
            return
        for position, send in enumerate(output.sends):
            target = ctx.participant(send.to)
            if target is None or target.id == ctx.pane.id:
                continue
            substance = send.substance
            payload: dict[str, Any] = {"open_questions": list(send.open_questions)}
            ruling = (
                crossing.safe_ruling(send.ruling.model_dump())
                if send.ruling is not None and ctx.pane_key == Seat.HOST.value
                else None  # only the host side rules on a proposal (issue 3 item 6)
            )
            if (
                ruling is None
                and ctx.pane_key == Seat.HOST.value
                and ctx.trigger_dispatch is not None
            ):
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
                payload = {"ruling": ruling.to_json(), "open_questions": []}
            # F1-F6, C5: a host→visitor send that would reveal a private value is held for
            # the principal by the choke point (issue 10)
            reveals = (
                held_sends.screen(ctx.memory, substance, payload, ctx.dispatches)
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

    async def _finish_orphan(self, run: RunSnapshot) -> None:
        async with self.deps.unit() as uow:
            row = await RunRepository(uow.db).by_id(run.id, lock=True)
            if row is not None:
                row.status, row.finished_at = RunStatus.DONE.value, self.deps.clock.now()
                row.no_op = True


GUARD_ORIGIN = "guard"
"""``dispatches.payload.origin`` of a send the Guard made."""
GOAL_ORIGIN = "goal"
"""``dispatches.payload.origin`` of a goal flip's notify effect."""
NOTIFY_POSITION = 1000
"""Dispatch positions of notify effects start here, after any of the turn's own sends."""


def guard_push(dispatch: Dispatch | None) -> bool:
    return dispatch is not None and (dispatch.payload or {}).get("origin") == GUARD_ORIGIN


def _trigger(ctx: TurnContext) -> Trigger:
    event = ctx.trigger_event
    if event is not None:
        told = stage_notices.notices(Stage(event.stage), event.version, event.actor)
        return Trigger(kind="stage", body=told.get(Seat(ctx.pane_key), ""))
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
    return Trigger(kind="message", body=body)


def _partial_reply(text: str) -> str:
    """The ``reply`` property of a partial JSON object, as far as it has arrived."""
    try:
        value = from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return ""
    reply = value.get("reply") if isinstance(value, dict) else None
    return reply if isinstance(reply, str) else ""


def _reply_id(done: Stored | NotStored) -> uuid.UUID | None:
    """The run's reply: the one just stored, or the one a first, committed attempt stored."""
    if isinstance(done, Stored):
        return done.row.id
    return done.existing.id if done.existing is not None else None
