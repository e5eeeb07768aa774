"""The outbound choke point (seed 000 "The login gate lives in the mechanism, as held effects").

Every effect of a turn that leaves its pane — a send to another pane, the written offer's mint,
its close — goes through :func:`emit`, and nothing else performs one. While the room's visitor
side is an unclaimed guest, ``emit`` holds the effect as a ``pending_effects`` row (its kind and
substance, never a spoken line; a per-room ``seq``; the source run) in the turn's own
transaction instead of performing it. The first held effect raises the gate: the visitor view's
``loginRequired`` turns true (``LoginRequiredChanged`` is published to the guest's pane) and a
gate run is queued in which the guest's own agent says, in its words, that it needs a sign-in.

A claim (``services/gate/claims.py``) replays held rows in ``seq`` order through :func:`perform` —
the same code as an ungated turn's effect, so a kind added here is gated and replayed alike.
A new kind is a member of :class:`EffectKind`, a dataclass in :data:`Effect`, and a case in
``_perform`` and ``effect_of`` (a test enumerates the kinds and proves each is held for a guest).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, assert_never

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.domain.seats import RoomKind, RoomMode
from dealroom.persistence.db import Db
from dealroom.persistence.dispatches import DispatchRepository
from dealroom.persistence.effects import PendingEffectRepository
from dealroom.persistence.models import AgentRun, Dispatch, PendingEffect
from dealroom.persistence.seats import SeatRepository
from dealroom.services.live.publish import Publish
from dealroom.services.offers.actions import close_live_offer, queue_offer_gen
from dealroom.services.offers.reads import room_stage
from dealroom.services.rooms.guests import gate_run, login_required_changed
from dealroom.services.turns.queue import new_run

log = structlog.get_logger(__name__)

HELD = "held"
FIREWALL_HELD = "held"
"""A dispatch's status while the firewall holds it for the principal."""
FIREWALL_NOTE = "firewall"
"""The payload key of the firewall's note on a held send (``held_sends.ASKED``)."""
PERFORMED = "performed"
REPLAYED = "replayed"


class EffectKind(StrEnum):
    """Every kind of outbound effect. Guard sends and stage notices are added here."""

    PANE_SEND = "pane_send"
    """A send to another pane: a dispatch, and a persona run there that delivers it."""
    OFFER_MINT = "offer_mint"
    """``new-offer`` met: Offer-Gen draws the written offer (at replay, on the transcript as
    it stands then)."""
    OFFER_CLOSE = "offer_close"
    """``new-offer`` abandoned: the live written offer is closed (reject-offer)."""
    RELEASE = "release"
    """The principal's explicit yes to a send the firewall held: the held dispatch is delivered
    after all."""


class GateReason(StrEnum):
    HELD = "held"
    """Something the room would send out waits on the guest's sign-in."""
    CAP = "cap"
    """The guest used up its messages (``guest_message_cap``): gentler copy."""


@dataclass(frozen=True, slots=True)
class PaneSend:
    from_participant_id: uuid.UUID
    to_participant_id: uuid.UUID
    substance: str
    payload: dict[str, Any]
    position: int
    chain_depth: int
    reveals: tuple[str, ...] = ()
    """What the private-value firewall found in it: non-empty, the send is held for the principal
    as a ``held`` dispatch and never delivered on a model's say-so."""

    kind = EffectKind.PANE_SEND


@dataclass(frozen=True, slots=True)
class OfferMint:
    host_participant_id: uuid.UUID

    kind = EffectKind.OFFER_MINT


@dataclass(frozen=True, slots=True)
class OfferClose:
    actor: str

    kind = EffectKind.OFFER_CLOSE


@dataclass(frozen=True, slots=True)
class Release:
    dispatch_id: uuid.UUID
    by_message_id: str

    kind = EffectKind.RELEASE


Effect = PaneSend | OfferMint | OfferClose | Release
Screen = Callable[[PaneSend], list[str]]
"""The firewall for a send (held_sends.screener): what it would reveal, empty when it may go."""


@dataclass
class Outbound:
    """One transaction's view of a room's outbound side: what :func:`emit` queued and what
    to publish after commit. The caller holds the room's row lock (a turn's apply takes it
    with its event number), so a claim and a turn decide one after the other."""

    room_id: uuid.UUID
    source_run_id: uuid.UUID | None
    now: datetime
    settings: Settings | None = None
    """For the pair send cap; an effect with no sends (an operator's override) needs none."""
    replay: bool = False
    """Performing a held effect at claim: the pair send cap does not apply (a guest's held
    sends are bounded by the guest cap), and deliveries are marked held."""
    runs: list[AgentRun] = field(default_factory=list)
    published: list[Publish] = field(default_factory=list)
    held: int = 0
    screen: Screen | None = None
    """Screens sends that arrive unscreened (a replay, composed long before) at perform time."""
    screened: list[tuple[Dispatch, list[str]]] = field(default_factory=list)
    """Sends the firewall held for the principal in this transaction: the caller asks the
    principal about each in the host's pane (held_sends.notify)."""
    gate_said: bool = False
    """The turn's own reply asked the guest to sign in, naming what waits: the gate goes up
    without a gate run's second line."""
    _gate: tuple[bool, uuid.UUID | None] | None = None


