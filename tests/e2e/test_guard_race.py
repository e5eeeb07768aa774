"""A reply that arrives while the Guard is thinking makes its audit stale (G1): the Guard
applies nothing on a room that is no longer quiet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from dealroom.agents.models.base import AgentName, Generation, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.persistence.db import Db
from dealroom.persistence.models import GoalEvent, GuardVerdict
from dealroom.services.turns.queue import RunStatus
from tests.conftest import Server
from tests.e2e.test_guard import met_without_agreement
from tests.support.graphql import post
from tests.support.recording import RecordingClient, pane_messages, room_rows
from tests.support.watches import QUIET, runs_of


class HeldGuard(RecordingClient):
    """The model edge, with the Guard's call held until the test lets it answer."""

    def __init__(self) -> None:
        super().__init__(OfflineClient())
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def generate(self, request: ModelRequest) -> Generation:
        if request.agent is AgentName.GUARD and len(request.context["panes"]) == 2:
            self.entered.set()
            await self.release.wait()
        return await super().generate(request)


@pytest.fixture
async def model() -> AsyncIterator[HeldGuard]:
    held = HeldGuard()
    yield held
    held.release.set()


async def test_a_reply_while_the_guard_thinks_makes_its_audit_stale(
    agent_server: Server, model: HeldGuard, db: Db
) -> None:
    d = await met_without_agreement(agent_server, db)
    agent_server.clock.advance(QUIET)
    await agent_server.runner.sweep()
    await asyncio.wait_for(model.entered.wait(), 30)

    before = len(await pane_messages(db, d.room_id, "visitor"))
    await post(d.visitor, d.room_id, "Any news?")
    for _ in range(600):  # the visitor's turn is answered meanwhile (rows: no event)
        if len(await pane_messages(db, d.room_id, "visitor")) >= before + 2:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the visitor's turn was never answered")
    model.release.set()
    await agent_server.settle()

    [run] = [r for r in await runs_of(db, d.room_id, AgentName.GUARD)]
    assert (run.status, run.no_op) == (RunStatus.DONE, True)
    assert await room_rows(db, GuardVerdict, d.room_id) == []
    events: list[GoalEvent] = await room_rows(db, GoalEvent, d.room_id)
    assert [e for e in events if e.agent == AgentName.GUARD.value] == []
