"""The persona's apply: the room's memory it rewrites comes with the reply's append, read under the
room's row lock, and its run's finish (the stale-run check) goes with the unit's deferred writes at
the commit. So a memory change made while the model thought is kept, and a run another worker owns
now applies nothing: no reply, no memory, no finish."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import AgentName
from dealroom.agents.persona import PersonaOutput
from dealroom.config import Settings
from dealroom.jobs.persona import PersonaTurn
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AgentRun, Message, ModelCall, Participant, Room
from dealroom.realtime import Broker
from dealroom.services.turns.context import RunSnapshot, TurnContext, load
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus, new_run
from dealroom.services.turns.runs import StaleRun
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process
from tests.support.turns import offline_deps


async def _thinking_run(
    engine: AsyncEngine, clock: ManualClock, settings: Settings, broker: Broker
) -> tuple[PersonaTurn, RunSnapshot, TurnContext]:
    """A guest's pane with a persona run claimed at attempt 1, and the context it loaded
    before its model call."""
    sessionmaker = create_sessionmaker(engine)
    _, opened = await guest_room_in_process(engine, clock, "personaapply")
    db = Db(sessionmaker)
    try:
        pane = await db.scalar(
            select(Participant).where(
                Participant.room_id == opened.room.id, Participant.key != "host"
            )
        )
        assert pane is not None
        row = new_run(
            room_id=pane.room_id, participant_id=pane.id, agent=AgentName.PERSONA, now=clock.now()
        )
        row.status, row.attempts = RunStatus.RUNNING.value, 1
        await db.add(row)
        await db.execute(
            update(Room).where(Room.id == pane.room_id).values(memory={"before": "the call"})
        )
        await db.commit()
        run = RunSnapshot(row.id, row.room_id, pane.id, "persona", None, None, 0, attempts=1)
        ctx = await load(db, run)
        await db.commit()
    finally:
        await db.close()
    assert ctx is not None
    return PersonaTurn(offline_deps(engine, settings, broker, clock)), run, ctx


async def _meanwhile(db: Db, run: RunSnapshot, **values: object) -> None:
    """What happened in the room while the model thought."""
    if "memory" in values:
        await db.execute(
            update(Room).where(Room.id == run.room_id).values(memory=values.pop("memory"))
        )
    if values:
        await db.execute(update(AgentRun).where(AgentRun.id == run.id).values(**values))
    await db.commit()


async def _apply(turn: PersonaTurn, run: RunSnapshot, ctx: TurnContext) -> None:
    output = PersonaOutput(reply="Two posts in March work.", plan="ask for the brief")
    await turn._apply(run, ctx, output, uuid.uuid4(), CallSite(run.room_id, run.id, []))


async def test_the_apply_keeps_a_memory_change_made_while_the_model_thought(
    engine: AsyncEngine, db: Db, clock: ManualClock, settings: Settings, broker: Broker
) -> None:
    turn, run, ctx = await _thinking_run(engine, clock, settings, broker)
    assert ctx.memory == {"before": "the call"}
    await _meanwhile(db, run, memory={"written": "while it thought"})

    await _apply(turn, run, ctx)

    room = await db.scalar(select(Room).where(Room.id == run.room_id))
    assert room is not None
    assert room.memory["written"] == "while it thought"  # not the document it loaded
    assert "before" not in room.memory
    assert room.memory["plans"][ctx.pane_key] == "ask for the brief"
    finished = await db.scalar(select(AgentRun).where(AgentRun.id == run.id))
    assert finished is not None
    assert finished.status == RunStatus.DONE.value
    reply = await db.scalar(select(Message).where(Message.id == finished.reply_message_id))
    assert reply is not None
    assert reply.body == "Two posts in March work."


async def test_a_run_another_worker_owns_now_applies_nothing(
    engine: AsyncEngine, db: Db, clock: ManualClock, settings: Settings, broker: Broker
) -> None:
    turn, run, ctx = await _thinking_run(engine, clock, settings, broker)
    await _meanwhile(db, run, attempts=2)  # its lease ran out and another worker claimed it

    with pytest.raises(StaleRun):
        await _apply(turn, run, ctx)

    room = await db.scalar(select(Room).where(Room.id == run.room_id))
    assert room is not None
    assert room.memory == {"before": "the call"}
    replies = await db.scalars(select(Message).where(Message.participant_id == run.participant_id))
    assert list(replies) == []
    stale = await db.scalar(select(AgentRun).where(AgentRun.id == run.id))
    assert stale is not None
    assert (stale.status, stale.attempts, stale.reply_message_id) == ("running", 2, None)
    assert list(await db.scalars(select(ModelCall).where(ModelCall.run_id == run.id))) == []
