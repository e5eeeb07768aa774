"""A unit of work: one session per request or job, committed at the boundary.

Services and repositories ``flush()``; only the boundary (a mutation resolver, a job) commits.
Side effects such as broker publishes are registered with ``after_commit`` and run only once
the transaction is durable; a rollback drops them. One exception on PostgreSQL: a unit whose
only write is one statement may send it with no transaction around it (``write_autocommit``,
a participant's post), and that statement commits itself; the after-commit callbacks still wait
for the boundary's ``commit``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import structlog
from sqlalchemy import Executable, Result, Select, Table, insert, inspect
from sqlalchemy.exc import DBAPIError, ResourceClosedError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from dealroom.persistence import deferred, insert_forms, raw_lane
from dealroom.persistence.deferred import Deferred

log = structlog.get_logger(__name__)

T = TypeVar("T")
AfterCommit = Callable[[], Awaitable[None]]


class Db:
    """A request's session, serialised behind a lock.

    strawberry resolves sibling fields concurrently and an ``AsyncSession`` must never be used
    by two coroutines at once, so every statement goes through this lock."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker
        self._session: AsyncSession | None = None
        self._dialect: str | None = None
        self._lock = asyncio.Lock()
        self._after_commit: list[AfterCommit] = []
        self._deferred: list[Deferred] = []
        self._autocommit_connection: tuple[AsyncConnection, Any] | None = None
        """A connection of the unit's own, outside any session and never in a transaction,
        so each statement on it commits by itself: where a unit whose only write may be
        autocommitted (a guest's post) reads and writes before it needs a session, if it ever
        does (:meth:`_autocommit_driver`)."""
        self._session_driver: tuple[object, tuple[AsyncConnection, Any, Any]] | None = None
        """The session's transaction the raw lane last looked at, with its connection, that
        connection's asyncpg connection and SQLAlchemy's adapter of it (PostgreSQL only).
        Kept, not cleared at the commit: a new transaction is a new object, so the identity
        check in ``_driver`` never hands out a connection of an ended one."""

    @property
    def session(self) -> AsyncSession:
        if self._session is None:
            self._session = self._sessionmaker()
        return self._session

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``. Kept once read: a unit's bind never changes, and
        asking the session for it on every statement shows in a busy server's profile."""
        if self._dialect is None:
            bind = self._sessionmaker.kw.get("bind")
            engine = bind if isinstance(bind, AsyncEngine) else self.session.get_bind()
            self._dialect = engine.dialect.name
        return self._dialect

    async def _run(
        self,
        operation: Callable[[], Awaitable[T]],
        *,
        deferred_first: bool = True,
        on_autocommit_connection: bool = False,
    ) -> T:
        """Run one session operation under the lock, to completion even if the caller is
        cancelled: graphql-core cancels sibling resolvers when one fails, and a statement cut
        off mid-flight leaves the session needing a rollback (PendingRollbackError, and on
        PostgreSQL a connection discarded per request). Cancellation is re-raised after.
        The deferred writes go first unless the operation takes them itself.
        ``on_autocommit_connection``: an operation that may run on the unit's autocommit
        connection; any other releases it first (the session takes a connection of its own)."""
        async with self._lock:
            release = self._autocommit_connection is not None and not on_autocommit_connection
            send = bool(self._deferred) and deferred_first
            task = asyncio.ensure_future(
                self._prepared(operation, release=release, send=send)
                if release or send
                else operation()
            )
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                await asyncio.wait([task])
                if not task.cancelled():
                    task.exception()  # retrieved: it belongs to a caller that is gone
                raise

    async def _prepared(
        self, operation: Callable[[], Awaitable[T]], *, release: bool, send: bool
    ) -> T:
        """``operation`` after returning the autocommit connection to the pool (``release``)
        and sending the deferred writes (``send``), all in the task the caller's cancel cannot
        cut short."""
        if release:
            await self._release_autocommit_connection()
        if send:
            await self._send_deferred()
        return await operation()

    def defer(
        self,
        statement: Executable,
        params: dict[str, Any],
        *,
        refuse: Callable[[], BaseException] | None = None,
    ) -> None:
        """Send a write later: before the unit's next statement, or at its commit. For a
        write whose result nobody reads and that nothing in the unit reads back before the
        next statement (a turn's closing writes, say). On PostgreSQL the writes
        deferred in a row go as one statement (``raw_lane.batch``), so they must also be
        independent of each other: no two touching one row. An error surfaces at the
        statement or commit that sends them, and the unit rolls back as for any other.
        With ``refuse``, the write's ``RETURNING`` must give a row (a check such as a run
        still being this claim), else ``refuse()`` is raised there. A statement built once,
        as for :meth:`rows`."""
        self._deferred.append(Deferred(statement, params, refuse))

    async def _send_deferred(self) -> None:
        queued, self._deferred = self._deferred, []
        if len(queued) > 1 and raw_lane.enabled and await self._batched(queued):
            return
        for write in queued:
            found = await self._rows(write.statement, write.params)
            if write.refuse is not None and not found:
                raise write.refuse()

    async def _batched(self, queued: list[Deferred]) -> bool:
        """Send ``queued`` as one statement on the raw lane; False when it cannot (nothing
        sent then)."""
        found = await self._driver()
        return found is not None and await deferred.send_batched(*found, queued)

    async def execute(
        self, statement: Executable, params: dict[str, Any] | None = None
    ) -> Result[Any]:
        return await self._run(lambda: self.session.execute(statement, params))

    async def rows(
        self, statement: Executable, params: dict[str, Any], *, begin: bool = True
    ) -> list[Any]:
        """A Core statement's rows (named tuples, read by attribute or position). On
        PostgreSQL it runs on the session's asyncpg connection directly, inside the
        session's transaction, beginning it when nothing was sent yet (``raw_lane``: about
        a third of the CPU); on SQLite, and for a statement the raw lane cannot reproduce,
        through the session. For statements built once (``run_statements``', module-level
        raw SQL): the raw lane keeps each one's compiled form. ``begin=False``: a read that, when
        the unit has begun no transaction yet, runs on the autocommit connection without
        beginning one (no BEGIN: READ COMMITTED reads each statement on a snapshot of its own
        anyway), for a unit whose only write may then be autocommitted
        (:meth:`write_autocommit`)."""

        return await self._run(
            lambda: self._rows(statement, params, begin=begin), on_autocommit_connection=not begin
        )

    async def _rows(
        self, statement: Executable, params: dict[str, Any], *, begin: bool = True
    ) -> list[Any]:
        found = await self._driver(begin=begin) if raw_lane.enabled else None
        if found is not None:
            connection, driver = found
            form = raw_lane.compiled(statement, connection.dialect)
            if form is not None and form.takes(params):
                return await raw_lane.fetch(connection, driver, form, params)
        await self._release_autocommit_connection()
        result = await self.session.execute(statement, params)
        try:
            return list(result.all())
        except ResourceClosedError:  # a statement without RETURNING: no rows
            return []

    async def _driver(self, *, begin: bool = True) -> tuple[AsyncConnection, Any] | None:
        """The session's connection and its asyncpg connection, inside a transaction begun on
        it; None on SQLite. When nothing was sent on the connection yet, the raw lane sends BEGIN
        through SQLAlchemy's own asyncpg adapter, as SQLAlchemy does before a transaction's
        first statement (``raw_lane.begin``), so that first statement runs on the lane too
        (most of a turn's statements are one: each run's claim, Distil's lease and its fenced
        release). ``begin=False``: the connection as it is, in a transaction or not (the
        autocommit connection while the unit has no session)."""
        if self.dialect != "postgresql":
            return None
        if not begin and self._session is None:
            return await self._autocommit_driver()
        session = self.session
        transaction = session.sync_session.get_transaction()
        seen = self._session_driver
        if transaction is None or seen is None or seen[0] is not transaction:
            connection = await session.connection()  # begins the session's transaction
            raw = await connection.get_raw_connection()
            found = (connection, raw.driver_connection, raw.dbapi_connection)
            seen = self._session_driver = (session.sync_session.get_transaction(), found)
        connection, driver, adapter = seen[1]
        if begin and not driver.is_in_transaction():
            await raw_lane.begin(connection, adapter)
            if not driver.is_in_transaction():
                return None  # an engine in autocommit mode: no transaction for the raw lane to join
        return connection, driver

    async def _autocommit_driver(self) -> tuple[AsyncConnection, Any]:
        """The unit's autocommit connection and its asyncpg connection, checked out of the
        engine's pool on first use. A unit that reads and then autocommits its only write never
        makes a session:
        an ``AsyncSession``'s transaction bookkeeping around a connection it never began a
        transaction on, and its commit that sent nothing, are CPU a busy server spends for
        no work."""
        if self._autocommit_connection is None:
            bind = self._sessionmaker.kw.get("bind")
            if not isinstance(bind, AsyncEngine):
                raise RuntimeError("Db: a sessionmaker bound to an AsyncEngine")
            connection = await bind.connect()
            try:
                raw = await connection.get_raw_connection()
            except BaseException:
                await connection.close()
                raise
            self._autocommit_connection = (connection, raw.driver_connection)
        return self._autocommit_connection

    async def _release_autocommit_connection(self) -> None:
        """Return the autocommit connection to the pool (it never began a transaction: what
        it wrote committed on its own)."""
        held, self._autocommit_connection = self._autocommit_connection, None
        if held is not None:
            await held[0].close()

    async def can_write_autocommit(self) -> bool:
        """Whether the unit can still send its only write as one autocommitted statement
        (:meth:`write_autocommit`): PostgreSQL's raw lane, no transaction begun and nothing
        deferred."""
        if not raw_lane.enabled or self.dialect != "postgresql" or self._deferred:
            return False

        async def check() -> bool:
            found = await self._driver(begin=False)
            return found is not None and not found[1].is_in_transaction()

        return await self._run(check, on_autocommit_connection=True)

    async def write_autocommit(
        self, statement: Executable, params: dict[str, Any], *, stored: str
    ) -> list[Any] | None:
        """The unit's only write: ``statement`` (a ``WITH`` statement on the raw lane) with
        the deferred writes folded into it (``raw_lane.folded``), sent as one statement
        without BEGIN or COMMIT, so PostgreSQL commits it on its own: one round trip where a
        transaction takes four (BEGIN, the statement, the deferred writes, COMMIT). Its rows
        as the statement's own, or None when its entry ``stored`` returned no row or a
        deferred write's ``refuse`` check failed: then nothing was written, and the deferred
        writes are dropped. Only after :meth:`can_write_autocommit` answered True, and only for
        a unit whose every write is in this statement: nothing after it joins it. The
        after-commit callbacks still run at :meth:`commit`."""
        return await self._run(
            lambda: self._write_autocommit(statement, params, stored),
            deferred_first=False,
            on_autocommit_connection=True,
        )

    async def _write_autocommit(
        self, statement: Executable, params: dict[str, Any], stored: str
    ) -> list[Any] | None:
        queued, self._deferred = self._deferred, []
        found = await self._driver(begin=False)
        if found is None or found[1].is_in_transaction():
            raise RuntimeError(
                "write_autocommit: the unit has begun a transaction (see can_write_autocommit())"
            )
        connection, driver = found
        fold = deferred.folded(statement, params, queued, connection.dialect, stored)
        if fold is None:
            raise RuntimeError("write_autocommit: a statement the raw lane cannot fold")
        form, merged = fold
        try:
            return await raw_lane.fetch(connection, driver, form, merged)
        except DBAPIError as error:
            if isinstance(error.orig, raw_lane.NOT_WRITTEN):
                return None
            raise

    async def scalar(self, statement: Select[T]) -> T | None:
        return await self._run(lambda: self.session.scalar(statement))

    async def scalars(
        self, statement: Select[T], params: dict[str, Any] | None = None
    ) -> Sequence[T]:
        async def run() -> Sequence[T]:
            return (await self.session.scalars(statement, params)).all()

        return await self._run(run)

    async def get(self, model: type[T], ident: object) -> T | None:
        return await self._run(lambda: self.session.get(model, ident))

    async def add(self, *rows: object) -> None:
        if not rows:
            return

        async def run() -> None:
            self.session.add_all(rows)
            await self.session.flush()

        await self._run(run)

    async def insert(self, rows: Sequence[object], *, later: bool = False) -> None:
        """Insert new rows of one mapped class in one Core ``INSERT``, without the session's
        unit-of-work flush (about a third less CPU a row on PostgreSQL than through ``add``).
        Only for plain rows that nothing else in
        the transaction refers to and that are not read back, such as the model ledger's.
        Every row must set the same attributes; columns none of them set take their
        defaults. ``later``: up to ``insert_forms.MANY_ROWS`` such rows go with the unit's
        other deferred writes (:meth:`defer`); more go at once."""
        if not rows:
            return
        mapper = inspect(type(rows[0]))
        columns = {prop.key: prop.columns[0].key for prop in mapper.column_attrs}
        values = [
            {columns[name]: value for name, value in vars(row).items() if name in columns}
            for row in rows
        ]
        if any(
            type(row) is not type(rows[0]) or found.keys() != values[0].keys()
            for row, found in zip(rows, values, strict=True)
        ):
            raise ValueError("insert() takes rows of one class that set the same attributes")
        table = mapper.local_table
        assert isinstance(table, Table)
        await self.insert_values(table, values, later=later)

    async def insert_values(
        self, table: Table, values: list[dict[str, Any]], *, later: bool = False
    ) -> None:
        """:meth:`insert` of rows given as their columns' values (by column key), without
        building mapped objects first (a post's two runs as ``AgentRun`` instances cost more
        than their ``INSERT``)."""
        if not values:
            return
        if insert_forms.fits(table, values):
            # A few rows that set every column SQLAlchemy would fill in Python: the raw lane
            # can take them (a statement per column set and count, built once).
            statement, flat = insert_forms.built(table, values)
            if later:
                self.defer(statement, flat)
            else:
                await self.rows(statement, flat)
            return
        many = insert(table)
        params: dict[str, Any] | list[dict[str, Any]] = values[0] if len(values) == 1 else values
        await self._run(lambda: self.session.execute(many, params))

    async def flush(self) -> None:
        await self._run(self.session.flush)

    def after_commit(self, callback: AfterCommit) -> None:
        self._after_commit.append(callback)

    async def commit(self) -> None:
        async with self._lock:
            await self._release_autocommit_connection()
            if self._deferred:
                await self._send_deferred()
            if self._session is not None:
                await self._session.commit()
        callbacks, self._after_commit = self._after_commit, []
        for callback in callbacks:
            try:
                await callback()
            except Exception:
                # The record is committed; a lost wake-up is recovered by cursor replay.
                log.exception("after_commit_failed")

    async def rollback(self) -> None:
        self._after_commit.clear()
        self._deferred.clear()
        async with self._lock:
            await self._release_autocommit_connection()
            if self._session is not None:
                await self._session.rollback()

    async def close(self) -> None:
        self._after_commit.clear()
        self._deferred.clear()
        async with self._lock:
            await self._release_autocommit_connection()
            if self._session is not None:
                await self._session.close()
                self._session = None
