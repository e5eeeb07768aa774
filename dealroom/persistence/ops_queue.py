"""The operators' queue (``domain/ops_queue.py``): its items read from the facts themselves in
one statement per page, and what operators did with them (``ops_queue_items``).

Each source is one branch of a ``UNION ALL`` (flags, escalated waits, Guard verdicts that were
not healthy, failed runs, disputed or stuck payments, failing webhooks), joined to the item's
row and its room; a page is ordered most urgent first, then oldest first, and read by keyset.
Repositories flush, never commit."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    Text,
    and_,
    case,
    func,
    literal,
    or_,
    select,
    union_all,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import aliased

from dealroom.domain.ops_queue import RANK, ItemKind, Level
from dealroom.persistence.db import Db
from dealroom.persistence.models import (
    Account,
    AgentRun,
    Flag,
    GuardVerdict,
    Notification,
    Offer,
    OpsQueueItem,
    Payment,
    Room,
    Webhook,
    WebhookDelivery,
)
from dealroom.persistence.paging import After, after

QueueAfter = tuple[int, datetime, str, uuid.UUID]
"""A parsed queue cursor: the last item's rank, age, kind and source id."""


@dataclass(frozen=True, slots=True)
class QueueRow:
    kind: ItemKind
    source_id: uuid.UUID
    room_id: uuid.UUID | None
    level: Level
    rank: int
    raised_at: datetime
    summary: str
    room_title: str | None
    state: OpsQueueItem | None
    assignee_handle: str | None


def _const(value: str) -> ColumnElement[str]:
    """A constant written into the statement, not bound: PostgreSQL plans the pool's
    statements generically, and a generic plan of bound constants misjudges every branch."""
    return literal(str(value), String, literal_execute=True)


def _text(value: str) -> ColumnElement[str]:
    return sql_cast(_const(value), String(200))


def _int(value: int) -> ColumnElement[int]:
    return sql_cast(literal(int(value), Integer, literal_execute=True), Integer)


def _columns(
    kind: ItemKind,
    source_id: Any,
    room_id: Any,
    level: ColumnElement[str],
    rank: ColumnElement[int],
    raised_at: Any,
    summary: Any,
) -> list[Any]:
    return [
        _text(kind.value).label("kind"),
        source_id.label("source_id"),
        room_id.label("room_id"),
        level.label("level"),
        rank.label("rank"),
        raised_at.label("raised_at"),
        sql_cast(summary, Text).label("summary"),
    ]


def _flags() -> Select[Any]:
    high = Flag.level == _const(Level.HIGH)
    low = Flag.level == _const(Level.LOW)
    level = case((high, _text(Level.HIGH)), (low, _text(Level.LOW)), else_=_text(Level.MEDIUM))
    rank = case(
        (high, _int(RANK[Level.HIGH])), (low, _int(RANK[Level.LOW])), else_=_int(RANK[Level.MEDIUM])
    )
    return select(
        *_columns(ItemKind.FLAG, Flag.id, Flag.room_id, level, rank, Flag.created_at, Flag.evidence)
    )


def _escalations() -> Select[Any]:
    return select(
        *_columns(
            ItemKind.ESCALATION,
            Notification.id,
            Notification.room_id,
            _text(Level.HIGH),
            _int(RANK[Level.HIGH]),
            func.coalesce(Notification.waiting_since, Notification.created_at),
            _text("Escalated: ") + Notification.title,
        )
    ).where(Notification.wait_state == _const("escalated"))


def _verdicts() -> Select[Any]:
    unrepaired = GuardVerdict.verdict == _const("unrepaired")
    return select(
        *_columns(
            ItemKind.VERDICT,
            GuardVerdict.id,
            GuardVerdict.room_id,
            case((unrepaired, _text(Level.HIGH)), else_=_text(Level.LOW)),
            case((unrepaired, _int(RANK[Level.HIGH])), else_=_int(RANK[Level.LOW])),
            GuardVerdict.created_at,
            _text("The Guard's audit: ") + GuardVerdict.verdict,
        )
    ).where(GuardVerdict.verdict != _const("healthy"))


