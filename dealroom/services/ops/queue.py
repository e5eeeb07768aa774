"""The operators' queue of what needs a human (``domain/ops_queue.py`` Q1-Q6): a page of it,
acknowledging, assigning and resolving an item (each audited), a room's resolved items, and
the alert operators who opted in get of a new high item.

Operators only; to anyone else the queue does not exist (NOT_FOUND)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Final

from dealroom.domain import ops_queue as rules
from dealroom.domain.cursors import parse_room_cursor
from dealroom.domain.errors import not_found
from dealroom.domain.ops_queue import ItemKind, ItemState, Level
from dealroom.persistence.db import Db
from dealroom.persistence.models import OpsQueueItem
from dealroom.persistence.notifications import NotificationRepository
from dealroom.persistence.ops_queue import OpsQueueRepository, QueueAfter, QueueRow
from dealroom.persistence.repositories import AccountRepository
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.notify.kinds import Audience, Kind, Mode, mode_for
from dealroom.services.notify.outbox import Note, Written, write
from dealroom.services.ops.actions import audit
from dealroom.services.ops.reads import Page, require_operator

STALE_AFTER: Final = timedelta(days=1)
"""A payment pending capture, or a webhook failing, this long needs a person."""
ALERT_WINDOW: Final = timedelta(days=1)
"""Q6: how far back a sweep looks for new high items (older ones were alerted, or predate)."""
ALERT_BATCH: Final = 100
ALERTED_KINDS: Final = tuple(k for k in ItemKind if k is not ItemKind.ESCALATION)
"""Q6: an escalation alerts operators when it is raised (``notify/waits.py``), not again."""


def room_link(room_id: uuid.UUID | None) -> str | None:
    return f"/ops/rooms/{room_id}" if room_id is not None else None


@dataclass(frozen=True, slots=True)
class QueuePage:
    rows: list[QueueRow]
    has_next: bool


async def page(
    db: Db,
    clock: Clock,
    identity: Identity,
    *,
    first: int,
    after: str | None,
    level: Level | None = None,
    kind: ItemKind | None = None,
) -> QueuePage:
    """Open items, most urgent then oldest first: one statement a page."""
    require_operator(identity)
    found = await OpsQueueRepository(db).page(
        stale_before=clock.now() - STALE_AFTER,
        limit=first + 1,
        after_item=None if after is None else rules.parse_queue_cursor(after),
        kinds=(kind,) if kind is not None else tuple(ItemKind),
        level=level,
    )
    return QueuePage(rows=found[:first], has_next=len(found) > first)


def cursor_of(row: QueueRow) -> str:
    after: QueueAfter = (row.rank, row.raised_at, row.kind.value, row.source_id)
    return rules.queue_cursor(*after)


async def _item(db: Db, clock: Clock, item_id: str) -> tuple[QueueRow, OpsQueueItem | None]:
    """The item (resolved or not) and its row, locked; NOT_FOUND when its fact is gone and
    nobody acted on it."""
    kind, source_id = rules.parse_item_key(item_id)
    repo = OpsQueueRepository(db)
    state = await repo.state(kind, source_id)
    found = await repo.page(
        stale_before=clock.now() - STALE_AFTER,
        limit=1,
        kinds=(kind,),
        source_id=source_id,
        include_resolved=True,
    )
    if found:
        return found[0], state
    if state is None:
        raise not_found("Queue item")
    # The fact is gone (a failed run ran again): the item is what it was when first acted on.
    return _from_state(state), state


def _from_state(state: OpsQueueItem) -> QueueRow:
    level = Level(state.level)
    return QueueRow(
        kind=ItemKind(state.kind),
        source_id=state.source_id,
        room_id=state.room_id,
        level=level,
        rank=rules.RANK[level],
        raised_at=state.raised_at,
        summary=state.summary,
        room_title=None,
        state=state,
        assignee_handle=None,
    )


def _state_of(row: OpsQueueItem | None) -> ItemState:
    if row is None:
        return ItemState()
    return ItemState(
        acknowledged_at=row.acknowledged_at,
        acknowledged_by=row.acknowledged_by,
        assigned_to=row.assigned_to,
        resolved_at=row.resolved_at,
        resolved_by=row.resolved_by,
        note=row.note,
    )


async def _apply(
    db: Db,
    item: QueueRow,
    row: OpsQueueItem | None,
    after: ItemState,
    now: datetime,
) -> OpsQueueItem:
    if row is None:
        row = await OpsQueueRepository(db).create_state(item, now)
    row.acknowledged_at = after.acknowledged_at
    row.acknowledged_by = after.acknowledged_by
    row.assigned_to = after.assigned_to
    row.resolved_at = after.resolved_at
    row.resolved_by = after.resolved_by
    row.note = after.note
    row.updated_at = now
    await db.flush()
    return row


async def acknowledge(db: Db, clock: Clock, identity: Identity, item_id: str) -> QueueRow:
    """Q3: idempotent; Q5: CONFLICT once resolved. Audited the first time."""
    operator = require_operator(identity)
    item, row = await _item(db, clock, item_id)
    before = _state_of(row)
    now = clock.now()
    after = rules.acknowledge(before, operator.id, now)
    if after == before and row is not None:
        return replace(item, state=row)
    row = await _apply(db, item, row, after, now)
    await audit(db, operator, "acknowledge_queue_item", item.room_id, {"item": item_id}, now)
    return replace(item, state=row)


async def assign(
    db: Db, clock: Clock, identity: Identity, item_id: str, operator_handle: str
) -> QueueRow:
    """Q4: to an operator only; Q5: CONFLICT once resolved. Audited."""
    operator = require_operator(identity)
    item, row = await _item(db, clock, item_id)
    assignee = await AccountRepository(db).by_handle(operator_handle.strip().lstrip("@").lower())
    if assignee is None:
        raise not_found("Account")
    now = clock.now()
    after = rules.assign(_state_of(row), assignee.id, is_operator=assignee.is_operator)
    row = await _apply(db, item, row, after, now)
    await audit(
        db,
        operator,
        "assign_queue_item",
        item.room_id,
        {"item": item_id, "assignee": assignee.handle},
        now,
    )
    return replace(item, state=row, assignee_handle=assignee.handle)


async def resolve(db: Db, clock: Clock, identity: Identity, item_id: str, note: str) -> QueueRow:
    """Q5: with a note; it leaves the queue and stays in its room's history. Audited."""
    operator = require_operator(identity)
    item, row = await _item(db, clock, item_id)
    now = clock.now()
    after = rules.resolve(_state_of(row), operator.id, note, now)
    row = await _apply(db, item, row, after, now)
    await audit(
        db, operator, "resolve_queue_item", item.room_id, {"item": item_id, "note": row.note}, now
    )
    return replace(item, state=row)


