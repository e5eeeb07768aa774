"""Double texts (DT1, DT2): posts by one participant that arrive before the pane's persona run
has started are answered by one run that reads them all, and Distil records them once; a post
that arrives while a reply is being written is answered by the next run. Every post's runs end
exactly once, with the reply that answered it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from pathlib import Path
from subprocess import Popen
from typing import IO

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import ModelClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.double_texts import DoubleText
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun, Message, ModelCall
from dealroom.realtime.broker import Broker
from tests.conftest import Server, serving
from tests.e2e.test_replay_crash import host_with_rules_without_workers
from tests.support.clock import ManualClock
from tests.support.graphql import open_room, post, sign_up
from tests.support.processes import free_port, serve, wait_healthy
from tests.support.turns import deal, messages_in

HI = "Hi, we're Acme and we'd like a sponsored post."
BUDGET = "We can pay $7,000 for it."


async def _runs(db: Db, room_id: str, agent: str) -> list[AgentRun]:
    try:
        found = await db.scalars(
            select(AgentRun)
            .join(Message, Message.id == AgentRun.trigger_message_id)
            .where(AgentRun.room_id == uuid.UUID(room_id), AgentRun.agent == agent)
            .order_by(Message.seq)
        )
        return list(found)
    finally:
        await db.close()


async def _calls(db: Db, room_id: str, agent: str) -> int:
    try:
        found = await db.scalars(
            select(ModelCall.id).where(
                ModelCall.room_id == uuid.UUID(room_id), ModelCall.agent == agent
            )
        )
        return len(list(found))
    finally:
        await db.close()


async def _replies(db: Db, room_id: str) -> list[Message]:
    return [m for m in await messages_in(db, room_id, "visitor") if m.author_kind == "agent"]


async def _answered_once(db: Db, room_id: str, posts: int) -> list[uuid.UUID | None]:
    """Every post's persona run is done and names a stored reply of the pane; no reply is
    named by a run it does not answer. The replies, one per run, in post order."""
    runs = await _runs(db, room_id, "persona")
    assert len(runs) == posts
    assert {r.status for r in runs} == {"done"}
    replies = {m.id for m in await _replies(db, room_id)}
    assert {r.reply_message_id for r in runs} <= replies  # each names a stored reply
    return [r.reply_message_id for r in runs]


async def test_two_posts_before_the_run_starts_get_one_reply_addressing_both(
    agent_server: Server, db: Db
) -> None:
    room = await deal(agent_server)
    await agent_server.runner.close()  # both posts are in before the pane's run starts
    await post(room.visitor, room.room_id, HI)
    await post(room.visitor, room.room_id, BUDGET)
    await agent_server.runner.start()
    await agent_server.settle()

    answers = await _answered_once(db, room.room_id, 2)
    assert len(set(answers)) == 1
    reply = next(m for m in await _replies(db, room.room_id) if m.id == answers[0])
    # It answers the budget as well: the bid went to the host, no "what budget" question.
    assert "checking that with Dev Raman" in reply.body
    assert "budget" not in reply.body.lower()
    # One Distil call for the pair; both posts' Distil runs are done.
    assert [r.status for r in await _runs(db, room.room_id, "distil")] == ["done", "done"]
    assert await _calls(db, room.room_id, "distil") == 1


async def test_two_posts_200_ms_apart_get_one_reply_unless_the_second_came_mid_reply(
    agent_server: Server, db: Db
) -> None:
    room = await deal(agent_server)
    await post(room.visitor, room.room_id, HI)
    await asyncio.sleep(0.2)
    await post(room.visitor, room.room_id, BUDGET)
    await agent_server.settle()

    first, second = await _answered_once(db, room.room_id, 2)
    if first != second:
        # Two replies only when the second post was stored after the first run read the pane.
        replies = await _replies(db, room.room_id)
        bodies = [m.body for m in await messages_in(db, room.room_id, "visitor")]
        assert bodies.index(BUDGET) < bodies.index(replies[-1].body)


class TestMidReply:
    """The offline engine taking a while to answer, so a post can land while a reply is
    being written."""

    @pytest.fixture
    def model(self) -> ModelClient:
        return OfflineClient(delay=0.4)

    async def test_a_post_made_while_the_reply_is_written_gets_the_next_run(
        self, agent_server: Server, db: Db
    ) -> None:
        room = await deal(agent_server)
        await post(room.visitor, room.room_id, HI)
        for _ in range(200):  # until the pane's run has read the pane
            if any(r.status == "running" for r in await _runs(db, room.room_id, "persona")):
                break
            await asyncio.sleep(0.02)
        await post(room.visitor, room.room_id, BUDGET)
        await agent_server.settle()

        first, second = await _answered_once(db, room.room_id, 2)
        assert first != second
        bodies = [m.body for m in await messages_in(db, room.room_id, "visitor")]
        assert bodies.index(BUDGET) < len(bodies) - 1  # answered after it was posted

    async def test_a_burst_of_five_gets_at_most_two_replies(
        self, agent_server: Server, db: Db
    ) -> None:
        room = await deal(agent_server)
        for body in ("Hi", "we're Acme", "a sponsored post", "on 15 March 2027", "for $7,000"):
            await post(room.visitor, room.room_id, body)
        await agent_server.settle()

        replies = await _answered_once(db, room.room_id, 5)
        assert 1 <= len(set(replies)) <= 2, replies
        # Distil: one call per run that read posts, never one per post.
        assert await _calls(db, room.room_id, "distil") <= 2


@contextlib.asynccontextmanager
async def _enqueuing(
    agent_settings: Settings,
    engine: AsyncEngine,
    broker: Broker,
    clock: ManualClock,
) -> AsyncIterator[Server]:
    settings = agent_settings.model_copy(update={"double_text": DoubleText.ENQUEUE})
    async with serving(settings, engine, broker, clock, OfflineClient()) as running:
        yield running


async def test_enqueue_answers_each_post_in_its_own_run(
    agent_settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock, db: Db
) -> None:
    async with _enqueuing(agent_settings, engine, broker, clock) as server:
        room = await deal(server)
        await server.runner.close()
        await post(room.visitor, room.room_id, HI)
        await post(room.visitor, room.room_id, BUDGET)
        await server.runner.start()
        await server.settle()

        replies = await _answered_once(db, room.room_id, 2)
        assert len(set(replies)) == 2


async def test_a_worker_killed_mid_batch_loses_and_repeats_no_reply(
    server: Server, database_url: str, engine: AsyncEngine, db: Db, tmp_path: Path
) -> None:
    """Three posts queued; a worker process claims the pane's run and is killed (SIGKILL)
    while the reply streams; the next worker answers the three once."""
    del engine
    await host_with_rules_without_workers(server)
    visitor = server.client()
    await sign_up(visitor, "acmebrand", "Acme Brand")
    room_id = (await open_room(visitor, "devraman"))["room"]["id"]
    for body in ("Hi", "we're Acme", "a sponsored post for $7,000"):
        await post(visitor, room_id, body)

    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        port = free_port()
        # paced: the reply streams for seconds, so the kill lands mid-batch
        with _worker(database_url, port, log, stream_ms="700") as first:
            await wait_healthy(f"http://127.0.0.1:{port}", first)
            for _ in range(500):
                runs = await _runs(db, room_id, "persona")
                if any(r.status == "running" for r in runs):
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        cut = await _runs(db, room_id, "persona")
        assert {r.status for r in cut} <= {"running", "queued"}, [r.status for r in cut]
        assert await _replies(db, room_id) == []  # nothing of the killed batch was kept

        port = free_port()
        with _worker(database_url, port, log, stream_ms="0") as second:
            await wait_healthy(f"http://127.0.0.1:{port}", second)
            for _ in range(1500):
                runs = await _runs(db, room_id, "persona")
                if {r.status for r in runs} == {"done"}:
                    break
                await asyncio.sleep(0.05)

    answers = await _answered_once(db, room_id, 3)
    assert len(set(answers)) == 1, log_path.read_text()[-3000:]
    replies = [
        m for m in await _replies(db, room_id) if (m.client_message_id or "").startswith("run:")
    ]
    assert [m.id for m in replies][:1] == answers[:1]  # the first reply is the batch's, once


def _worker(
    database_url: str, port: int, log: IO[bytes], *, stream_ms: str
) -> AbstractContextManager[Popen[bytes]]:
    return serve(
        database_url,
        port,
        log,
        model_engine="offline",
        offline_stream_ms=stream_ms,
        workers="2",
        worker_poll_seconds="0.05",
        run_lease_seconds="2",
    )
