"""What operators do: pick a room's models, override a goal (firing the same effects a persona's
ruling fires, once), take over a pane and speak in the agent's seat. Every action is an
``ops_actions`` row naming the operator."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from dealroom.agents.models.base import AgentName
from dealroom.agents.models.pricing import PRICES
from dealroom.domain import memory_records, validation
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found
from dealroom.domain.redaction import redact_secrets
from dealroom.domain.seats import AuthorKind, RoomKind, Seat
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AgentRun,
    GoalEvent,
    Message,
    OpsAction,
    PaneTakeover,
    Participant,
    Room,
)
from dealroom.persistence.ops import OpsRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.seats import SeatRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.gate import goal_effects
from dealroom.services.gate.effects import Outbound
from dealroom.services.ops.reads import require_operator
from dealroom.services.rooms.pane_lines import Publish, write_line

log = structlog.get_logger(__name__)

OPERATOR = "operator"
"""``goal_events.agent``/``by_pane`` and ``agent_runs.agent`` of what an operator did."""

MODEL_AGENTS = (
    AgentName.PERSONA,
    AgentName.DISTIL,
    AgentName.CONTEXT_FILTER,
    AgentName.OFFER_GEN,
    AgentName.AGREEMENT,
    AgentName.GUARD,
    AgentName.ARVIST,
    AgentName.ACC_UPDATE,
)
"""The agents whose turns read ``rooms.model_picks`` (the gate uses the persona's pick)."""


async def audit(
    db: Db,
    operator: Account,
    action: str,
    room_id: uuid.UUID | None,
    detail: dict[str, Any],
    now: datetime,
) -> OpsAction:
    row = OpsAction(
        id=uuid.uuid4(),
        operator_account_id=operator.id,
        action=action,
        room_id=room_id,
        detail=detail,
        created_at=now,
    )
    await db.add(row)
    log.info("ops_action", action=action, operator=operator.handle, room_id=str(room_id))
    return row


async def _room(db: Db, room_id: uuid.UUID, *, lock: bool) -> Room:
    if lock:
        await RoomRepository(db).lock(room_id)
    room = await RoomRepository(db).by_id(room_id, fresh=True)
    if room is None:
        raise not_found("Room")
    return room


async def _pane(db: Db, room_id: uuid.UUID, key: str) -> Participant:
    pane = await SeatRepository(db).by_key(room_id, key)
    if pane is None:
        raise not_found("Pane")
    return pane


# --- models ---------------------------------------------------------------------------------


async def set_room_models(
    db: Db,
    clock: Clock,
    identity: Identity,
    room_id: uuid.UUID,
    picks: Sequence[tuple[str, str]],
) -> Room:
    """Pick a model per agent for one room; an empty model clears the pick (the configured
    model applies). Models must be in the price table, so every call stays priced."""
    operator = require_operator(identity)
    agents = {a.value for a in MODEL_AGENTS}
    changes: dict[str, str | None] = {}
    for agent, model in picks:
        if agent not in agents:
            raise bad_input(f"Unknown agent {agent!r}; one of {sorted(agents)}.", "picks")
        model = model.strip()
        if model and model not in PRICES:
            raise bad_input(f"Unknown model {model!r}; one of {sorted(PRICES)}.", "picks")
        changes[agent] = model or None
    room = await _room(db, room_id, lock=True)
    merged = dict(room.model_picks or {})
    for agent, chosen in changes.items():
        if chosen is None:
            merged.pop(agent, None)
        else:
            merged[agent] = chosen
    room.model_picks = merged
    await db.flush()
    await audit(db, operator, "set_room_models", room_id, {"picks": changes}, clock.now())
    return room


# --- goals ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Override:
    event: GoalEvent | None
    """None when the goal already had that status: nothing flipped, nothing fired."""
    effects: Outbound
    """What the flip queued and what to publish after commit (``runs``, ``published``)."""


async def override_goal(
    db: Db,
    clock: Clock,
    identity: Identity,
    room_id: uuid.UUID,
    *,
    key: str,
    status: str,
    reason: str,
) -> Override:
    """A goal event by the operator, under the room's lock: the flip is recorded and fires
    the effect a persona's ruling would (``goal_effects.fire``), once; overriding to the
    status the goal already has changes nothing."""
    operator = require_operator(identity)
    reason = reason.strip()
    if not reason:
        raise bad_input("Say why you override the goal.", "reason")
    now = clock.now()
    room = await _room(db, room_id, lock=True)
    before = memory_records.goal_statuses(room.memory or {})
    # The reason is the host side's to read (visibility V6): operators' notes never reach a
    # visitor-facing agent.
    document, rejected = memory_records.rule_goals(
        room.memory or {}, [(key, status, f"operator: {reason}")], by=Seat.HOST.value
    )
    if rejected:
        raise bad_input("That goal key, status or reason is not valid.", "status")
    outbound = Outbound(room_id, None, now)
    await audit(
        db,
        operator,
        "override_goal",
        room_id,
        {"key": key, "from": before.get(key), "to": status, "reason": reason},
        now,
    )
    if before.get(key) == status:
        return Override(event=None, effects=outbound)
    event = GoalEvent(
        id=uuid.uuid4(),
        room_id=room_id,
        goal_key=key,
        from_status=before.get(key),
        to_status=status,
        by_pane=OPERATOR,
        agent=OPERATOR,
        run_id=None,
        reason=reason[:2000],
        created_at=now,
    )
    await db.add(event)
    room.memory = document
    room.memory_version += 1
    room.memory_updated_at = now
    host = await SeatRepository(db).id_by_key(room_id, Seat.HOST.value)
    await goal_effects.fire(
        db,
        outbound,
        kind=RoomKind(room.kind),
        host_pane=host,
        key=key,
        status=status,
        actor=OPERATOR,
    )
    if outbound.runs:
        await db.add(*outbound.runs)
    await db.flush()
    return Override(event=event, effects=outbound)


# --- taking over a pane ---------------------------------------------------------------------


async def take_over_pane(
    db: Db, clock: Clock, identity: Identity, room_id: uuid.UUID, key: str
) -> PaneTakeover:
    """From now on the agent stays silent in this pane (its runs there finish as no-ops)
    and the operator speaks in its seat with ``operatorPost``. Idempotent."""
    operator = require_operator(identity)
    await _room(db, room_id, lock=True)
    pane = await _pane(db, room_id, key)
    now = clock.now()
    held = await db.get(PaneTakeover, pane.id)
    if held is None:
        held = PaneTakeover(
            participant_id=pane.id, room_id=room_id, operator_account_id=operator.id, taken_at=now
        )
        await db.add(held)
    await audit(db, operator, "take_over_pane", room_id, {"seat": key}, now)
    return held


HANDBACK_LINE = "The agent picks up from here."
"""The system line a release writes in the pane: the record shows where the agent took over
again, and the agent's next turn reads it after the operator's lines (which it reads as its
own seat's). It names no human: the person learns one was typing only if the operator said so."""


@dataclass(frozen=True, slots=True)
class Released:
    was_taken: bool
    publish: Publish | None
    """The handback line to publish after commit (None when nothing was taken over)."""


async def release_pane(
    db: Db, clock: Clock, identity: Identity, room_id: uuid.UUID, key: str
) -> Released:
    """Give the pane back to its agent, with a system line in its transcript. ``was_taken``
    is False (and nothing is written) when it was not taken over."""
    operator = require_operator(identity)
    await _room(db, room_id, lock=True)
    pane = await _pane(db, room_id, key)
    held = await db.get(PaneTakeover, pane.id)
    released = await OpsRepository(db).release_takeover(pane.id)
    publish: Publish | None = None
    if released and held is not None:
        # One line per takeover: a retried release finds it stored and writes nothing more.
        key = f"handback:{held.taken_at.timestamp():.6f}"
        _, publish = await write_line(
            db, clock, pane, HANDBACK_LINE, author=AuthorKind.SYSTEM, key=key
        )
    await audit(
        db,
        operator,
        "release_pane",
        room_id,
        {"seat": key, "was_taken": released},
        clock.now(),
    )
    return Released(was_taken=released, publish=publish)


async def taken_over(db: Db, participant_id: uuid.UUID) -> bool:
    return await db.get(PaneTakeover, participant_id) is not None


async def operator_post(
    db: Db,
    clock: Clock,
    identity: Identity,
    room_id: uuid.UUID,
    key: str,
    *,
    body: str,
    client_message_id: str,
) -> tuple[Message, Publish | None]:
    """The operator speaks in the agent's seat of a taken-over pane: the line is authored
    OPERATOR (in the transcript), an ``agent_runs`` row of agent ``operator`` stands where the
    agent's run would (in the run history), and the action is audited. Idempotent on
    ``client_message_id``."""
    operator = require_operator(identity)
    body = redact_secrets(validation.message_body(body))
    client_message_id = validation.client_message_id(client_message_id)
    pane = await _pane(db, room_id, key)
    if not await taken_over(db, pane.id):
        raise DomainError(ErrorCode.CONFLICT, "Take over the pane before speaking in it.")
    message, publish = await write_line(
        db,
        clock,
        pane,
        body,
        author=AuthorKind.OPERATOR,
        key=f"op:{client_message_id}"[:64],
        author_account_id=operator.id,
    )
    if publish is None:
        return message, None  # a retry: stored before
    now = clock.now()
    await db.add(
        AgentRun(
            id=uuid.uuid4(),
            room_id=room_id,
            participant_id=pane.id,
            agent=OPERATOR,
            status="done",
            attempts=1,
            not_before=now,
            reply_message_id=message.id,
            created_at=now,
            finished_at=now,
        )
    )
    await audit(
        db,
        operator,
        "operator_post",
        room_id,
        {"seat": key, "message_id": str(message.id)},
        now,
    )
    return message, publish
