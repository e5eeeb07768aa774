"""Every model call goes through here: it is timed, priced and written to ``model_calls``
(ARCHITECTURE "Agents"), whatever the engine and whether it succeeded."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.models.base import Chunk, Generation, ModelClient, ModelRequest, Usage
from dealroom.agents.models.pricing import price
from dealroom.persistence.models import ModelCall
from dealroom.services.clock import Clock
from dealroom.services.ops import metrics
from dealroom.services.unit_of_work import UnitOfWork

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where a call is made. Successful calls are collected in ``rows`` and stored in the
    run's own transaction (no extra commit per call); failed ones are stored at once."""

    room_id: uuid.UUID
    run_id: uuid.UUID | None
    rows: list[ModelCall]


class Ledger:
    """A model client that records what it costs."""

    def __init__(
        self,
        client: ModelClient,
        sessionmaker: async_sessionmaker[AsyncSession],
        clock: Clock,
    ) -> None:
        self.client = client
        self._sessionmaker = sessionmaker
        self._clock = clock

    async def generate(self, request: ModelRequest, site: CallSite) -> Generation:
        started = time.perf_counter()
        try:
            generation = await self.client.generate(request)
        except Exception as exc:
            await self._store_failure(self._row(request, site, Usage(), started, exc))
            raise
        site.rows.append(self._row(request, site, generation.usage, started))
        return generation

    async def stream(self, request: ModelRequest, site: CallSite) -> AsyncIterator[Chunk]:
        started = time.perf_counter()
        usage = Usage()
        try:
            async for chunk in self.client.stream(request):
                if chunk.usage is not None:
                    usage = chunk.usage
                yield chunk
        except Exception as exc:
            await self._store_failure(self._row(request, site, usage, started, exc))
            raise
        site.rows.append(self._row(request, site, usage, started))

    def _row(
        self,
        request: ModelRequest,
        site: CallSite,
        usage: Usage,
        started: float,
        error: BaseException | None = None,
    ) -> ModelCall:
        latency_ms = int((time.perf_counter() - started) * 1000)
        # The offline engine stands in for the configured model: the row names that model
        # (so a room's picks are visible) and is priced 0.
        billed = "offline" if self.client.engine == "offline" else request.model
        cost = price(billed, usage)
        metrics.model_call(request.agent.value, request.model, usage, cost)
        return ModelCall(
            id=uuid.uuid4(),  # set here, so the insert can take the raw lane (Db.insert)
            room_id=site.room_id,
            run_id=site.run_id,
            agent=request.agent.value,
            engine=self.client.engine,
            model=request.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            price_usd=cost,
            latency_ms=latency_ms,
            ok=error is None,
            error=None if error is None else f"{type(error).__name__}: {error}"[:2000],
            created_at=self._clock.now(),
        )

    async def keep(self, site: CallSite) -> None:
        """Store the successful calls of a run that then failed: they were billed."""
        rows, site.rows[:] = list(site.rows), []
        for row in rows:
            await self._store_failure(row)

    async def _store_failure(self, row: ModelCall) -> None:
        # Its own short transaction: the ledger keeps failed calls whose turn rolls back.
        try:
            async with UnitOfWork(self._sessionmaker) as unit:
                await unit.db.add(row)
        except Exception:
            log.exception("ledger_write_failed", agent=row.agent)
