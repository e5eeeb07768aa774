"""The raw lane: on PostgreSQL, a Core statement sent straight to the session's own asyncpg
connection, inside the session's transaction, bypassing SQLAlchemy's execution path (the
"lane" a statement takes instead of ``AsyncSession.execute``). When the
statement is the transaction's first, BEGIN is sent first through SQLAlchemy's own asyncpg
adapter (:func:`begin`), as SQLAlchemy sends it before its own first statement, so the
adapter's commit and rollback end it.

The SQL is the one SQLAlchemy's asyncpg dialect compiles for the statement (its ``$n``
parameters and casts), compiled once per statement; the parameters go through the dialect's
own bind processors (JSON serialised, UTC checked); the result columns through its result
processors. What comes back is one named tuple per row, read like SQLAlchemy's rows (by
attribute, by position). Measured on the turn's statements: about 90 µs of CPU a statement
against about 280 µs through ``AsyncSession.execute``.

Only statements built once belong here (``run_statements``'s, and the module-level raw SQL
of the pane log's append and the memory lease's grant and fenced release): the compiled form
is kept for the statement object's life. A statement the raw lane cannot reproduce exactly
(expanding ``IN`` parameters, a column default or ``onupdate`` SQLAlchemy computes in Python,
a result type whose processor needs the driver's type) is left to SQLAlchemy:
:func:`compiled` answers None for it.

A driver error is raised as SQLAlchemy's (``IntegrityError`` for a constraint,
``DBAPIError`` for any other refusal by the server, ``OperationalError`` with the connection
invalidated when the driver or its connection failed), so callers catch one family.
"""

from __future__ import annotations

import os
import re
import threading
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from sqlalchemy import exc
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection

Processor = Callable[[Any], Any]

enabled = os.environ.get("DEALROOM_RAW_LANE", "1") != "0"
"""Whether ``Db.rows`` may take the raw lane (``DEALROOM_RAW_LANE=0`` at start-up turns it off:
an escape hatch should a SQLAlchemy or asyncpg release change what the raw lane relies on;
``bench/turns.py --lane-ab`` alternates it to compare the two in one process)."""


@dataclass(slots=True)
class Compiled:
    """A statement compiled for the raw lane: its SQL, parameters and processors."""

    sql: str
    names: tuple[str, ...]
    """The positional parameters' names, ``$1`` first."""
    defaults: dict[str, Any]
    """Every parameter's value when the caller gives none (those fixed at build time)."""
    binders: tuple[Processor | None, ...]
    readers: tuple[Processor | None, ...] | None
    """The result columns' processors, by position; None when the statement declares no
    typed columns (``text()``): SQLAlchemy processes nothing there either."""
    columns: frozenset[str] = frozenset()
    """An ``INSERT``'s or ``UPDATE``'s table columns: SQLAlchemy would add to the statement a
    column the caller names in its parameters, so such a call goes through SQLAlchemy
    (:meth:`takes`)."""
    row: Any = field(default=None)
    """The named tuple of the result's columns, made from the first result's names."""

    def takes(self, params: Mapping[str, Any]) -> bool:
        """Whether the raw lane runs exactly what SQLAlchemy would with ``params``."""
        return not self.columns or all(
            name in self.names or name not in self.columns for name in params
        )

    def parameters(self, params: Mapping[str, Any]) -> list[Any]:
        values: list[Any] = []
        for name, binder in zip(self.names, self.binders, strict=True):
            value = params[name] if name in params else self.defaults[name]
            # None too: SQLAlchemy's JSON stores None as JSON null, not SQL NULL
            values.append(value if binder is None else binder(value))
        return values

    def rows(self, records: Sequence[asyncpg.Record]) -> list[Any]:
        if not records:
            return []
        row = self.row
        if row is None:
            row = self.row = namedtuple("Row", list(records[0].keys()), rename=True)
        readers = self.readers
        if readers is None or not any(readers):
            return [row._make(record) for record in records]
        if len(readers) != len(records[0]):
            raise RuntimeError(f"raw lane: {len(records[0])} columns, {len(readers)} expected")
        return [
            row._make(
                value if reader is None or value is None else reader(value)
                for reader, value in zip(readers, record, strict=True)
            )
            for record in records
        ]


