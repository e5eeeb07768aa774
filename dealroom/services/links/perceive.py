"""Perceiving a turn's links: the links of this pane's messages in the session, those of the
posts the turn answers read now (at most ``links_per_message`` a post), each stored once as a
perceived-link record and returned as quoted material for this pane's agents only.

A link is read by the Gemini URL Context reader when the Gemini engine is on (accepted only on
its retrieval metadata's word, ``agents/link_reader.py``), else, or when that fails, by the
guarded fetch and the extractor. The same URL read in the same room within the cache window is
reused. Every read is in the ledger: the reader's model call and the fetch (``engine='http'``,
priced 0), so an operator sees what links cost."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING

import structlog
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from dealroom.agents.links import LinkQuote
from dealroom.agents.models.base import Usage
from dealroom.agents.models.pricing import price
from dealroom.config import Settings
from dealroom.domain import links as rules
from dealroom.domain.links import LinkStatus, Reader, Reason
from dealroom.persistence.links import LinkRepository
from dealroom.persistence.models import ModelCall, PerceivedLink
from dealroom.services.clock import Clock
from dealroom.services.links.extract import extract
from dealroom.services.links.fetch import FetchFailed, FetchPolicy, fetch
from dealroom.services.unit_of_work import UnitOfWork, reading

if TYPE_CHECKING:  # the SDK is imported only where the Gemini engine is on
    from google import genai

log = structlog.get_logger(__name__)

LINK_READER = "link_reader"
"""The ledger's agent for link reads (``agents/link_reader.py``'s calls and fetches)."""

FETCH_ENGINE = "http"
"""The ledger's engine for a fetch (no model): ``model_calls.engine``."""


_IN_FLIGHT: dict[uuid.UUID, asyncio.Future[list[PerceivedLink]]] = {}
"""A message's links being read in this process (a process-local saving only: another
process reading the same message at once stores nothing twice, the unique key sees to it)."""
_SHARED_FOR = 60.0
"""Seconds a message's finished read is still shared with a run that asks for it late."""


def _settled(message_id: uuid.UUID, done: asyncio.Future[list[PerceivedLink]]) -> None:
    """A read that stored its links stays shared a while: the other run of the turn may have
    read the stored links before this one stored them, and must then find this read rather
    than start its own. A failed read is forgotten at once, so a retry reads again."""
    if done.cancelled() or done.exception() is not None:
        _IN_FLIGHT.pop(message_id, None)
        return
    asyncio.get_running_loop().call_later(_SHARED_FOR, _IN_FLIGHT.pop, message_id, None)


@dataclass(frozen=True, slots=True)
class LinkConfig:
    per_message: int
    text_chars: int
    cache: timedelta
    policy: FetchPolicy
    reader_model: str

    @classmethod
    def of(cls, settings: Settings) -> LinkConfig:
        return cls(
            per_message=settings.links_per_message,
            text_chars=settings.link_text_chars,
            cache=timedelta(minutes=settings.link_cache_minutes),
            policy=FetchPolicy(
                allow_loopback=settings.link_allow_loopback,
                ports=settings.link_port_set,
                max_bytes=settings.link_max_bytes,
                total_seconds=settings.link_timeout_seconds,
            ),
            reader_model=settings.link_reader_model,
        )


@dataclass(frozen=True, slots=True)
class PaneMessage:
    """A participant's message of the pane's session, as perception reads it."""

    id: uuid.UUID
    body: str