async def room_history(
    db: Db, identity: Identity, room_id: uuid.UUID, *, first: int, after: str | None
) -> Page[OpsQueueItem]:
    """Q5: the room's resolved items, newest resolution first."""
    require_operator(identity)
    found = await OpsQueueRepository(db).resolved_in_room(
        room_id, limit=first + 1, after_row=None if after is None else parse_room_cursor(after)
    )
    return Page(rows=found[:first], has_next=len(found) > first)


async def handles(db: Db, account_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    return await OpsQueueRepository(db).handles(account_ids)


# --- Q6: alerts -----------------------------------------------------------------------------


async def alert_new_high(db: Db, now: datetime) -> Written:
    """Write an OPERATOR_ALERT for each new high item to each operator who did not turn the
    kind off, once (the notification's source names the item and the operator). The alert
    names the item's kind and room, never its evidence: an email leaves the building."""
    found = await OpsQueueRepository(db).page(
        stale_before=now - STALE_AFTER,
        limit=ALERT_BATCH,
        kinds=ALERTED_KINDS,
        level=Level.HIGH,
        raised_since=now - ALERT_WINDOW,
    )
    if not found:
        return Written()
    notifications = NotificationRepository(db)
    recipients = await notifications.recipients(await notifications.operators())
    opted = [
        account_id
        for account_id, recipient in recipients.items()
        if mode_for(recipient.settings.modes if recipient.settings else None, Kind.OPERATOR_ALERT)
        is not Mode.OFF
    ]
    notes = [_alert(row, operator) for row in found for operator in opted]
    return await write(db, now, notes)


_NAMES: Final[dict[ItemKind, str]] = {
    ItemKind.FLAG: "A frustration flag",
    ItemKind.ESCALATION: "An escalation",
    ItemKind.VERDICT: "An unrepaired Guard audit",
    ItemKind.FAILED_RUN: "A failed run",
    ItemKind.PAYMENT: "A disputed payment",
    ItemKind.WEBHOOK: "A failing webhook",
}


def _alert(row: QueueRow, operator: uuid.UUID) -> Note:
    where = f" in “{row.room_title}”" if row.room_title else ""
    what = _NAMES[row.kind]
    return Note(
        account_id=operator,
        kind=Kind.OPERATOR_ALERT,
        audience=Audience.OPERATOR,
        source=f"queue:{rules.item_key(row.kind, row.source_id)}:{operator}",
        title=f"Needs a person: {what.lower()}{where}",
        body=f"{what}{where} is high in the ops queue. Open the queue to acknowledge it.",
        link=room_link(row.room_id) or "/ops/queue",
        reason="You are an operator and chose to be alerted.",
        room_id=row.room_id,
    )