_cache: dict[tuple[int, int], tuple[Any, Dialect, Compiled | None]] = {}
_cache_lock = threading.Lock()
CACHE_LIMIT = 512
"""Entries kept at most: the raw lane is for statements built once (a few dozen), and an entry
keeps its statement alive, so a caller handing in a fresh statement per call would otherwise
grow the cache without end. Past the limit the cache starts over (recompiling is correct,
only slower)."""


def compiled(statement: Any, dialect: Dialect) -> Compiled | None:
    """The raw lane's form of ``statement`` for ``dialect`` (cached on the statement object),
    or None when SQLAlchemy must run it."""
    key = (id(statement), id(dialect))
    found = _cache.get(key)
    if found is not None and found[0] is statement and found[1] is dialect:
        return found[2]
    built = _compile(statement, dialect)
    with _cache_lock:
        if len(_cache) >= CACHE_LIMIT:
            _cache.clear()
        # the statement and dialect are kept with the entry: their ids cannot be reused
        _cache[key] = (statement, dialect, built)
    return built


def _compile(statement: Any, dialect: Dialect) -> Compiled | None:
    if any(isinstance(d.get("type"), type) for d in getattr(statement, "column_descriptions", ())):
        return None  # a select of ORM entities: SQLAlchemy returns objects, the raw lane cannot
    form = statement.compile(dialect=dialect)
    if getattr(form, "insert_prefetch", None) or getattr(form, "update_prefetch", None):
        return None  # columns whose default SQLAlchemy computes in Python at execution
    names = tuple(getattr(form, "positiontup", None) or ())
    binds = getattr(form, "binds", {})
    binders: list[Processor | None] = []
    for name in names:
        bind = binds.get(name)
        if bind is None or bind.expanding or callable(bind.callable):
            return None
        binders.append(dialect.type_descriptor(bind.type).bind_processor(dialect))
    defaults = {name: binds[name].effective_value for name in names if not binds[name].required}
    readers: tuple[Processor | None, ...] | None = None
    columns = getattr(statement, "exported_columns", None)
    if columns is not None and len(columns):
        try:
            readers = tuple(
                dialect.type_descriptor(column.type).result_processor(dialect, None)
                for column in columns
            )
        except Exception:
            return None  # the processor needs the driver's column type: SQLAlchemy's job
    targets: frozenset[str] = frozenset()
    if getattr(form, "isinsert", False) or getattr(form, "isupdate", False):
        targets = frozenset(column.key for column in statement.table.columns)
    return Compiled(form.string, names, defaults, tuple(binders), readers, targets)


_DML = re.compile(r"(INSERT|UPDATE|DELETE)\b")
_PLACEHOLDER = re.compile(r"\$(\d+)")
_RETURNING = re.compile(r"\bRETURNING\b")
_batches: dict[tuple[int, ...], tuple[tuple[Compiled, ...], Compiled | None]] = {}
"""Batches built, by their writes' ids and the positions checked."""


def batch(writes: Sequence[Compiled], checked: tuple[int, ...] = ()) -> Compiled | None:
    """Several writes as one statement, so the lot costs one round trip: every one but the
    last a data-modifying ``WITH`` entry, the last the statement itself; or, with
    ``checked`` (positions of writes whose ``RETURNING`` must give a row), every one an
    entry and the statement one row of how many rows each checked write returned, in the
    order given. PostgreSQL runs them on one snapshot, none seeing another's effects, in no
    set order: only for writes that are independent (no two touch one row, none reads what
    another writes) and whose results nobody reads (``Db.defer``). Parameter ``n`` of write
    ``i`` is named ``"i:n"``. None when a write cannot be nested (one with its own
    ``WITH``, or a quoted literal the renumbering could misread) or a checked one returns
    nothing: the caller sends them one by one."""
    key = (*(id(write) for write in writes), -1, *checked)
    found = _batches.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], writes, strict=True)):
        return found[1]
    built = _batch(writes, checked)
    with _cache_lock:
        if len(_batches) >= CACHE_LIMIT:
            _batches.clear()
        _batches[key] = (tuple(writes), built)
    return built