async def emit(db: Db, room: Outbound, effect: Effect) -> None:
    """Perform ``effect``, or hold it while the room's visitor is an unclaimed guest. A send
    the firewall holds for the principal is held as a dispatch first, guest or not: nothing
    of it leaves the host's side until the principal says yes (a ``Release``, gated too)."""
    if isinstance(effect, PaneSend) and (effect := _screened(room, effect)).reveals:
        await _send(db, room, effect)
        return
    gated, visitor_id = await _gate(db, room)
    if gated:
        assert visitor_id is not None
        await _hold(db, room, effect, visitor_id)
    else:
        await _perform(db, room, effect)


async def perform(db: Db, room: Outbound, effect: Effect) -> None:
    """Perform a held effect at replay (the claim bound the visitor first); a send is
    screened again against the room as it is now."""
    if isinstance(effect, PaneSend):
        effect = _screened(room, effect)
    await _perform(db, room, effect)


def _screened(room: Outbound, send: PaneSend) -> PaneSend:
    if send.reveals or room.screen is None:
        return send
    reveals = room.screen(send)
    return replace(send, reveals=tuple(reveals)) if reveals else send


async def _gate(db: Db, room: Outbound) -> tuple[bool, uuid.UUID | None]:
    """Whether the room's visitor side is an unclaimed guest: read once per transaction,
    under the room lock. A signed-in or act-as visitor is bound to an account, a demo room's
    visitor is its host, a home room has no visitor: none of them is ever gated."""
    if room._gate is None:
        seat = await SeatRepository(db).visitor(room.room_id)
        if seat is None:
            room._gate = (False, None)
        else:
            gated = (
                seat.account_id is None
                and seat.room_kind == RoomKind.DEAL
                and seat.room_mode != RoomMode.DEMO
            )
            room._gate = (gated, seat.id)
    return room._gate


async def _hold(db: Db, room: Outbound, effect: Effect, visitor_id: uuid.UUID) -> None:
    last = await PendingEffectRepository(db).last_seq(room.room_id)
    waiting = await held_count(db, room.room_id) if last is not None else 0
    stage = await room_stage(db, room.room_id)
    await db.add(
        PendingEffect(
            id=uuid.uuid4(),
            room_id=room.room_id,
            seq=(last or 0) + 1,
            kind=effect.kind.value,
            payload=_substance(effect) | {"stage": stage.value},
            status=HELD,
            source_run_id=room.source_run_id,
            created_at=room.now,
        )
    )
    room.held += 1
    log.info("effect_held", room_id=str(room.room_id), kind=effect.kind.value)
    if waiting == 0 and room.held == 1:
        # The gate goes up: the guest's agent says so in its own words, and the view flips.
        if not room.gate_said:
            room.runs.append(gate_run(room.room_id, visitor_id, room.now))
        room.published.append(await login_required_changed(db, room.room_id, visitor_id, True))


async def held_count(db: Db, room_id: uuid.UUID) -> int:
    return await PendingEffectRepository(db).count(room_id, HELD)


async def _perform(db: Db, room: Outbound, effect: Effect) -> None:
    match effect:
        case PaneSend():
            await _send(db, room, effect)
        case OfferMint():
            room.runs.append(queue_offer_gen(room.room_id, effect.host_participant_id, room.now))
        case OfferClose():
            room.published += await close_live_offer(
                db,
                room.room_id,
                now=room.now,
                actor=effect.actor,
                band_percent=room.settings.firewall_band_percent if room.settings else None,
            )
        case Release():
            await _release(db, room, effect)
        case _:
            assert_never(effect)


async def _release(db: Db, room: Outbound, release: Release) -> None:
    """Deliver a send the firewall held, once: only a still-held dispatch is released."""
    dispatch = await db.get(Dispatch, release.dispatch_id)
    if dispatch is None or dispatch.status != FIREWALL_HELD:
        return
    dispatch.status = "pending"
    # the firewall's note names the private values the send reveals: it was for the
    # principal's question only, and the payload now goes to the recipient's agent
    payload = {k: v for k, v in (dispatch.payload or {}).items() if k != FIREWALL_NOTE}
    dispatch.payload = payload | {
        "released": {"byMessageId": release.by_message_id, "at": room.now.isoformat()}
    }
    room.runs.append(
        new_run(
            room_id=room.room_id,
            participant_id=dispatch.to_participant_id,
            agent=AgentName.PERSONA,
            now=room.now,
            trigger_dispatch_id=dispatch.id,
            chain_depth=dispatch.chain_depth,
        )
    )


