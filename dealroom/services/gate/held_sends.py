"""Held sends: what the host's side would send a visitor, checked by code before it crosses.

Every host→visitor send is screened (``screen``) by the private-value firewall
(dealroom.domain.firewall) and, for a ruling, by C5 (its amount may not meet a limit). A send
that would reveal something is stored as a dispatch with status ``held``: it is not
delivered, the host's pane gets a line in the agent's voice saying what it would reveal and
asking to confirm (``notify``), and an operator flag is raised. Only the principal's explicit
yes, as the next thing they write in that pane (``confirm``), releases it: the dispatch
records which message released it and crosses once, through the ordinary delivery path. Code
decides all of it; no model reads or writes a held send's fate.

Guard sends and held replays go through the same screen at the choke point (``screener``,
with the room's still-held sends for F6); webhook payloads, Offer-Gen terms and agreement
drafts call ``firewall.check`` where they are composed (webhooks, notifications and a payment
provider's words through ``domain/leaks.screen``, every exit with the deployment's band);
stage notices are fixed text written by code. A released send's payload loses the firewall's
note (``ASKED``) before it is delivered.

C6 (typed crossings): what the host's side sends a visitor crosses on its own only as typed
substance, a ruling's fields rendered by code (crossing C1-C5) or a line code wrote
(``CODE_WRITTEN`` origins). Free text a host-side model wrote (a send with no ruling, the Guard's
owed sends included) is held like a match: it crosses only after the principal read that exact
text in the host's pane and said yes, so it is the principal's own confirmed words. The firewall
knows values, not meaning, and a model that paraphrases a private rule leaves no value to find.

C7 (crossing): a ruling's amount under the host's ask with no limit of the host's to check it
against is held too, and the host's pane is asked for its floor: a room seeded without the
host's limits never negotiates amounts on a model's guess.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

import structlog

from dealroom.domain import crossing, firewall, pane_words, visibility
from dealroom.domain.amounts_in_text import stated_amounts
from dealroom.domain.firewall_memory import visitor_side_amounts
from dealroom.domain.limits import limits_of
from dealroom.domain.seats import AuthorKind, Seat, on_host_side
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchLine, DispatchRepository
from dealroom.persistence.models import Dispatch, Flag, Message
from dealroom.persistence.pane_read import Occupant
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.runs import SessionMessage, TranscriptRepository
from dealroom.services.gate import effects
from dealroom.services.rooms import pane_lines
from dealroom.services.turns.context import RunSnapshot, TurnContext
from dealroom.services.turns.queue import RunStatus
from dealroom.services.turns.runs import RunnerDeps, still_claimed

log = structlog.get_logger(__name__)

HELD: Final = "held"
"""A dispatch's status while the firewall holds it for the principal."""
ASKED: Final = effects.FIREWALL_NOTE
"""The payload key of the firewall's note on a held dispatch (what it would reveal, the
question's id). Not ``held``: that key is the login gate's ``{at, stage}`` marker, which the
recipient's agent is shown, and the note names the host's private values. The note is
dropped when the send is released (``effects._release``)."""
FLAG_LEVEL: Final = "firewall"
VISITOR_SIDE_LINES: Final = 200
"""How much of the visitor's pane C4 reads for the deliverables named there."""

CODE_WRITTEN: Final = frozenset({"goal", "escalation"})
"""C6: the ``origin`` of sends whose text code wrote from a fixed table (goal notices, the
escalation line); any other send without a ruling is a model's free text."""
FREE_TEXT: Final = "words your agent wrote rather than terms (only terms cross without your yes)"

_YES = re.compile(
    r"(?:yes|yep|yeah|confirm(?:ed)?)(?: please)?"
    r"(?: (?:send it|send|go ahead|confirm(?:ed)?|do it|send as written|please))*"
)
"""An explicit yes, the whole message (case and punctuation folded). "OK, go ahead." is not
one: it is what a host types to its agent in passing, and what once let free text cross."""


def is_explicit_yes(text: str) -> bool:
    folded = " ".join(re.findall(r"[a-z]+", text.lower()))
    return bool(_YES.fullmatch(folded))


@dataclass(frozen=True, slots=True)
class Held:
    dispatch: Dispatch
    recipient: str
    reveals: list[str]


def faces_visitor(ctx: TurnContext, target: Occupant) -> bool:
    """A send from the host's side to a counterparty's pane."""
    return on_host_side(ctx.pane_key) and visibility.is_visitor_facing(target.key)


