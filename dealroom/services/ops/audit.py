"""Every operator read goes into the audit trail (``ops_actions``) beside every operator action:
operators are trusted, not invisible. A read is one row, ``read:<field>``, naming the field
and its arguments (bounded); the trail reads back as ``opsActions`` and exports as JSON lines.

Which fields are ops reads: every query root field an ``ops:read`` key may call, the
session-only operator reads, and ``Room.ops``. Actions audit themselves where they happen
(``actions.audit``) with what they changed."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

from dealroom.domain.scopes import ROOT_FIELD_SCOPES, Scope
from dealroom.persistence.db import Db
from dealroom.persistence.models import OpsAction
from dealroom.persistence.ops_audit import OpsAuditRepository
from dealroom.persistence.paging import After
from dealroom.services.accounts.identity import Identity
from dealroom.services.clock import Clock
from dealroom.services.ops.actions import audit

SESSION_ONLY_READS: Final = frozenset({"opsPayments"})
"""Operator reads no key scope opens (they are refused to keys, K1), audited all the same."""

NESTED_READS: Final = frozenset({("Room", "ops")})
"""Operator reads reached below the root: ``room(id) { ops }`` reads as ``opsRoom``."""

MAX_ARGUMENTS: Final = 12
MAX_ARGUMENT_CHARS: Final = 300
EXPORT_BATCH: Final = 500


def is_ops_read(parent_type: str, field: str) -> bool:
    """Whether resolving ``parent_type.field`` is an operator read the trail records."""
    if parent_type == "Query":
        return ROOT_FIELD_SCOPES.get(field) == Scope.OPS_READ or field in SESSION_ONLY_READS
    return (parent_type, field) in NESTED_READS


def _bounded(value: Any) -> Any:
    """An argument as the record keeps it: JSON, and short (a filter, never a payload)."""
    text = json.dumps(value, default=str, sort_keys=True)
    if len(text) <= MAX_ARGUMENT_CHARS:
        return json.loads(text)
    return text[:MAX_ARGUMENT_CHARS] + "…"


def _room_of(arguments: Mapping[str, Any]) -> uuid.UUID | None:
    raw = arguments.get("roomId")
    if not isinstance(raw, str):
        return None
    try:
        return uuid.UUID(raw)
    except ValueError:
        return None


async def record_read(
    db: Db,
    clock: Clock,
    identity: Identity,
    field: str,
    arguments: Mapping[str, Any],
) -> OpsAction | None:
    """Record an operator's read of ``field`` (nothing for anyone else: their read is refused
    by the field itself). The caller commits it before the read is answered."""
    account = identity.account
    if account is None or not account.is_operator:
        return None
    kept = {k: _bounded(v) for k, v in list(sorted(arguments.items()))[:MAX_ARGUMENTS]}
    detail: dict[str, Any] = {"field": field, "args": kept}
    if identity.scopes is not None:
        detail["apiKey"] = True
    return await audit(db, account, f"read:{field}"[:40], _room_of(arguments), detail, clock.now())


def record_line(row: OpsAction, handle: str | None) -> str:
    """One record of the export: one JSON object on one line."""
    return json.dumps(
        {
            "id": str(row.id),
            "createdAt": row.created_at.isoformat(),
            "operatorId": str(row.operator_account_id) if row.operator_account_id else None,
            "operatorHandle": handle,
            "action": row.action,
            "roomId": str(row.room_id) if row.room_id else None,
            "detail": row.detail or {},
        },
        default=str,
        sort_keys=True,
        ensure_ascii=False,
    )


async def export_lines(
    reading: Callable[[], AbstractAsyncContextManager[Db]], room_id: uuid.UUID | None
) -> AsyncIterator[str]:
    """The whole trail (of one room, if given), newest first, as JSON lines. Each batch is
    read in a short read of its own, so a slow reader never holds a pooled connection."""
    cursor: After | None = None
    while True:
        async with reading() as db:
            found = await OpsAuditRepository(db).batch(
                room_id=room_id, limit=EXPORT_BATCH, after_row=cursor
            )
        for row, handle in found:
            yield record_line(row, handle) + "\n"
        if len(found) < EXPORT_BATCH:
            return
        last = found[-1][0]
        cursor = (last.created_at, last.id)