async def _send(db: Db, room: Outbound, send: PaneSend) -> None:
    """A dispatch row and a persona run in the recipient's pane (seed 000 "Agents reach
    out…"). Sends between two panes are rate-capped: a capped send is recorded, never
    delivered."""
    capped = False
    if not room.replay and not send.reveals and room.settings is not None:
        since = room.now - timedelta(minutes=10)
        recent = await DispatchRepository(db).recent_between(
            send.from_participant_id, send.to_participant_id, since
        )
        capped = recent >= room.settings.sends_per_pair_per_10_minutes
    assert room.source_run_id is not None
    dispatch = Dispatch(
        id=uuid.uuid4(),
        room_id=room.room_id,
        from_participant_id=send.from_participant_id,
        to_participant_id=send.to_participant_id,
        source_run_id=room.source_run_id,
        position=send.position,
        substance=send.substance,
        payload=send.payload,
        status=FIREWALL_HELD if send.reveals else "capped" if capped else "pending",
        chain_depth=send.chain_depth,
        created_at=room.now,
    )
    await db.add(dispatch)
    if send.reveals:  # F1-F6, C5: the principal decides in the host's pane
        room.screened.append((dispatch, list(send.reveals)))
        return
    if capped:
        log.warning("send_capped", room_id=str(room.room_id))
        return
    room.runs.append(
        new_run(
            room_id=room.room_id,
            participant_id=send.to_participant_id,
            agent=AgentName.PERSONA,
            now=room.now,
            trigger_dispatch_id=dispatch.id,
            chain_depth=send.chain_depth,
        )
    )


# --- held rows: substance in, effect out -------------------------------------------------


def _substance(effect: Effect) -> dict[str, Any]:
    """What a held row keeps: the effect's substance and addressing, never a spoken line."""
    match effect:
        case PaneSend():
            return {
                "from": str(effect.from_participant_id),
                "to": str(effect.to_participant_id),
                "substance": effect.substance,
                "payload": effect.payload,
                "position": effect.position,
                "chain_depth": effect.chain_depth,
            }
        case OfferMint():
            return {"host": str(effect.host_participant_id)}
        case OfferClose():
            return {"actor": effect.actor}
        case Release():
            return {"dispatch": str(effect.dispatch_id), "by": effect.by_message_id}
        case _:
            assert_never(effect)


def coalesced(rows: Sequence[PendingEffect]) -> tuple[list[PendingEffect], Effect]:
    """A replay reads as one conversation: the held sends at the head of ``rows`` that go
    from the same pane to the same pane, one after another, are one send composed of what
    was said in order, the latest last (the current position), so the recipient's side
    answers once, to what stands now, and can report every figure the sender named. Returns
    the rows it folds in (performed as part of the last one) and the effect to perform."""
    head = rows[0]
    effect = effect_of(head)
    if not isinstance(effect, PaneSend):
        return [], effect
    run = [head]
    for row in rows[1:]:
        data = row.payload or {}
        if (
            row.kind != EffectKind.PANE_SEND.value
            or row.status != HELD
            or data.get("from") != str(effect.from_participant_id)
            or data.get("to") != str(effect.to_participant_id)
        ):
            break
        run.append(row)
    if len(run) == 1:
        return [], effect
    last = effect_of(run[-1])
    assert isinstance(last, PaneSend)
    said = [str((row.payload or {}).get("substance", "")).strip() for row in run[:-1]]
    substance = " ".join([*said, f"Latest: {last.substance.strip()}"])
    return run[:-1], replace(last, substance=substance)


def effect_of(row: PendingEffect) -> Effect:
    """The effect a held row stands for. A held send is delivered marked as held, with when
    it was held and the stage then: the recipient's agent composes it against the present
    (heldPushMustConvey)."""
    data = dict(row.payload or {})
    match EffectKind(row.kind):
        case EffectKind.PANE_SEND:
            payload = dict(data.get("payload") or {})
            payload["held"] = {"at": row.created_at.isoformat(), "stage": data.get("stage")}
            return PaneSend(
                from_participant_id=uuid.UUID(data["from"]),
                to_participant_id=uuid.UUID(data["to"]),
                substance=str(data.get("substance", "")),
                payload=payload,
                position=int(data.get("position", 0)),
                chain_depth=int(data.get("chain_depth", 1)),
            )
        case EffectKind.OFFER_MINT:
            return OfferMint(host_participant_id=uuid.UUID(data["host"]))
        case EffectKind.OFFER_CLOSE:
            return OfferClose(actor=str(data.get("actor", AgentName.PERSONA.value)))
        case EffectKind.RELEASE:
            return Release(uuid.UUID(data["dispatch"]), str(data.get("by", "")))
        case _:
            assert_never(EffectKind(row.kind))
