"""A worker process killed (SIGKILL) in the middle of a claimed room's replay: on the next
start every held effect is still performed exactly once, in order (checked in
``pending_effects``, the dispatch record and the host's pane): each run of held notes goes as
one send of what was said, and every note's words reach the host side once, in order."""

from __future__ import annotations

import asyncio
import signal
import uuid
from contextlib import AbstractContextManager
from pathlib import Path
from subprocess import Popen
from typing import IO

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.persistence.db import Db
from dealroom.persistence.models import PendingEffect
from tests.conftest import Server
from tests.support.gate import arrange_held_sends, held, room_dispatches, sign_up_here
from tests.support.graphql import Client, open_room, post, sign_up
from tests.support.processes import free_port, serve, wait_healthy
from tests.support.turns import HOME, messages_in

HELD = 20
RUN_OF = 2
"""Notes per coalesced send: an ``offer_close`` between runs makes the replay several steps."""
RUNS = HELD // RUN_OF
ROWS = HELD + RUNS - 1


def _worker(database_url: str, port: int, log: IO[bytes]) -> AbstractContextManager[Popen[bytes]]:
    """A `dealroom serve` that runs turns (the offline engine), polling and leasing fast."""
    return serve(
        database_url,
        port,
        log,
        model_engine="offline",
        workers="2",
        worker_poll_seconds="0.05",
        run_lease_seconds="2",
        webhook_workers="1",  # the default: serve() turns them off
    )


async def _statuses(db: Db, room_id: str) -> list[str]:
    try:
        rows = await db.scalars(
            select(PendingEffect.status)
            .where(PendingEffect.room_id == uuid.UUID(room_id))
            .order_by(PendingEffect.seq)
        )
        return list(rows)
    finally:
        await db.close()


async def test_a_replay_killed_mid_way_resumes_on_the_next_start_exactly_once(
    server: Server, database_url: str, engine: AsyncEngine, db: Db, tmp_path: Path
) -> None:
    """``server`` (no workers of its own) serves the claim; the worker process replays."""
    del engine
    await host_with_rules_without_workers(server)
    guest = server.client()
    room_id = (await open_room(guest, "devraman"))["room"]["id"]
    await arrange_held_sends(db, room_id, HELD, server.clock.now(), run_of=RUN_OF)
    await sign_up_here(guest, "mara", "Mara Ellison")  # claims; the replay run is queued

    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        port = free_port()
        with _worker(database_url, port, log) as first:
            await wait_healthy(f"http://127.0.0.1:{port}", first)
            for _ in range(600):
                done = (await _statuses(db, room_id)).count("replayed")
                if done >= 3:
                    break
                await asyncio.sleep(0.02)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        cut = await _statuses(db, room_id)
        assert 3 <= cut.count("replayed") < ROWS, cut  # killed mid-replay

        port = free_port()
        with _worker(database_url, port, log) as second:
            await wait_healthy(f"http://127.0.0.1:{port}", second)
            for _ in range(1500):
                if set(await _statuses(db, room_id)) == {"replayed"}:
                    break
                await asyncio.sleep(0.05)
            # Let the last delivery's run finish before reading the host's pane.
            for _ in range(600):
                delivered = [
                    m for m in await messages_in(db, room_id, "host") if m.relayed_dispatch_id
                ]
                if len(delivered) >= RUNS:
                    break
                await asyncio.sleep(0.05)

    assert set(await _statuses(db, room_id)) == {"replayed"}, log_path.read_text()[-3000:]
    notes = [d for d in await room_dispatches(db, room_id) if d.chain_depth == 1]
    # one send per run of notes, in order; every note's words in exactly one, once, in order
    assert [d.position for d in notes] == [RUN_OF * (i + 1) - 1 for i in range(RUNS)]
    said = " ".join(d.substance for d in notes)
    figures = [f"${7000 + index} " for index in range(HELD)]
    assert [said.count(figure) for figure in figures] == [1] * HELD
    assert [said.index(figure) for figure in figures] == sorted(said.index(f) for f in figures)
    delivered = [m for m in await messages_in(db, room_id, "host") if m.relayed_dispatch_id]
    assert sorted(str(m.relayed_dispatch_id) for m in delivered) == sorted(str(d.id) for d in notes)
    assert len(await held(db, room_id)) == ROWS


async def host_with_rules_without_workers(server: Server) -> Client:
    """The host and its recorded rules, this test running the agents itself."""
    host = server.client()
    await sign_up(host, "devraman", "Dev Raman")
    home_id = (await host.query(HOME))["me"]["homeRoom"]["id"]
    await post(host, home_id, "My fee for a sponsored post is $8,000, never below $6,000.")
    while await server.runner.run_once():
        pass
    return host
