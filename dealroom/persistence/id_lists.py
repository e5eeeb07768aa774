"""Reads keyed by a long list of ids (the re-check rounds' and the heartbeat's, for every
stream a process holds): on PostgreSQL one statement built once, with the ids as one array
parameter (``= ANY``) on the raw lane; on SQLite, which has no arrays, one statement per
chunk of ``CHUNK`` ids in an ``IN`` list. With thousands of rooms held by a process,
compiling ``IN`` lists and building ORM rows would be much of a re-check round's cost."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Executable, Uuid, any_, bindparam
from sqlalchemy.dialects import postgresql

from dealroom.persistence.db import Db

CHUNK = 500
"""Values per ``IN (...)`` on SQLite: under its oldest bound-parameter limit (999)."""

T = TypeVar("T")


def chunks(values: Collection[T]) -> Iterator[list[T]]:
    ordered = list(values)
    for start in range(0, len(ordered), CHUNK):
        yield ordered[start : start + CHUNK]


def any_of(column: Any, param: str) -> ColumnElement[bool]:
    """``column = ANY(:param)``, ``param`` an array of UUIDs: the condition of a statement for
    :func:`rows_for` on PostgreSQL."""
    return column == any_(bindparam(param, type_=postgresql.ARRAY(Uuid())))  # type: ignore[no-any-return]


async def rows_for(
    db: Db,
    ids: Collection[Any],
    *,
    as_array: Executable,
    param: str,
    in_list: Callable[[list[Any]], Executable],
) -> list[Any]:
    """The rows of ``as_array`` (a statement built once whose ``param`` is the array of
    ``ids``) on PostgreSQL, or of ``in_list(chunk)`` for every chunk on SQLite."""
    if not ids:
        return []
    if db.dialect == "postgresql":
        return await db.rows(as_array, {param: list(ids)})
    found: list[Any] = []
    for chunk in chunks(ids):
        found.extend((await db.execute(in_list(chunk))).all())
    return found