@dataclass(frozen=True, slots=True)
class Perceiver:
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    config: LinkConfig
    gemini: genai.Client | None = None
    """The Gemini SDK client when the Gemini engine is on; None reads by fetch alone."""

    async def quotes(
        self,
        *,
        room_id: uuid.UUID,
        pane_id: uuid.UUID,
        run_id: uuid.UUID | None,
        messages: Sequence[PaneMessage],
        trigger_id: uuid.UUID | None,
        also_answers: Sequence[uuid.UUID] = (),
    ) -> list[LinkQuote]:
        """The pane's links as quoted material; the new ones of the posts this turn answers
        (its trigger and ``also_answers``, the later posts of a coalesced burst) read and
        stored first. No statement at all when no message holds a link."""
        limit = self.config.per_message
        with_links = {
            m.id: rules.find_urls(m.body, limit=limit) for m in messages if rules.holds_url(m.body)
        }
        with_links = {mid: urls for mid, urls in with_links.items() if urls}
        if not with_links:
            return []
        now = self.clock.now()
        answering = [] if trigger_id is None else [trigger_id, *also_answers]
        async with reading(self.sessionmaker) as db:
            repo = LinkRepository(db)
            stored = await repo.of_messages(pane_id, list(with_links))
            have = {(r.message_id, r.url) for r in stored}
            missing = {
                mid: [url for url in with_links.get(mid, []) if (mid, url) not in have]
                for mid in dict.fromkeys(answering)
            }
            missing = {mid: urls for mid, urls in missing.items() if urls}
            every = list(dict.fromkeys(url for urls in missing.values() for url in urls))
            cached = await repo.recent_reads(room_id, every, now - self.config.cache)
        if missing:
            # One read per URL for the whole burst: a URL pasted in two of its posts is
            # fetched once and stored on each.
            reads: dict[str, asyncio.Future[PerceivedLink]] = {}
            stored.extend(
                row
                for rows in await asyncio.gather(
                    *(
                        self._shared(
                            room_id, pane_id, run_id, mid, with_links[mid], urls, cached, reads
                        )
                        for mid, urls in missing.items()
                    )
                )
                for row in rows
            )
        order = {mid: i for i, mid in enumerate(with_links)}
        stored.sort(key=lambda r: (order.get(r.message_id, 0), r.position))
        return [quote_of(row, answering) for row in stored]

    async def _shared(
        self,
        room_id: uuid.UUID,
        pane_id: uuid.UUID,
        run_id: uuid.UUID | None,
        message_id: uuid.UUID,
        wanted: list[str],
        missing: list[str],
        cached: dict[str, PerceivedLink],
        reads: dict[str, asyncio.Future[PerceivedLink]],
    ) -> list[PerceivedLink]:
        # The persona and Distil of one turn both ask, at once: one read, both wait on it.
        running = _IN_FLIGHT.get(message_id)
        if running is None:
            running = asyncio.ensure_future(
                self._perceive(room_id, pane_id, run_id, message_id, wanted, missing, cached, reads)
            )
            _IN_FLIGHT[message_id] = running
            running.add_done_callback(partial(_settled, message_id))
        return await asyncio.shield(running)

    async def _perceive(
        self,
        room_id: uuid.UUID,
        pane_id: uuid.UUID,
        run_id: uuid.UUID | None,
        message_id: uuid.UUID,
        wanted: list[str],
        missing: list[str],
        cached: dict[str, PerceivedLink],
        reads: dict[str, asyncio.Future[PerceivedLink]],
    ) -> list[PerceivedLink]:
        calls: list[ModelCall] = []

        async def one(url: str) -> PerceivedLink:
            row = PerceivedLink(
                id=uuid.uuid4(),
                room_id=room_id,
                message_id=message_id,
                participant_id=pane_id,
                position=wanted.index(url),
                url=url,
            )
            hit = cached.get(url)
            if hit is not None:
                _copy(row, hit)
                row.reader = Reader.CACHE.value
                row.fetched_at = self.clock.now()
                return row
            read = reads.get(url)
            if read is not None:  # another post of the burst holds it: that read serves both
                source = await asyncio.shield(read)
                _copy(row, source)
                row.reader, row.fetched_at = source.reader, source.fetched_at
                return row
            read = reads[url] = asyncio.get_running_loop().create_future()
            read.add_done_callback(_retrieved)
            try:
                await self._read(row, room_id, run_id, calls)
            except asyncio.CancelledError:
                read.cancel()
                raise
            except Exception as failed:
                read.set_exception(failed)
                raise
            read.set_result(row)
            return row

        rows = list(await asyncio.gather(*(one(url) for url in missing)))
        try:
            async with UnitOfWork(self.sessionmaker) as unit:
                repo = LinkRepository(unit.db)
                await repo.add(rows)
                await unit.db.add(*calls)
        except IntegrityError:
            # Another attempt of this turn stored them first: theirs stand, read them back.
            async with reading(self.sessionmaker) as db:
                return [
                    r
                    for r in await LinkRepository(db).of_messages(pane_id, [message_id])
                    if r.url in missing
                ]
        return rows

    async def _read(
        self,
        row: PerceivedLink,
        room_id: uuid.UUID,
        run_id: uuid.UUID | None,
        calls: list[ModelCall],
    ) -> None:
        """Fill ``row`` from a reader: Gemini first when on (fail-closed), the fetch after."""
        url = row.url
        if self.gemini is not None:
            from dealroom.agents import link_reader

            started = time.perf_counter()
            got = await link_reader.read(self.gemini, model=self.config.reader_model, url=url)
            error = None if isinstance(got, link_reader.Reading) else got.why
            calls.append(self._call(room_id, run_id, got.model, got.usage, started, error))
            if isinstance(got, link_reader.Reading):
                row.status, row.reader = LinkStatus.READ.value, Reader.GEMINI.value
                row.title, row.text = got.title, got.text[: self.config.text_chars]
                row.final_url, row.fetched_at = url, self.clock.now()
                return
            log.info("link_reader_fell_back", why=got.why)
        started = time.perf_counter()
        row.reader = Reader.FETCH.value
        try:
            page = await fetch(url, self.config.policy)
            found = await extract(page, max_chars=self.config.text_chars)
        except FetchFailed as failed:
            row.status, row.reason = LinkStatus.UNREADABLE.value, failed.reason.value
            row.detail, row.final_url = failed.detail[:300], failed.final_url
            calls.append(self._call(room_id, run_id, "fetch", Usage(), started, str(failed)))
        else:
            row.status, row.final_url = LinkStatus.READ.value, page.final_url
            row.title, row.text, row.content_type = found.title, found.text, page.content_type
            calls.append(self._call(room_id, run_id, "fetch", Usage(), started, None))
        row.fetched_at = self.clock.now()

    def _call(
        self,
        room_id: uuid.UUID,
        run_id: uuid.UUID | None,
        model: str,
        usage: Usage,
        started: float,
        error: str | None,
    ) -> ModelCall:
        fetched = model == "fetch"
        return ModelCall(
            id=uuid.uuid4(),
            room_id=room_id,
            run_id=run_id,
            agent=LINK_READER,
            engine=FETCH_ENGINE if fetched else "gemini",
            model=model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            price_usd=Decimal(0) if fetched else price(model, usage),
            latency_ms=int((time.perf_counter() - started) * 1000),
            ok=error is None,
            error=error[:2000] if error else None,
            created_at=self.clock.now(),
        )


def _copy(row: PerceivedLink, source: PerceivedLink) -> None:
    row.status, row.reason, row.detail = source.status, source.reason, source.detail
    row.final_url, row.title, row.text = source.final_url, source.title, source.text
    row.content_type = source.content_type


def _retrieved(read: asyncio.Future[PerceivedLink]) -> None:
    """A failed shared read is the reading post's failure: no waiter must report it again."""
    if not read.cancelled():
        read.exception()


def quote_of(row: PerceivedLink, answering: Collection[uuid.UUID]) -> LinkQuote:
    return LinkQuote(
        url=row.url,
        status=LinkStatus(row.status),
        reason=Reason(row.reason) if row.reason else None,
        title=row.title,
        text=row.text or "",
        message_id=str(row.message_id),
        in_trigger=row.message_id in answering,
    )