def _failed_runs() -> Select[Any]:
    return select(
        *_columns(
            ItemKind.FAILED_RUN,
            AgentRun.id,
            AgentRun.room_id,
            _text(Level.MEDIUM),
            _int(RANK[Level.MEDIUM]),
            func.coalesce(AgentRun.finished_at, AgentRun.created_at),
            AgentRun.agent + _text(" failed: ") + func.coalesce(AgentRun.error, _const("")),
        )
    ).where(AgentRun.status == _const("failed"))


def _payments(stale_before: datetime) -> Select[Any]:
    disputed = Payment.status == _const("disputed")
    return (
        select(
            *_columns(
                ItemKind.PAYMENT,
                Payment.id,
                Offer.room_id,
                case((disputed, _text(Level.HIGH)), else_=_text(Level.MEDIUM)),
                case((disputed, _int(RANK[Level.HIGH])), else_=_int(RANK[Level.MEDIUM])),
                case((disputed, Payment.updated_at), else_=Payment.created_at),
                _text("Payment ")
                + Payment.status
                + _text(": ")
                + sql_cast(Payment.total, String(40))
                + _text(" ")
                + Payment.currency,
            )
        )
        .join(Offer, Offer.id == Payment.offer_id)
        .where(
            or_(
                disputed,
                and_(Payment.status == _const("pending"), Payment.created_at <= stale_before),
            )
        )
    )


def _webhooks(stale_before: datetime) -> Select[Any]:
    failing = (
        select(
            WebhookDelivery.webhook_id.label("webhook_id"),
            func.min(WebhookDelivery.first_attempt_at).label("since"),
        )
        .where(
            WebhookDelivery.status != _const("delivered"),
            WebhookDelivery.first_attempt_at.is_not(None),
        )
        .group_by(WebhookDelivery.webhook_id)
        .subquery()
    )
    since = func.coalesce(Webhook.disabled_at, failing.c.since)
    return (
        select(
            *_columns(
                ItemKind.WEBHOOK,
                Webhook.id,
                sql_cast(literal(None), Webhook.id.type),
                _text(Level.MEDIUM),
                _int(RANK[Level.MEDIUM]),
                since,
                _text("Webhook failing: ") + Webhook.url,
            )
        )
        .outerjoin(failing, failing.c.webhook_id == Webhook.id)
        .where(
            or_(
                Webhook.status == _const("disabled"),
                and_(
                    failing.c.since <= stale_before,
                    or_(
                        Webhook.last_success_at.is_(None), Webhook.last_success_at < failing.c.since
                    ),
                ),
            )
        )
    )


def _sources(stale_before: datetime, kinds: Sequence[ItemKind]) -> list[Select[Any]]:
    built: dict[ItemKind, Callable[[], Select[Any]]] = {
        ItemKind.FLAG: _flags,
        ItemKind.ESCALATION: _escalations,
        ItemKind.VERDICT: _verdicts,
        ItemKind.FAILED_RUN: _failed_runs,
        ItemKind.PAYMENT: lambda: _payments(stale_before),
        ItemKind.WEBHOOK: lambda: _webhooks(stale_before),
    }
    return [built[kind]() for kind in kinds]


