"""Room memory's change history, and an operator's correction of it (``domain/memory_edits``).

An edit or a revert is a memory write like Distil's and the Guard's: it takes the room's
memory lease (answering CONFLICT while another writer holds it, so it never clobbers a write in
flight), then the room's row lock, applies one change under the writer rules, records each
changed leaf and the operator's action, and frees the lease in the same transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dealroom.domain import memory as memdoc
from dealroom.domain import memory_edits, provenance, visibility
from dealroom.domain.cursors import parse_room_cursor
from dealroom.domain.errors import DomainError, ErrorCode, bad_input, not_found
from dealroom.persistence.db import Db
from dealroom.persistence.leases import LeaseRepository
from dealroom.persistence.messages import MessageRepository
from dealroom.persistence.models import Room, RoomMemoryChange
from dealroom.persistence.operator_tools import OperatorToolsRepository
from dealroom.persistence.repositories import RoomRepository
from dealroom.persistence.seats import SeatRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.ops.actions import OPERATOR, audit
from dealroom.services.ops.reads import Page, require_operator

VISIBLE_LINES = 200
"""How many of each visitor-facing pane's newest lines an edit's M17 check reads."""


async def history(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[RoomMemoryChange]:
    """Operators read every changed leaf; the room's host reads those of the host's branch;
    to anyone else the room's history does not exist (NOT_FOUND)."""
    account = identity.account
    if account is None:
        raise not_found("Room")
    room = await RoomRepository(db).by_id(room_id)
    under: str | None = None
    if not account.is_operator:
        if room is None or room.host_account_id != account.id or identity.by_api_key:
            raise not_found("Room")
        under = memdoc.HOST
    elif room is None:
        raise not_found("Room")
    found = await OperatorToolsRepository(db).memory_history(
        room_id,
        limit=first + 1,
        after_row=None if after is None else parse_room_cursor(after),
        under=under,
    )
    return Page(rows=found[:first], has_next=len(found) > first)


@dataclass(frozen=True, slots=True)
class Written:
    memory: dict[str, Any]
    version: int
    changes: list[RoomMemoryChange]


async def edit(
    db: Db,
    clock: Clock,
    identity: Identity,
    room_id: uuid.UUID,
    change: memdoc.Change,
    *,
    reason: str,
    lease_seconds: int,
    band_percent: Any = None,
) -> Written:
    """ME1, ME2: one targeted change by the operator, with a reason."""
    operator = require_operator(identity)
    reason = reason.strip()
    if not reason:
        raise bad_input("Say why you change the room's memory.", "reason")
    now = clock.now()
    room, token = await _leased(db, room_id, operator.id, now, lease_seconds)
    people = await SeatRepository(db).people(room_id)
    seats = [p.key for p, _ in people]
    visible = await _visible(db, [p.id for p, _ in people if visibility.is_visitor_facing(p.key)])
    before = dict(room.memory or {})
    after = memory_edits.edit(
        before, change, seats=seats, visible=visible, band_percent=band_percent
    )
    written = await _write(db, room, token, before, after, operator.id, reason[:2000], None, now)
    await audit(
        db,
        operator,
        "edit_room_memory",
        room_id,
        {"op": change.op.value, "path": change.path, "reason": reason[:2000]},
        now,
    )
    return written


async def revert(
    db: Db,
    clock: Clock,
    identity: Identity,
    change_id: uuid.UUID,
    *,
    reason: str,
    lease_seconds: int,
    band_percent: Any = None,
) -> Written:
    """ME4, ME5: put one changed leaf back, as a new recorded change."""
    operator = require_operator(identity)
    change = await OperatorToolsRepository(db).memory_change(change_id)
    if change is None:
        raise not_found("Memory change")
    now = clock.now()
    room, token = await _leased(db, change.room_id, operator.id, now, lease_seconds)
    before = dict(room.memory or {})
    after = memory_edits.revert(
        before, change.path, change.old_value, change.new_value, band_percent=band_percent
    )
    written = await _write(
        db, room, token, before, after, operator.id, reason.strip()[:2000] or None, change.id, now
    )
    if not written.changes:
        raise DomainError(ErrorCode.CONFLICT, "Nothing to revert: the leaf already holds that.")
    await audit(
        db,
        operator,
        "revert_room_memory_change",
        change.room_id,
        {"change_id": str(change.id), "path": change.path, "reason": reason.strip()[:2000]},
        now,
    )
    return written


async def _leased(
    db: Db, room_id: uuid.UUID, operator_id: uuid.UUID, now: datetime, seconds: int
) -> tuple[Room, int]:
    """The memory lease as the Guard takes it, then the room's row lock (lock order: lease,
    room). CONFLICT while Distil or the Guard holds the lease: the caller retries."""
    if await RoomRepository(db).by_id(room_id) is None:
        raise not_found("Room")
    leases = LeaseRepository(db)
    token = await leases.grant(
        room_id, f"{OPERATOR}:{operator_id}", now, now + timedelta(seconds=seconds)
    )
    if token is None:
        raise DomainError(
            ErrorCode.CONFLICT, "A memory writer is working on this room; try again shortly."
        )
    room = await RoomRepository(db).locked(room_id)
    if room is None:
        raise not_found("Room")
    return room, token


async def _visible(db: Db, pane_ids: list[uuid.UUID]) -> list[provenance.Said]:
    """M17: what the visitor's side already shows (each visitor-facing pane's newest lines)."""
    messages = MessageRepository(db)
    said: list[provenance.Said] = []
    for pane_id in pane_ids:
        for line in await messages.page(
            pane_id, after=None, before=None, limit=VISIBLE_LINES, newest_first=True
        ):
            said.append(provenance.Said(str(line.id), line.body))
    return said


async def _write(
    db: Db,
    room: Room,
    token: int,
    before: dict[str, Any],
    after: dict[str, Any],
    operator_id: uuid.UUID,
    reason: str | None,
    reverts_id: uuid.UUID | None,
    now: datetime,
) -> Written:
    changes: list[RoomMemoryChange] = []
    leaves = memory_edits.changed_leaves(before, after)
    if leaves:
        room.memory = after
        room.memory_version += 1
        room.memory_updated_at = now
        changes = await OperatorToolsRepository(db).record_changes(
            room.id,
            room.memory_version,
            leaves,
            agent=OPERATOR,
            run_id=None,
            actor_account_id=operator_id,
            reason=reason,
            reverts_id=reverts_id,
            now=now,
        )
    await LeaseRepository(db).release(room.id, token)  # the grant and its release commit together
    await db.flush()
    return Written(dict(room.memory or {}), room.memory_version, changes)
