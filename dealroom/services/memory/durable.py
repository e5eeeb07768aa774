"""Writing durable account memory: every write takes the account row lock, checks the version
it read (optimistic versioning), and records what actually changed — one history row and one
leaf date per changed leaf (D1). Also the owner's reads and the operator's revert (D6)."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dealroom.domain import durable
from dealroom.domain.cursors import memory_change_cursor, parse_memory_change_cursor
from dealroom.domain.errors import DomainError, ErrorCode, not_found
from dealroom.persistence.db import Db
from dealroom.persistence.durable import DurableRepository
from dealroom.persistence.models import AccountMemory, MemoryChange
from dealroom.services.accounts.identity import Identity

OPERATOR = "operator"

Edit = Callable[[dict[str, Any]], dict[str, Any]]
"""A pure edit of a copy of the current document, made under the lock."""


class StaleWrite(Exception):
    """The document moved on between the read and the write: the writer retries."""


@dataclass(frozen=True, slots=True)
class Written:
    version: int
    """The version after the write (unchanged when nothing changed)."""
    before: int
    changes: list[durable.LeafChange]
    rows: list[MemoryChange]


async def write(
    db: Db,
    account_id: uuid.UUID,
    edit: Edit,
    *,
    now: datetime,
    agent: str,
    room_id: uuid.UUID | None = None,
    run_id: uuid.UUID | None = None,
    actor_id: uuid.UUID | None = None,
    reverts_id: uuid.UUID | None = None,
) -> Written | None:
    """Apply ``edit`` to the account's document under its row lock. None when the account is
    gone. A write that changes no leaf writes nothing (D1)."""
    repo = DurableRepository(db)
    if not await repo.lock_account(account_id):
        return None
    memory = await repo.memory(account_id, fresh=True)
    if memory is None:
        memory = AccountMemory(account_id=account_id, document={}, version=0, updated_at=now)
        await db.add(memory)
        await db.flush()
    before = copy.deepcopy(dict(memory.document or {}))
    after = durable.prune(edit(copy.deepcopy(before)))
    changes = durable.diff(before, after)
    if not changes:
        return Written(memory.version, memory.version, [], [])
    if not await repo.bump(account_id, memory.version, after, now):
        raise StaleWrite(f"account memory of {account_id} moved on")
    version = memory.version + 1
    rows = [
        MemoryChange(
            id=uuid.uuid4(),
            account_id=account_id,
            version=version,
            path=change.path,
            old_value=change.old,
            new_value=change.new,
            room_id=room_id,
            run_id=run_id,
            agent=agent,
            actor_account_id=actor_id,
            reverts_id=reverts_id,
            created_at=now,
        )
        for change in changes
    ]
    await db.add(*rows)
    await repo.stamp(account_id, [(c.path, c.new is not None) for c in changes], now.date())
    return Written(version, version - 1, changes, rows)


# --- reads ---


@dataclass(frozen=True, slots=True)
class DurableView:
    document: dict[str, Any]
    version: int
    updated_at: datetime | None
    dates: dict[str, date]


async def view(db: Db, account_id: uuid.UUID) -> DurableView:
    repo = DurableRepository(db)
    memory = await repo.memory(account_id)
    dates = await repo.leaf_dates(account_id)
    if memory is None:
        return DurableView({}, 0, None, dates)
    return DurableView(dict(memory.document or {}), memory.version, memory.updated_at, dates)


def history_cursor(row: MemoryChange) -> str:
    return memory_change_cursor(row.created_at, row.id)


@dataclass(frozen=True, slots=True)
class HistoryPage:
    rows: list[MemoryChange]
    has_next: bool


async def history(db: Db, account_id: uuid.UUID, *, first: int, after: str | None) -> HistoryPage:
    before = parse_memory_change_cursor(after) if after is not None else None
    rows = await DurableRepository(db).history(account_id, limit=first + 1, before=before)
    return HistoryPage(rows[:first], len(rows) > first)


# --- operators ---


async def revert(db: Db, identity: Identity, change_id: uuid.UUID, now: datetime) -> MemoryChange:
    """D6: put the leaf back to what it was before the change, as a new recorded change."""
    operator = identity.account
    if operator is None or not operator.is_operator:
        raise DomainError(ErrorCode.NOT_FOUND, "Not found.")
    repo = DurableRepository(db)
    change = await repo.change(change_id)
    if change is None:
        raise not_found("MemoryChange")
    path, old, new = change.path, change.old_value, change.new_value

    def edit(document: dict[str, Any]) -> dict[str, Any]:
        if durable.revert_conflicts(document, path, new):
            raise DomainError(
                ErrorCode.CONFLICT,
                "This leaf changed again since; revert the later change first.",
            )
        durable.set_leaf(document, path, old)
        return document

    written = await write(
        db,
        change.account_id,
        edit,
        now=now,
        agent=OPERATOR,
        actor_id=operator.id,
        reverts_id=change.id,
    )
    if written is None:
        raise not_found("Account")
    if not written.rows:
        raise DomainError(ErrorCode.CONFLICT, "Nothing to revert: the leaf already holds that.")
    return written.rows[0]