async def known_ruling(
    db: Db, ctx: TurnContext, target: Occupant, ruling: crossing.Ruling
) -> crossing.Ruling:
    """C4: the ruling with its deliverable dropped unless the visitor's side named it."""
    if ruling.deliverable is None:
        return ruling
    lines = await TranscriptRepository(db).recent(target.id, VISITOR_SIDE_LINES)
    view = visibility.visible_memory(ctx.memory, pane=target.key, room_kind=ctx.kind)
    services = (ctx.host_facts or {}).get("services") or []
    texts = [m.body for m in lines] + [_dumped(view)] + [str(s) for s in services]
    named = crossing.named_deliverable(ruling.deliverable, texts)
    if named is None:
        log.info("ruling_deliverable_dropped", room_id=str(ctx.room_id))
    return crossing.with_deliverable(ruling, named)


def principal_words(ctx: TurnContext) -> str:
    """The principal's own message this host-pane turn answers ("" for any other trigger): its
    figures are the principal's word before any writer files them (C7)."""
    message = ctx.trigger_message
    if not on_host_side(ctx.pane_key) or message is None:
        return ""
    if message.author_kind != AuthorKind.PARTICIPANT.value or message.participant_id != ctx.pane.id:
        return ""
    return message.body


def withheld(dispatches: Sequence[Dispatch | DispatchLine]) -> set[Decimal]:
    """F6: the figures of the sends still held in the room."""
    return firewall.withheld_amounts(d.payload or {} for d in dispatches if d.status == HELD)


def screen(
    memory: Mapping[str, Any],
    substance: str,
    payload: Mapping[str, Any],
    held: Sequence[Dispatch | DispatchLine] = (),
    *,
    band_percent: Decimal | None = None,
    principal_said: str = "",
) -> list[str]:
    """What the send would reveal, in words for the host (empty: it may cross): the
    firewall's matches (F1-F10, F10 with ``band_percent``), for a ruling the limits it meets
    (C5) or an amount no limit bounds (C7; the figures of ``principal_said``, the principal's
    message this turn answers, are the principal's own), and free text a model wrote (C6)."""
    instructed = firewall.instructed_amounts(memory)
    matches = firewall.check(
        memory,
        substance,
        payload,
        allowed_amounts=instructed,
        withheld=withheld(held),
        band_percent=band_percent,
    )
    reveals = firewall.describe(matches)
    ruling = payload.get("ruling")
    if not isinstance(ruling, Mapping) and payload.get("origin") not in CODE_WRITTEN:
        reveals.append(FREE_TEXT)  # C6
    if isinstance(ruling, Mapping):
        shaped = crossing.safe_ruling(ruling)
        if shaped is not None:
            limits = limits_of(memory)
            for limit in crossing.undercut_limits(shaped, limits, instructed):
                reveals.append(
                    f"an offer of {shaped.amount} {shaped.currency or 'USD'}, at or under your "
                    f"floor of {limit.floor:f} {limit.currency} for the "
                    f"{limit.deliverable.replace('_', ' ')}"
                )
            covered = instructed | crossing.covered_amounts(memory)
            if shaped.decision == "settle":  # taking the visitor's own figure guesses at nothing
                covered |= visitor_side_amounts(memory)
            said = stated_amounts(principal_said)
            if crossing.unbounded(shaped, limits, memory, covered, said):  # C7
                what = f"the {shaped.deliverable.replace('_', ' ')}" if shaped.deliverable else "it"
                reveals.append(
                    f"an offer of {shaped.amount} {shaped.currency or 'USD'} for {what} with no "
                    "floor of yours to check it against (tell me the least you would take and "
                    "I will work from it)"
                )
    return reveals


def screener(
    memory: Mapping[str, Any],
    keys: Mapping[uuid.UUID, str],
    held: Sequence[Dispatch | DispatchLine] = (),
    *,
    band_percent: Decimal | None = None,
) -> effects.Screen:
    """The firewall for the choke point (``effects.Outbound.screen``): a send from the host's
    side (the host's pane or its team's) to a visitor-facing pane is screened against
    ``memory``; any other send passes (a visitor-side pane's send reaches only the host's
    pane, and the Guard's correction in a visitor pane is written from that pane's view)."""

    def screen_send(send: effects.PaneSend) -> list[str]:
        if not on_host_side(keys.get(send.from_participant_id, "")):
            return []
        if not visibility.is_visitor_facing(keys.get(send.to_participant_id, Seat.HOST.value)):
            return []
        return screen(memory, send.substance, send.payload, held, band_percent=band_percent)

    return screen_send


def held_of(outbound: effects.Outbound, names: Mapping[uuid.UUID, str]) -> list[Held]:
    """The sends the choke point held for the principal in this transaction."""
    return [
        Held(dispatch, names.get(dispatch.to_participant_id, "them"), reveals)
        for dispatch, reveals in outbound.screened
    ]