@dataclass(slots=True)
class _Nested:
    """Writes renumbered to follow ``names``' parameters, for a ``WITH`` of several."""

    parts: list[str]
    names: list[str]
    defaults: dict[str, Any]
    binders: list[Processor | None]


def _nested(
    writes: Sequence[Compiled], checked: tuple[int, ...], after: Compiled | None = None
) -> _Nested | None:
    """``writes``' SQL with their parameters numbered after ``after``'s (if any), write ``i``'s
    parameter ``n`` named ``"i:n"``; None when one cannot be nested (not a plain
    ``INSERT``/``UPDATE``/``DELETE``, a quoted literal the renumbering could misread, or a
    checked one without ``RETURNING``)."""
    nested = _Nested(
        [],
        list(after.names) if after else [],
        dict(after.defaults) if after else {},
        list(after.binders) if after else [],
    )
    for index, write in enumerate(writes):
        if not _DML.match(write.sql) or "'" in write.sql or "$$" in write.sql:
            return None
        if index in checked and not _RETURNING.search(write.sql):
            return None
        nested.parts.append(_renumbered(write.sql, len(nested.names)))
        nested.names.extend(f"{index}:{name}" for name in write.names)
        nested.defaults.update({f"{index}:{name}": v for name, v in write.defaults.items()})
        nested.binders.extend(write.binders)
    return nested


def _batch(writes: Sequence[Compiled], checked: tuple[int, ...]) -> Compiled | None:
    nested = _nested(writes, checked)
    if nested is None:
        return None
    parts = nested.parts
    if checked:
        entries, tail = (
            parts,
            "SELECT " + ", ".join(f"(SELECT count(*) FROM w{i}) AS c{i}" for i in checked),
        )
    else:
        *entries, tail = parts
    sql = "WITH " + ", ".join(f"w{i} AS ({part})" for i, part in enumerate(entries)) + " " + tail
    return Compiled(sql, tuple(nested.names), nested.defaults, tuple(nested.binders), None)


_folds: dict[tuple[object, ...], tuple[tuple[Compiled, ...], Compiled | None]] = {}
"""Folds built, by their statements' ids, the positions checked and the lead's entry."""


def folded(
    lead: Compiled, writes: Sequence[Compiled], checked: tuple[int, ...], stored: str
) -> Compiled | None:
    """``lead``, a ``WITH`` statement, with ``writes`` as further entries of its ``WITH``
    (``w0``, ``w1``, …; their parameters named as in :func:`batch`), and its rows as they
    were, each with one more column, ``written``, that fails the whole statement unless the
    lead's entry ``stored`` and each checked write returned a row: one over the product of
    their row counts, a division by zero otherwise (``NOT_WRITTEN``). A single statement is
    atomic, so a refusal anywhere in it writes nothing. For ``Db.write_autocommit``: the writes
    as :func:`batch` requires them, independent of each other and of the lead's writes.
    None when the lead has no ``WITH`` or a write cannot be nested."""
    key = (id(lead), *(id(write) for write in writes), -1, *checked, stored)
    found = _folds.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], (lead, *writes), strict=True)):
        return found[1]
    built = _fold(lead, writes, checked, stored)
    with _cache_lock:
        if len(_folds) >= CACHE_LIMIT:
            _folds.clear()
        _folds[key] = ((lead, *writes), built)
    return built


NOT_WRITTEN = asyncpg.exceptions.DivisionByZeroError
"""What a fold's ``written`` column raises when its lead stored nothing or a checked write
was refused (:func:`folded`)."""


