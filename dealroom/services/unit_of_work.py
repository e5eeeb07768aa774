"""One unit of work for a request or a job (a run handler, a sweep, the runner's own
bookkeeping): a session that commits on a clean exit and rolls back on an error; publishes and
run wake-ups buffered until the commit and sent after it through the one after-commit path
(``services/live/publish.py``).

    async with deps.unit() as uow:
        ...  # uow.db for queries, uow.publish(...) for events, uow.announce() for new runs

A request's context makes its unit (``schema/context.py``) and commits it at the mutation's
boundary (``Context.transaction``); the app closes it when the response is sent.

On an error nothing is published and no worker is woken. A failed publish or announce never
raises into the caller: the writes are committed, so the work is done whatever the broker
says (a lost wake-up is recovered by cursor replay and the workers' poll).

A read outside any unit (a subscription's replay, a sweep's first look) takes
:func:`reading`: nothing else in the services makes a session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.persistence.db import Db
from dealroom.realtime.broker import Broker
from dealroom.services.live.publish import Publish, RunSignal, publish_after_commit

log = structlog.get_logger(__name__)


class UnitOfWork:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        broker: Broker | None = None,
        signal: RunSignal | None = None,
    ) -> None:
        """``signal`` is the runner's; a job that queues no runs (the webhook worker) has
        none, and may not ``announce`` or ``wake``. A unit that only writes rows (the
        ledger's failed calls) has no ``broker`` and may not ``publish``."""
        self.db = Db(sessionmaker)
        self._broker = broker
        self._signal = signal
        self._published: list[Publish] = []
        self._announce = False
        self._wake = False
        self._discarded = False

    def publish(self, *events: Publish) -> None:
        """Send ``events`` (in order) once the unit commits."""
        if self._broker is None:
            raise RuntimeError("this unit of work has no broker to publish to")
        self._published.extend(events)

    def announce(self) -> None:
        """Runs were queued: tell every process's runner once the unit commits."""
        if self._signal is None:
            raise RuntimeError("this unit of work has no runner to announce to")
        self._announce = True

    def wake(self) -> None:
        """Runs became due again (a retry, a run put back): wake this process's workers
        once the unit commits."""
        if self._signal is None:
            raise RuntimeError("this unit of work has no runner to wake")
        self._wake = True

    def discard(self) -> None:
        """End without writing: roll back on exit, publish nothing (not an error)."""
        self._discarded = True

    async def commit(self) -> None:
        """Commit now; the buffered publishes and wake-ups go out after the commit. The session
        stays open: a request's response still reads after its mutation commits."""
        published, self._published = self._published, []
        announce, wake, self._announce, self._wake = self._announce, self._wake, False, False
        signal = self._signal
        if self._broker is not None:
            publish_after_commit(
                self.db, self._broker, published, announce=signal if announce else None
            )
        if signal is not None and wake and not announce:

            async def woken() -> None:
                signal.wake()

            self.db.after_commit(woken)
        await self.db.commit()

    async def rollback(self) -> None:
        """Roll back: nothing buffered is published, no worker is woken."""
        self._published, self._announce, self._wake = [], False, False
        await self.db.rollback()

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> UnitOfWork:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc_type is not None or self._discarded:
                await self.rollback()
            else:
                await self.commit()
        finally:
            await self.close()


@asynccontextmanager
async def reading(sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[Db]:
    """A short read in a session of its own, closed on exit (rolling back anything it began),
    so no connection is held while a client reads a stream or a provider answers."""
    db = Db(sessionmaker)
    try:
        yield db
    finally:
        await db.close()