async def notify(
    db: Db,
    room_id: uuid.UUID,
    pane: Occupant,
    run_id: uuid.UUID,
    held: Sequence[Held],
    now: datetime,
) -> list[tuple[str, str]]:
    """For each held send: the line in the host's pane (the agent's voice) and the operator
    flag. Returns the events to publish after commit."""
    published: list[tuple[str, str]] = []
    for item in held:
        # PW1: where memory keeps a value is for code; the host reads the value itself.
        reveals = [pane_words.without_paths(r) for r in item.reveals]
        text = (
            f"Before I pass this on to {item.recipient}: it would reveal "
            f"{_joined(reveals)}. Here is what I would send: \u201c{item.dispatch.substance}"
            "\u201d Shall I send it as written? Reply \u201cyes\u201d to send it; anything "
            "else and it stays with us."
        )
        message, event = await _agent_line(db, pane, text, f"held:{item.dispatch.id}", now)
        item.dispatch.payload = dict(item.dispatch.payload) | {
            ASKED: {"reveals": item.reveals, "askedMessageId": str(message.id)}
        }
        await db.add(
            Flag(
                room_id=room_id,
                participant_id=pane.id,
                run_id=run_id,
                level=FLAG_LEVEL,
                evidence=(
                    f"held send {item.dispatch.id} to {item.recipient}: "
                    f"{len(item.reveals)} private value(s) matched"
                ),
                created_at=now,
            )
        )
        if event is not None:
            published.append(event)
    return published


async def confirm(deps: RunnerDeps, run: RunSnapshot, ctx: TurnContext) -> bool:
    """The principal's explicit yes to the held sends their agent just asked about: release
    them (recorded on each dispatch), answer in code, and finish the run without a model.
    False when this turn is not such a yes (the model answers as usual)."""
    trigger = ctx.trigger_message
    if (
        not on_host_side(ctx.pane_key)
        or trigger is None
        or ctx.trigger_dispatch is not None
        or not is_explicit_yes(trigger.body)
    ):
        return False
    async with deps.unit() as uow:
        db = uow.db
        row = await still_claimed(db, run)
        if row is None:
            uow.discard()
            return False
        now = deps.clock.now()
        await RoomRepository(db).lock(ctx.room_id)  # the room's row lock, no event number
        asked = await _asked_since_last_word(db, ctx.pane.id, trigger)
        held = [
            d
            for d in await DispatchRepository(db).held_from(ctx.room_id, ctx.pane.id)
            if str((d.payload or {}).get(ASKED, {}).get("askedMessageId")) in asked
        ]
        if not held:
            uow.discard()
            return False
        # The release is an outbound effect like any other: through the choke point, so a guest's
        # room holds it until the claim.
        outbound = effects.Outbound(ctx.room_id, run.id, now, deps.settings)
        names = []
        for dispatch in held:
            await effects.emit(db, outbound, effects.Release(dispatch.id, str(trigger.id)))
            names.append(ctx.names.get(ctx.key_of(dispatch.to_participant_id), "them"))
        uow.publish(*outbound.published)
        to = _joined(sorted(set(names)))
        said = (
            f"Approved: it goes to {to} as written once they sign in."
            if outbound.held  # a guest's room: the release waits for the claim too
            else f"Sent to {to} as written."
        )
        reply, event = await _agent_line(db, ctx.pane, said, f"run:{run.id}", now)
        if event is not None:
            uow.publish(event)
        row.status, row.finished_at, row.reply_message_id = RunStatus.DONE.value, now, reply.id
        row.error = None
        log.info("held_sends_released", room_id=str(ctx.room_id), count=len(held))
        await db.add(*outbound.runs)
        uow.announce()  # the released sends' runs, in every process
    return True


async def _asked_since_last_word(db: Db, pane_id: uuid.UUID, trigger: SessionMessage) -> set[str]:
    """The agent lines of the pane since the principal last wrote before ``trigger``: the
    questions this yes answers."""
    before = await TranscriptRepository(db).before(pane_id, trigger.seq, limit=50)
    asked: set[str] = set()
    for message in before:
        if message.author_kind == AuthorKind.PARTICIPANT.value:
            break
        if message.author_kind == AuthorKind.AGENT.value:
            asked.add(str(message.id))
    return asked


async def _agent_line(
    db: Db, pane: Occupant, body: str, key: str, now: datetime
) -> tuple[Message, tuple[str, str] | None]:
    """A line in ``pane`` in the agent's voice, written by code (pane_lines: through the pane
    log, continuing the pane's session); no event when the line was stored before (its key)."""
    return await pane_lines.line_at(db, pane, body, author=AuthorKind.AGENT, key=key, now=now)


def _joined(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _dumped(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
