"""Perceiving a message's links (services/links/perceive.py) on the real database: stored once
per message, reused from the room's cache, capped per message, in the ledger; the Gemini URL
Context reader accepted only on its retrieval metadata's word (the fake Gemini server answers
as the API does), every other answer falling back to the fetch."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents import link_reader
from dealroom.agents.models.gemini import GeminiClient
from dealroom.domain.links import LinkStatus, Reader, Reason
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import Message, ModelCall, Participant, PerceivedLink
from dealroom.services.links.fetch import FetchPolicy
from dealroom.services.links.perceive import LinkConfig, PaneMessage, Perceiver
from tests.support.clock import ManualClock
from tests.support.fake_gemini import Fail, FakeGemini, Reply, running_fake_gemini, url_read
from tests.support.link_pages import BRIEF_TERMS, LinkPages
from tests.support.rooms import guest_pane

PAGE_TEXT = f"Acme brief. We need {BRIEF_TERMS}."


def config(**given: Any) -> LinkConfig:
    values: dict[str, Any] = {
        "per_message": 3,
        "text_chars": 20_000,
        "cache": timedelta(minutes=60),
        "policy": FetchPolicy(allow_loopback=True, ports=None, total_seconds=5),
        "reader_model": "gemini-2.5-flash",
    } | given
    return LinkConfig(**values)


@pytest.fixture
async def gemini() -> AsyncIterator[FakeGemini]:
    async with running_fake_gemini() as fake:
        yield fake


async def posted(
    engine: AsyncEngine, clock: ManualClock, pane: Participant, body: str
) -> PaneMessage:
    """A participant's message in ``pane``, stored as a row (the post path is not under test)."""
    db = Db(create_sessionmaker(engine))
    try:
        row = Message(
            room_id=pane.room_id,
            participant_id=pane.id,
            seq=int(clock.now().timestamp() * 1000) % 1_000_000 + len(body),
            author_kind="participant",
            body=body,
            client_message_id=uuid.uuid4().hex,
            created_at=clock.now(),
        )
        await db.add(row)
        await db.commit()
        return PaneMessage(row.id, body)
    finally:
        await db.close()


async def perceive(perceiver: Perceiver, pane: Participant, *messages: PaneMessage) -> list[Any]:
    return await perceiver.quotes(
        room_id=pane.room_id,
        pane_id=pane.id,
        run_id=None,
        messages=list(messages),
        trigger_id=messages[-1].id,
    )


async def stored(
    engine: AsyncEngine, room_id: uuid.UUID
) -> tuple[list[PerceivedLink], list[ModelCall]]:
    db = Db(create_sessionmaker(engine))
    try:
        links = list(
            await db.scalars(select(PerceivedLink).where(PerceivedLink.room_id == room_id))
        )
        calls = list(await db.scalars(select(ModelCall).where(ModelCall.room_id == room_id)))
        return links, calls
    finally:
        await db.close()


async def test_a_link_is_read_once_stored_and_reused_from_the_rooms_cache(
    engine: AsyncEngine, clock: ManualClock, pages: LinkPages
) -> None:
    pane = await guest_pane(engine, clock, "linkhost")
    perceiver = Perceiver(create_sessionmaker(engine), clock, config())
    first = await posted(engine, clock, pane, f"Our brief: {pages.url('/brief.html')}.")
    quotes = await perceive(perceiver, pane, first)
    assert [(q.status, q.in_trigger) for q in quotes] == [(LinkStatus.READ, True)]
    assert BRIEF_TERMS in quotes[0].text
    # The same turn again (a retried run) reads nothing new.
    assert await perceive(perceiver, pane, first) == quotes
    clock.advance(timedelta(minutes=10))
    second = await posted(engine, clock, pane, f"again {pages.url('/brief.html')}")
    again = await perceive(perceiver, pane, first, second)
    assert [q.in_trigger for q in again] == [False, True]
    assert pages.hits["/brief.html"] == 1
    links, calls = await stored(engine, pane.room_id)
    assert sorted(r.reader for r in links) == [Reader.CACHE.value, Reader.FETCH.value]
    assert [(c.agent, c.engine, c.model, c.ok) for c in calls] == [
        ("link_reader", "http", "fetch", True)
    ]


async def test_two_runs_of_one_turn_asking_at_once_share_one_read(
    engine: AsyncEngine, clock: ManualClock, pages: LinkPages
) -> None:
    # The persona and Distil of one message perceive it concurrently.
    pane = await guest_pane(engine, clock, "linktwice")
    message = await posted(engine, clock, pane, pages.url("/deck.pdf"))
    persona = Perceiver(create_sessionmaker(engine), clock, config())
    distil = Perceiver(create_sessionmaker(engine), clock, config())
    first, second = await asyncio.gather(
        perceive(persona, pane, message), perceive(distil, pane, message)
    )
    assert first == second
    assert pages.hits["/deck.pdf"] == 1
    links, _calls = await stored(engine, pane.room_id)
    assert len(links) == 1


async def test_past_the_cache_window_the_link_is_read_again(
    engine: AsyncEngine, clock: ManualClock, pages: LinkPages
) -> None:
    pane = await guest_pane(engine, clock, "linkstale")
    perceiver = Perceiver(create_sessionmaker(engine), clock, config())
    await perceive(perceiver, pane, await posted(engine, clock, pane, pages.url("/note.txt")))
    clock.advance(timedelta(minutes=61))
    await perceive(perceiver, pane, await posted(engine, clock, pane, pages.url("/note.txt")))
    assert pages.hits["/note.txt"] == 2


