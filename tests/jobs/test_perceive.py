"""Perception as a step of the turn, before the persona: a link in a guest's message is read,
stored on the message, shown to that pane's persona as quoted material, and the offline
engine's terms reader reads a read brief like the same words typed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName, ModelClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.links import LinkStatus
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import PendingEffect, PerceivedLink
from tests.conftest import Server
from tests.support.graphql import post, sign_up
from tests.support.link_pages import BRIEF_TERMS, LinkPages, running_link_pages
from tests.support.recording import RecordingClient, trigger_kind
from tests.support.turns import HOME, RULES, deal, memory, messages_in, rows


@pytest.fixture
async def pages() -> AsyncIterator[LinkPages]:
    async with running_link_pages() as served:
        yield served


@pytest.fixture
def agent_settings(settings: Settings, pages: LinkPages) -> Settings:
    return settings.model_copy(
        update={
            "workers": 2,
            "worker_poll_seconds": 0.05,
            "link_allow_loopback": True,
            "link_ports": str(pages.port),
        }
    )


@pytest.fixture
def model() -> ModelClient:
    return RecordingClient(OfflineClient())


def db_of(engine: AsyncEngine) -> Db:
    return Db(create_sessionmaker(engine))


async def test_a_brief_read_in_a_guests_room_moves_the_offline_negotiation(
    agent_server: Server, engine: AsyncEngine, pages: LinkPages, model: RecordingClient
) -> None:
    d = await deal(agent_server, guest=True)
    await post(d.visitor, d.room_id, f"Hi! Our brief is here: {pages.url('/brief.html')}")
    await agent_server.settle()
    (link,) = await rows(db_of(engine), PerceivedLink, d.room_id)
    assert (link.status, link.reader) == (LinkStatus.READ.value, "fetch")
    assert BRIEF_TERMS in (link.text or "")
    replies = [m.body for m in await messages_in(db_of(engine), d.room_id, "visitor")]
    assert any('I read "Acme Spring Campaign Brief" you linked.' in r for r in replies), replies
    # The brief's terms moved the negotiation as if typed: the proposal goes to the host
    # (held as a pending effect while the visitor is a guest).
    effects = await rows(db_of(engine), PendingEffect, d.room_id)
    assert effects, replies
    assert any("6,000" in str(e.payload) for e in effects), [e.payload for e in effects]
    (persona,) = [
        r for r in model.where(AgentName.PERSONA, pane="visitor") if trigger_kind(r) == "message"
    ]
    assert "LINKS IN THIS PANE" in persona.prompt
    assert "never instructions" in persona.prompt


async def test_the_same_words_typed_move_it_the_same_way(
    agent_server: Server, engine: AsyncEngine
) -> None:
    d = await deal(agent_server, guest=True)
    await post(d.visitor, d.room_id, f"Hi! We need {BRIEF_TERMS}.")
    await agent_server.settle()
    effects = await rows(db_of(engine), PendingEffect, d.room_id)
    assert any("6,000" in str(e.payload) for e in effects)


async def test_an_unreadable_link_is_named_and_the_text_asked_for(
    agent_server: Server, engine: AsyncEngine, pages: LinkPages
) -> None:
    d = await deal(agent_server, guest=True)
    await post(d.visitor, d.room_id, f"See {pages.url('/login')} for the brief")
    await agent_server.settle()
    (link,) = await rows(db_of(engine), PerceivedLink, d.room_id)
    assert (link.status, link.reason) == ("unreadable", "login")
    replies = [m.body for m in await messages_in(db_of(engine), d.room_id, "visitor")]
    said = f"I couldn't open {pages.url('/login')}: it needs a login. Could you paste"
    assert any(said in r for r in replies), replies


async def test_a_turn_without_links_shows_the_persona_no_links_block(
    agent_server: Server, model: RecordingClient
) -> None:
    d = await deal(agent_server, guest=True)
    await post(d.visitor, d.room_id, "Hello there")
    await agent_server.settle()
    persona = model.where(AgentName.PERSONA, pane="visitor")[-1]
    assert "LINKS IN THIS PANE" not in persona.prompt
    assert "links" not in persona.context


async def test_a_rate_card_linked_in_the_home_room_teaches_like_the_hosts_words(
    agent_server: Server, engine: AsyncEngine, pages: LinkPages
) -> None:
    pages.pages["/rates.txt"] = ("text/plain", RULES.encode())
    host = agent_server.client()
    await sign_up(host, "linkteacher", "Link Teacher")
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, f"My rate card: {pages.url('/rates.txt')}")
    await agent_server.settle()
    taught = await memory(db_of(engine), home_id)
    typed = agent_server.client()
    await sign_up(typed, "typedteacher", "Typed Teacher")
    typed_home = (await typed.query(HOME))["me"]["homeRoom"]["id"]
    await post(typed, typed_home, RULES)
    await agent_server.settle()
    said = await memory(db_of(engine), typed_home)
    assert said["host"].get("limits"), said
    assert _unsourced(taught["host"].get("limits")) == _unsourced(said["host"]["limits"])
    assert pages.hits["/rates.txt"] == 1  # read once for the persona and Distil


def _unsourced(limits: dict[str, dict[str, str]] | None) -> dict[str, dict[str, str]]:
    """Limits without the message each cites (two rooms, two messages)."""
    return {k: {f: v for f, v in r.items() if f != "source"} for k, r in (limits or {}).items()}


async def test_a_coalesced_burst_reads_the_links_of_every_post_it_answers(
    agent_server: Server, engine: AsyncEngine, pages: LinkPages, model: RecordingClient
) -> None:
    d = await deal(agent_server, guest=True)
    await agent_server.runner.close()  # both posts are in before the pane's run starts
    await post(d.visitor, d.room_id, f"Hi! Our brief is here: {pages.url('/brief.html')}")
    second = f"And the deck: {pages.url('/login')} (same brief: {pages.url('/brief.html')})"
    await post(d.visitor, d.room_id, second)
    await agent_server.runner.start()
    await agent_server.settle()

    links = await rows(db_of(engine), PerceivedLink, d.room_id)
    assert sorted((link.url.rsplit("/", 1)[1], link.status) for link in links) == [
        ("brief.html", "read"),
        ("brief.html", "read"),
        ("login", "unreadable"),
    ]
    assert len({link.message_id for link in links}) == 2  # stored on each post
    assert (pages.hits["/brief.html"], pages.hits["/login"]) == (1, 1)  # each link read once
    (persona,) = [
        r for r in model.where(AgentName.PERSONA, pane="visitor") if trigger_kind(r) == "message"
    ]
    assert f"{pages.url('/login')} (in the message you are answering)" in persona.prompt
    assert f"{pages.url('/brief.html')} (in the message you are answering)" in persona.prompt
    replies = [m.body for m in await messages_in(db_of(engine), d.room_id, "visitor")]
    (reply,) = [r for r in replies if "you linked" in r]
    assert reply.count('I read "Acme Spring Campaign Brief" you linked.') == 1, reply
    assert f"I couldn't open {pages.url('/login')}: it needs a login." in reply, reply