def _fold(
    lead: Compiled, writes: Sequence[Compiled], checked: tuple[int, ...], stored: str
) -> Compiled | None:
    sql = lead.sql.strip()
    if not sql.startswith("WITH ") or "'" in sql or "$$" in sql or not stored.isidentifier():
        return None
    final = _top_level_select(sql)
    if final is None:
        return None
    nested = _nested(writes, checked, after=lead)
    if nested is None:
        return None
    counts = " * ".join(
        f"(SELECT count(*) FROM {entry})" for entry in (stored, *(f"w{i}" for i in checked))
    )
    entries = sql[:final].rstrip()
    if nested.parts:
        entries += ", " + ", ".join(f"w{i} AS ({part})" for i, part in enumerate(nested.parts))
    # The guard is a one-row side of the join, so it is computed even when the lead's own
    # rows are none.
    text = (
        f"{entries} SELECT lead.*, guard.written FROM (SELECT 1 / ({counts}) AS written) AS guard"
        f" LEFT JOIN ({sql[final:]}) AS lead ON true"
    )
    readers = None if lead.readers is None else (*lead.readers, None)
    return Compiled(text, tuple(nested.names), nested.defaults, tuple(nested.binders), readers)


def _top_level_select(sql: str) -> int | None:
    """Where a ``WITH`` statement's own ``SELECT`` starts: the first ``SELECT`` outside
    every parenthesis."""
    depth = 0
    for match in re.finditer(r"[()]|\bSELECT\b", sql):
        token = match.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif depth == 0:
            return match.start()
    return None


def _renumbered(sql: str, offset: int) -> str:
    def shifted(match: re.Match[str]) -> str:
        return f"${int(match.group(1)) + offset}"

    return _PLACEHOLDER.sub(shifted, sql)


async def begin(connection: AsyncConnection, adapter: Any) -> None:
    """Send BEGIN on ``adapter``, SQLAlchemy's asyncpg adapter of ``connection``'s driver
    connection, exactly as the adapter does before the first statement it runs (its
    ``_start_transaction``, under its execute mutex, so it also tracks the transaction and
    its commit and rollback end it). A failure is raised as SQLAlchemy raises a lost
    connection's, with the connection invalidated, so the unit's rollback does not fail
    on it."""
    try:
        async with adapter._execute_mutex:
            if adapter._transaction is None:
                await adapter._start_transaction()
    except Exception as error:
        await connection.invalidate(error)
        raise exc.OperationalError("BEGIN", (), error, connection_invalidated=True) from error


async def fetch(
    connection: AsyncConnection,
    driver: asyncpg.Connection,
    statement: Compiled,
    params: Mapping[str, Any],
) -> list[Any]:
    """Run ``statement`` with ``params`` on ``driver``, the asyncpg connection under
    ``connection`` (inside its transaction). The engine's ``before_cursor_execute`` and
    ``after_cursor_execute`` listeners hear the statement as through SQLAlchemy, with the
    connection but without a cursor or execution context (``cursor is None`` tells a raw lane
    statement). A connection the driver lost or left mid-operation is invalidated before the
    error is raised, as SQLAlchemy does, so the unit's rollback does not fail on it."""
    values = statement.parameters(params)
    sync = connection.sync_connection
    dispatch = sync.engine.dispatch if sync is not None else None
    if dispatch is not None:
        for listener in dispatch.before_cursor_execute:
            listener(sync, None, statement.sql, values, None, False)
    try:
        records = await driver.fetch(statement.sql, *values)
    except asyncpg.exceptions.IntegrityConstraintViolationError as error:
        raise exc.IntegrityError(statement.sql, values, error) from error
    except asyncpg.exceptions.PostgresConnectionError as error:
        await connection.invalidate(error)
        raise exc.OperationalError(
            statement.sql, values, error, connection_invalidated=True
        ) from error
    except asyncpg.exceptions.PostgresError as error:  # the server refused the statement
        raise exc.DBAPIError(statement.sql, values, error) from error
    except Exception as error:
        # The driver or its connection failed (closed, or left mid-operation): nothing more
        # can be trusted on it, so it is let go, as SQLAlchemy does with a disconnect, and
        # the unit's rollback does not fail on it.
        await connection.invalidate(error)
        raise exc.OperationalError(
            statement.sql, values, error, connection_invalidated=True
        ) from error
    if dispatch is not None:
        for listener in dispatch.after_cursor_execute:
            listener(sync, None, statement.sql, values, None, False)
    return statement.rows(records)


__all__ = ["NOT_WRITTEN", "Compiled", "batch", "begin", "compiled", "fetch", "folded"]
