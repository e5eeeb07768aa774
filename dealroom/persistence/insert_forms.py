"""``INSERT`` statements of a few rows, built once per table, column set and row count, so the
raw lane keeps each one's compiled form (``Db.insert_values``)."""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Insert, Table, bindparam, insert

MANY_ROWS = 4
"""At most this many rows go in one ``INSERT`` the raw lane can take (a statement per column
set and count, built once); more go through SQLAlchemy."""

_inserts: dict[tuple[Table, tuple[str, ...], int], Insert] = {}


def fits(table: Table, values: list[dict[str, Any]]) -> bool:
    """Whether ``values`` (rows that all set the same columns) can go in a statement built
    once: at most :data:`MANY_ROWS` of them, each setting every column whose default
    SQLAlchemy would compute in Python."""
    return len(values) <= MANY_ROWS and _client_defaults(table) <= values[0].keys()


def built(table: Table, values: list[dict[str, Any]]) -> tuple[Insert, dict[str, Any]]:
    """The ``INSERT`` of ``values`` (:func:`fits`) and its parameters: row ``i``'s value of
    ``k`` binds ``k`` for the first row and ``k__i`` after it."""
    keys = tuple(values[0])
    statement = _inserts.get((table, keys, len(values)))
    if statement is None:
        rows = [
            {k: bindparam(_nth(k, i), type_=table.c[k].type) for k in keys}
            for i in range(len(values))
        ]
        statement = insert(table).values(rows[0] if len(rows) == 1 else rows)
        _inserts[(table, keys, len(values))] = statement
    params = {_nth(k, i): v for i, row in enumerate(values) for k, v in row.items()}
    return statement, params


def _nth(key: str, index: int) -> str:
    return key if index == 0 else f"{key}__{index}"


@functools.cache
def _client_defaults(table: Table) -> frozenset[str]:
    """The columns whose default SQLAlchemy computes in Python at an ``INSERT``."""
    return frozenset(c.key for c in table.columns if c.default is not None)
