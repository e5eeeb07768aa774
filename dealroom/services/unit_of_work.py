"""One unit of work for a job (a run handler, the runner's own bookkeeping): a session that
commits on a clean exit and rolls back on an error; publishes and run wake-ups buffered until
the commit and sent after it through the one after-commit path (``services/live/publish.py``).

    async with deps.unit() as uow:
        ...  # uow.db for queries, uow.publish(...) for events, uow.announce() for new runs

On an error nothing is published and no worker is woken. A failed publish or announce never
raises into the caller: the writes are committed, so the work is done whatever the broker
says (a lost wake-up is recovered by cursor replay and the workers' poll).
"""

from __future__ import annotations

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
        broker: Broker,
        signal: RunSignal | None = None,
    ) -> None:
        """``signal`` is the runner's; a job that queues no runs (the webhook worker) has
        none, and may not ``announce`` or ``wake``."""
        self.db = Db(sessionmaker)
        self._broker = broker
        self._signal = signal
        self._published: list[Publish] = []
        self._announce = False
        self._wake = False
        self._discarded = False

    def publish(self, *events: Publish) -> None:
        """Send ``events`` (in order) once the unit commits."""
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
                await self.db.rollback()
                return
            signal = self._signal
            publish_after_commit(
                self.db,
                self._broker,
                self._published,
                announce=signal if self._announce else None,
            )
            if signal is not None and self._wake and not self._announce:

                async def wake() -> None:
                    signal.wake()

                self.db.after_commit(wake)
            await self.db.commit()
        finally:
            await self.db.close()
