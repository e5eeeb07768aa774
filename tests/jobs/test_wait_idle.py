"""``TurnRunner.wait_idle`` (the suite's ``settle``) is woken by a run of its process ending,
not by a poll: with the poll made an hour long, it still returns as soon as the run is done."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from dealroom.agents.models.base import AgentName, Chunk, Generation, ModelClient, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.jobs import runner as turns
from tests.conftest import Server
from tests.support.graphql import post, sign_up
from tests.support.turns import HOME


class GatedModel:
    """The offline engine, whose persona replies wait for ``gate``."""

    engine = "offline"

    def __init__(self) -> None:
        self.inner = OfflineClient()
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def generate(self, request: ModelRequest) -> Generation:
        return await self.inner.generate(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        if request.agent is AgentName.PERSONA:
            self.started.set()
            await self.gate.wait()
        async for chunk in self.inner.stream(request):
            yield chunk

    async def close(self) -> None:
        await self.inner.close()


@pytest.fixture
def model() -> ModelClient:
    return GatedModel()


async def test_settle_returns_when_the_run_ends_not_at_the_next_poll(
    agent_server: Server, model: GatedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turns, "IDLE_POLL_SECONDS", 3600.0)
    host = agent_server.client()
    await sign_up(host, "devraman", "Dev Raman")
    home = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home, "What do you have on file for me?")
    await asyncio.wait_for(model.started.wait(), 20)
    settling = asyncio.create_task(agent_server.settle(timeout=3600))
    await asyncio.sleep(0.2)  # settle has counted the running turn and is waiting
    assert not settling.done()
    model.gate.set()
    await asyncio.wait_for(settling, 20)
