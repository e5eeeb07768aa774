"""Keyset paging, newest first, on ``(timestamp, id)``: what the operator's and the partner's
paged lists share. A cursor is the last row's pair; the page after it holds the rows older
than it, or as old with a smaller id."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Select, and_, or_

AnySelect = Select[*tuple[Any, ...]]
S = TypeVar("S", bound=AnySelect)

After = tuple[datetime, uuid.UUID]
"""A parsed cursor: the timestamp and id of the last row of the page before."""


def after(statement: S, at: Any, key: Any, cursor: After | None) -> S:
    """``statement`` limited to the rows after ``cursor`` (all of them without one)."""
    if cursor is None:
        return statement
    stamp, last_id = cursor
    return statement.where(or_(at < stamp, and_(at == stamp, key < last_id)))