async def test_a_thousand_urls_in_a_message_read_only_the_first_three(
    engine: AsyncEngine, clock: ManualClock, pages: LinkPages
) -> None:
    pane = await guest_pane(engine, clock, "linkflood")
    body = " ".join(pages.url(f"/nowhere/{n}") for n in range(1000)) + " http://[bad"
    perceiver = Perceiver(create_sessionmaker(engine), clock, config())
    quotes = await perceive(perceiver, pane, await posted(engine, clock, pane, body))
    assert [(q.url, q.reason) for q in quotes] == [
        (pages.url(f"/nowhere/{n}"), Reason.NOT_FOUND) for n in range(3)
    ]
    assert sum(pages.hits.values()) == 3


async def test_a_message_without_links_makes_no_statement(
    engine: AsyncEngine, clock: ManualClock, count_statements: Callable[[], Any]
) -> None:
    perceiver = Perceiver(create_sessionmaker(engine), clock, config())
    message = PaneMessage(uuid.uuid4(), "We can do $5,000 for two reels in May.")
    with count_statements() as seen:
        quotes = await perceiver.quotes(
            room_id=uuid.uuid4(),
            pane_id=uuid.uuid4(),
            run_id=None,
            messages=[message],
            trigger_id=message.id,
        )
    assert quotes == []
    assert seen == []


# --- the Gemini URL Context reader -----------------------------------------------------------


def gemini_perceiver(engine: AsyncEngine, clock: ManualClock, fake: FakeGemini) -> Perceiver:
    client = GeminiClient("test-key", base_url=fake.base_url, attempts=1)
    return Perceiver(create_sessionmaker(engine), clock, config(), gemini=client.sdk)


async def test_gemini_reads_the_exact_url_when_its_metadata_says_so(
    engine: AsyncEngine, clock: ManualClock, pages: LinkPages, gemini: FakeGemini
) -> None:
    pane = await guest_pane(engine, clock, "geminiread")
    url = pages.url("/brief.html")
    gemini.script(url_read(url, f"TITLE: Acme brief\n{PAGE_TEXT}"))
    quotes = await perceive(
        gemini_perceiver(engine, clock, gemini), pane, await posted(engine, clock, pane, url)
    )
    assert [(q.status, q.title, q.text) for q in quotes] == [
        (LinkStatus.READ, "Acme brief", PAGE_TEXT)
    ]
    assert pages.hits["/brief.html"] == 0  # no fetch: Gemini read it
    (request,) = gemini.requests
    assert request.tools == [{"urlContext": {}}]  # never search grounding
    assert "responseMimeType" not in request.generation_config  # plain text, not JSON
    assert url in request.contents
    links, calls = await stored(engine, pane.room_id)
    assert [r.reader for r in links] == [Reader.GEMINI.value]
    assert [(c.engine, c.model, c.ok, c.input_tokens) for c in calls] == [
        ("gemini", "gemini-2.5-flash", True, 900)
    ]
    assert calls[0].price_usd is not None
    assert calls[0].price_usd > 0


def fail_closed_answers(url: str) -> dict[str, Reply | Fail]:
    return {
        "retrieval error": url_read(url, PAGE_TEXT, "URL_RETRIEVAL_STATUS_ERROR"),
        "paywall": url_read(url, PAGE_TEXT, "URL_RETRIEVAL_STATUS_PAYWALL"),
        "unsafe": url_read(url, PAGE_TEXT, "URL_RETRIEVAL_STATUS_UNSAFE"),
        "another url": url_read(url + "?other=1", PAGE_TEXT),
        "this and another url": Reply(
            PAGE_TEXT,
            url_metadata=(
                (url, "URL_RETRIEVAL_STATUS_SUCCESS"),
                ("https://example.com/similar", "URL_RETRIEVAL_STATUS_SUCCESS"),
            ),
        ),
        "no metadata": Reply(PAGE_TEXT),
        "search": Reply(
            PAGE_TEXT,
            url_metadata=((url, "URL_RETRIEVAL_STATUS_SUCCESS"),),
            search_queries=("acme brief budget",),
        ),
        "http error": Fail(500),
    }


@pytest.mark.parametrize("case", list(fail_closed_answers("u")))
async def test_every_other_gemini_answer_falls_back_to_the_fetch(
    engine: AsyncEngine, clock: ManualClock, pages: LinkPages, gemini: FakeGemini, case: str
) -> None:
    pane = await guest_pane(engine, clock, f"fallback{uuid.uuid4().hex[:8]}")
    url = pages.url("/brief.html")
    gemini.script(fail_closed_answers(url)[case])
    quotes = await perceive(
        gemini_perceiver(engine, clock, gemini), pane, await posted(engine, clock, pane, url)
    )
    assert quotes[0].status is LinkStatus.READ
    assert "We need" not in quotes[0].text  # not the model's copy: the page's own text
    assert BRIEF_TERMS in quotes[0].text
    assert pages.hits["/brief.html"] == 1
    links, calls = await stored(engine, pane.room_id)
    assert [r.reader for r in links] == [Reader.FETCH.value]
    assert sorted((c.engine, c.ok) for c in calls) == [("gemini", False), ("http", True)]


async def test_the_reader_refuses_a_response_for_another_url_directly(gemini: FakeGemini) -> None:
    client = GeminiClient("test-key", base_url=gemini.base_url, attempts=1)
    gemini.script(url_read("https://a.example/brief", "TITLE: x\ntext"))
    got = await link_reader.read(client.sdk, model="gemini-2.5-flash", url="https://b.example/b")
    assert isinstance(got, link_reader.NotRead)
    assert got.why == "another URL was retrieved"
