"""Pushes that survive Redis (issue 9, defect 4): the Redis connection is killed at the
publish after a turn's commit; the subscriber still receives every event, and the run is
done, not failed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import Chunk, Generation, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.config import Settings
from dealroom.domain.cursors import event_cursor
from dealroom.persistence.db import Db
from dealroom.persistence.models import AgentRun
from dealroom.realtime.redis_broker import RedisBroker
from tests.conftest import serving
from tests.support.backends import REDIS_FOR_BROKER_TESTS
from tests.support.clock import ManualClock
from tests.support.graphql import (
    PANE_EVENTS,
    open_room,
    post,
    sign_up,
    subscribe,
    ws_init_for,
)
from tests.support.tcp_proxy import TcpProxy


class GatedClient(OfflineClient):
    """The model edge, held at the gate: the test cuts Redis while the turn is composing."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def generate(self, request: ModelRequest) -> Generation:
        self.entered.set()
        await self.gate.wait()
        return await super().generate(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.entered.set()
        await self.gate.wait()
        async for chunk in super().stream(request):
            yield chunk


@contextlib.asynccontextmanager
async def redis_broker(url: str) -> AsyncIterator[RedisBroker]:
    broker = RedisBroker(url)
    await broker.start()
    try:
        yield broker
    finally:
        await broker.close()


async def _logged(logs: list[MutableMapping[str, Any]], event: str, within: float) -> bool:
    async with asyncio.timeout(within):
        while not any(entry["event"] == event for entry in logs):  # noqa: ASYNC110  # a log, not an event
            await asyncio.sleep(0.05)
    return True


async def test_a_publish_cut_off_after_commit_still_reaches_the_subscriber(
    settings: Settings, engine: AsyncEngine, clock: ManualClock, db: Db
) -> None:
    """Two servers: A runs the turn and reaches Redis through a proxy the test cuts at the
    publish after commit; the visitor watches on B, whose Redis link is healthy."""
    target = make_url(REDIS_FOR_BROKER_TESTS)
    proxy = TcpProxy(target.host or "127.0.0.1", target.port or 6379)
    port = await proxy.start()
    proxied = target.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    model = GatedClient()
    workers = settings.model_copy(update={"workers": 1, "worker_poll_seconds": 0.05})
    try:
        async with (
            redis_broker(proxied) as broker_a,
            redis_broker(REDIS_FOR_BROKER_TESTS) as broker_b,
            serving(workers, engine, broker_a, clock, model) as server_a,
            serving(settings, engine, broker_b, clock) as server_b,
        ):
            host = server_b.client()
            await sign_up(host, "mara", "Mara Ellison")
            guest = server_b.client()
            room_id = (await open_room(guest, "mara"))["room"]["id"]
            variables = {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}
            async with subscribe(
                server_b.ws_url, PANE_EVENTS, variables, init=ws_init_for(guest)
            ) as sub:
                sent = await post(guest, room_id, "Can you do a post for $4,000?")
                assert (await sub.event(timeout=10))["message"]["id"] == sent["id"]
                await asyncio.wait_for(model.entered.wait(), 30)

                with structlog.testing.capture_logs() as logs:
                    proxy.cut()  # every connection A holds to Redis dies, and every retry
                    model.gate.set()
                    # The reply is committed and its publish is refused: wait for the retry.
                    with contextlib.suppress(TimeoutError):
                        await _logged(logs, "publish_retry", within=20)
                    proxy.restore()

                    while True:
                        event = await sub.event(timeout=20)
                        if event["__typename"] == "MessageAdded":
                            break
                assert event["message"]["id"] != sent["id"]
                assert event["message"]["alignment"] == "LEFT"  # the agent's reply
                await server_a.settle()
                assert not [e for e in logs if e["event"] == "publish_gave_up"]
    finally:
        await proxy.close()

    runs = (await db.session.scalars(select(AgentRun))).all()
    statuses = {run.status for run in runs if run.agent == "persona"}
    assert statuses == {"done"}  # committed, so done, whatever the broker said