class OpsQueueRepository:
    def __init__(self, db: Db) -> None:
        self.db = db

    async def page(
        self,
        *,
        stale_before: datetime,
        limit: int,
        after_item: QueueAfter | None = None,
        kinds: Sequence[ItemKind] = tuple(ItemKind),
        level: Level | None = None,
        raised_since: datetime | None = None,
        source_id: uuid.UUID | None = None,
        include_resolved: bool = False,
    ) -> list[QueueRow]:
        """Up to ``limit`` items, most urgent then oldest first: one statement.

        The page is chosen first and only its rows are joined to their room and assignee: joined
        before the sort, every open item looked its room up (most of the statement's time at
        10,000 rooms, ``bench/ops_queue.py``)."""
        items = union_all(*_sources(stale_before, kinds)).subquery("items")
        order = (items.c.rank, items.c.raised_at, items.c.kind, items.c.source_id)
        chosen = (
            select(items, OpsQueueItem.id.label("state_id"))
            .outerjoin(
                OpsQueueItem,
                and_(
                    OpsQueueItem.kind == items.c.kind, OpsQueueItem.source_id == items.c.source_id
                ),
            )
            .order_by(*order)
            .limit(limit)
        )
        if not include_resolved:
            chosen = chosen.where(OpsQueueItem.resolved_at.is_(None))
        if level is not None:
            chosen = chosen.where(items.c.level == level.value)
        if raised_since is not None:
            chosen = chosen.where(items.c.raised_at >= raised_since)
        if source_id is not None:
            chosen = chosen.where(items.c.source_id == source_id)
        if after_item is not None:
            rank, at, kind, last = after_item
            chosen = chosen.where(
                or_(
                    items.c.rank > rank,
                    and_(items.c.rank == rank, items.c.raised_at > at),
                    and_(items.c.rank == rank, items.c.raised_at == at, items.c.kind > kind),
                    and_(
                        items.c.rank == rank,
                        items.c.raised_at == at,
                        items.c.kind == kind,
                        items.c.source_id > last,
                    ),
                )
            )
        page = chosen.subquery("page")
        assignee = aliased(Account)
        statement = (
            select(
                page.c.kind,
                page.c.source_id,
                page.c.room_id,
                page.c.level,
                page.c.rank,
                page.c.raised_at,
                page.c.summary,
                OpsQueueItem,
                Room.title,
                assignee.handle,
            )
            .select_from(page)
            .outerjoin(OpsQueueItem, OpsQueueItem.id == page.c.state_id)
            .outerjoin(Room, Room.id == page.c.room_id)
            .outerjoin(assignee, assignee.id == OpsQueueItem.assigned_to)
            .order_by(page.c.rank, page.c.raised_at, page.c.kind, page.c.source_id)
        )
        found = (await self.db.execute(statement)).all()
        return [_row(tuple(r)) for r in found]

    async def state(self, kind: ItemKind, source_id: uuid.UUID) -> OpsQueueItem | None:
        """The item's row, locked (two operators acting at once act one after the other)."""
        return await self.db.scalar(
            select(OpsQueueItem)
            .where(OpsQueueItem.kind == kind.value, OpsQueueItem.source_id == source_id)
            .with_for_update()
        )

    async def create_state(self, item: QueueRow, now: datetime) -> OpsQueueItem:
        """The item's row, written on the first action (a racing first action finds the
        other's row), locked."""
        values: dict[str, Any] = {
            "id": uuid.uuid4(),
            "kind": item.kind.value,
            "source_id": item.source_id,
            "room_id": item.room_id,
            "level": item.level.value,
            "summary": item.summary,
            "raised_at": item.raised_at,
            "created_at": now,
            "updated_at": now,
        }
        insert = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        await self.db.execute(
            insert(OpsQueueItem)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["kind", "source_id"])
        )
        found = await self.state(item.kind, item.source_id)
        assert found is not None  # inserted above, or by the racing action
        return found

    async def resolved_in_room(
        self, room_id: uuid.UUID, *, limit: int, after_row: After | None
    ) -> list[OpsQueueItem]:
        """The room's resolved items, newest resolution first."""
        statement = (
            select(OpsQueueItem)
            .where(OpsQueueItem.room_id == room_id, OpsQueueItem.resolved_at.is_not(None))
            .order_by(OpsQueueItem.resolved_at.desc(), OpsQueueItem.id.desc())
            .limit(limit)
        )
        statement = after(statement, OpsQueueItem.resolved_at, OpsQueueItem.id, after_row)
        return list(await self.db.scalars(statement))

    async def handles(self, account_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
        if not account_ids:
            return {}
        found = await self.db.scalars(select(Account).where(Account.id.in_(list(set(account_ids)))))
        return {account.id: account.handle for account in found}


def _row(found: tuple[Any, ...]) -> QueueRow:
    kind, source_id, room_id, level, rank, raised_at, summary, state, title, handle = found
    return QueueRow(
        kind=ItemKind(kind),
        source_id=source_id,
        room_id=room_id,
        level=Level(level),
        rank=int(rank),
        raised_at=cast(datetime, raised_at),
        summary=summary or "",
        room_title=title,
        state=state,
        assignee_handle=handle,
    )
