"""Arvist's apply takes the pane's row before the account's (PostgreSQL row locks).

A persona applying in a pane holds the pane's row (its append) and then waits on the host's account
row: its memory write updates a room row it already changed, so PostgreSQL checks the room's
foreign key to the account (``FOR KEY SHARE``). An Arvist that held the account (``FOR UPDATE``)
and then waited on the pane (``set_merged``) would close the cycle: a deadlock that fails a persona
turn."""

from __future__ import annotations

import asyncio

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.arvist import ArvistOutput, DurableChange
from dealroom.agents.models.base import AgentName
from dealroom.config import Settings
from dealroom.jobs.arvist import ArvistTurn
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_sessionmaker
from dealroom.persistence.models import AccountMemory, Participant
from dealroom.realtime import Broker
from dealroom.services.turns.context import RunSnapshot
from dealroom.services.turns.ledger import CallSite
from dealroom.services.turns.queue import RunStatus, new_run
from tests.support.clock import ManualClock
from tests.support.rooms import guest_room_in_process
from tests.support.turns import offline_deps


async def test_arvist_waits_for_the_pane_before_it_locks_the_account(
    pg_engine: AsyncEngine, clock: ManualClock, settings: Settings, broker: Broker
) -> None:
    sessionmaker = create_sessionmaker(pg_engine)
    _, opened = await guest_room_in_process(pg_engine, clock, "arvistlocks")
    account_id = opened.room.host_account_id
    db = Db(sessionmaker)
    try:
        host = await db.scalar(
            select(Participant).where(
                Participant.room_id == opened.room.id, Participant.key == "host"
            )
        )
        assert host is not None
        row = new_run(
            room_id=opened.room.id, participant_id=host.id, agent=AgentName.ARVIST, now=clock.now()
        )
        row.status, row.attempts = RunStatus.RUNNING.value, 1
        await db.add(row)
        await db.commit()
    finally:
        await db.close()
    run = RunSnapshot(
        id=row.id,
        room_id=row.room_id,
        participant_id=host.id,
        agent=AgentName.ARVIST.value,
        trigger_message_id=None,
        trigger_dispatch_id=None,
        chain_depth=0,
        attempts=1,
    )
    deps = offline_deps(pg_engine, settings, broker, clock)
    output = ArvistOutput(
        changes=[DurableChange(op="set", path="rates.sponsored_post.ask", value="9000 USD")]
    )

    persona = Db(sessionmaker)  # a persona's apply in the pane: its append holds the pane row
    try:
        await persona.execute(
            select(Participant.id).where(Participant.id == host.id).with_for_update(key_share=True)
        )
        arvist = asyncio.create_task(
            ArvistTurn(deps)._apply(run, account_id, output, CallSite(run.room_id, run.id, []))
        )
        await asyncio.sleep(0.5)
        assert not arvist.done()  # it waits for the pane
        # ...without holding the account: the persona's memory write can still check its key.
        probe = Db(sessionmaker)
        try:
            await probe.execute(
                text("SELECT id FROM accounts WHERE id = :account FOR KEY SHARE NOWAIT"),
                {"account": account_id},
            )
        finally:
            await probe.close()
        await persona.commit()
    finally:
        await persona.close()
    await asyncio.wait_for(arvist, 10)

    db = Db(sessionmaker)
    try:
        memory = await db.scalar(
            select(AccountMemory).where(AccountMemory.account_id == account_id)
        )
        assert memory is not None
        assert memory.document["rates"]["sponsored_post"]["ask"] == "9000 USD"
    finally:
        await db.close()
