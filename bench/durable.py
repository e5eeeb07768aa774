"""Durable-memory benchmark: what Arvist and AccUpdate cost per run, what a due merge adds to a
turn, and the syncStaleAccountMemory sweep over 10,000 rooms.

Method. The app is built in-process (``workers=0``: nothing runs on its own; the periodic
sweeps are removed so no sample carries them) and served by uvicorn on loopback; the bench
speaks GraphQL over HTTP like a client app, then executes every queued run with
``runner.run_once()``, one at a time, each handler wrapped in a timer.

(1) cost per run: the Arvist runs of the home sittings and the curator runs of negotiated deal
    rooms, and the AccUpdate merges of (2); tokens from the ledger (``model_calls``; the offline
    engine estimates ~4 characters a token), priced at the configured models' list prices.
(2) a turn with a merge due vs without, in one run: two hosts with the same rules, N guest
    rooms each. Every round host A teaches its home room a new floor (so every one of A's rooms
    is due a merge) while host B does not; then one visitor line goes into every room of both
    hosts, interleaved A, B, A, B…, and each persona run (AccUpdate's check and merge included)
    is timed. Ratio of the p50s.
(3) the stale sweep on PostgreSQL: one host with 10,000 deal rooms (rows inserted in bulk) and
    a newer durable version, so every host seat is stale; ``sync_stale_account_memory`` passes
    of ``stale_sync_batch`` (200) until none is left: time per pass, statements per pass; then
    the first batches' merges executed by one worker (runs/s, handler and claim p50s); the
    later batches are marked merged directly, so the sweep's scan is timed over all 10,000
    rooms without 10,000 merges of wall time. A pass queues nothing while a batch waits.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from _client import (
    DEFAULT_PG_URL,
    UNTHROTTLED,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    open_room,
    percentile,
    prepare_run,
    remove_tree,
    sign_up,
)
from sqlalchemy import event, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.base import Usage
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.pricing import price
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.acc_update import sync_stale_account_memory
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import AccountMemory, AgentRun, ModelCall, Participant, Room
from dealroom.realtime import create_broker
from dealroom.server import start_in_background
from dealroom.services.turns.context import RunSnapshot

RULES = "My fee for a sponsored post is $8,000, never below $4,000, and no alcohol brands."
HOME = "query { me { homeRoom { id } } }"
POST = "mutation($input: PostMessageInput!) { postMessage(input: $input) { cursor } }"
QUESTION = "Could you do a sponsored post for $5,000?"


def settings(url: str, folder: Path) -> Settings:
    return Settings(
        database_url=url,
        data_dir=folder,
        debug=False,
        access_log=False,
        model_engine="offline",
        workers=0,
        posts_per_minute=100_000,
    ).model_copy(update=UNTHROTTLED)


class Timings:
    def __init__(self) -> None:
        self.by_agent: dict[str, list[float]] = defaultdict(list)
        self.last: tuple[str, uuid.UUID, float, bool] | None = None

    def wrap(self, name: str, handler: Callable[[RunSnapshot], Awaitable[None]]) -> Any:
        async def timed(run: RunSnapshot) -> None:
            started = time.perf_counter()
            await handler(run)
            elapsed = time.perf_counter() - started
            self.by_agent[name].append(elapsed)
            self.last = (name, run.room_id, elapsed, run.trigger_message_id is not None)

        return timed


async def drain(
    runner: Any, timings: Timings, persona_of: dict[uuid.UUID, str]
) -> dict[str, list[float]]:
    per_host: dict[str, list[float]] = defaultdict(list)
    while await runner.run_once():
        # The participant's own turn (a message started it): where a due merge runs.
        if timings.last is not None and timings.last[0] == "persona" and timings.last[3]:
            host = persona_of.get(timings.last[1])
            if host is not None:
                per_host[host].append(timings.last[2])
        timings.last = None
    return per_host


async def post(http: httpx.AsyncClient, room_id: str, body: str, headers: dict[str, str]) -> None:
    variables = {"roomId": room_id, "body": body, "clientMessageId": uuid.uuid4().hex}
    await gql(http, POST, {"input": variables}, headers=headers)


async def cost_rows(db: Db, agent: str) -> list[ModelCall]:
    try:
        return list(await db.scalars(select(ModelCall).where(ModelCall.agent == agent)))
    finally:
        await db.close()


def cost_line(name: str, rows: list[ModelCall], model: str) -> str:
    if not rows:
        return f"{name}: no calls"
    inputs = statistics.mean(r.input_tokens for r in rows)
    outputs = statistics.mean(r.output_tokens for r in rows)
    dollars = [
        price(model, Usage(r.input_tokens, r.output_tokens, r.cached_tokens)) or Decimal(0)
        for r in rows
    ]
    mean = sum(dollars, Decimal(0)) / len(dollars)
    return (
        f"{name}: {len(rows)} calls, mean {inputs:.0f} input + {outputs:.0f} output tokens, "
        f"${mean:.6f} per run at {model} list prices"
    )


async def build(url: str, folder: Path) -> tuple[AsyncEngine, Any]:
    """A migrated database and an in-process app over it (in-process broker, offline engine)."""
    engine = create_engine(url)
    await upgrade(engine)
    broker = create_broker(None)
    await broker.start()
    app = create_app(settings(url, folder), engine=engine, broker=broker, model=OfflineClient())
    return engine, app


async def turn_phase(url: str, folder: Path, rooms: int, rounds: int) -> None:
    engine, app = await build(url, folder)
    server = await start_in_background(app)
    state = app.state.dealroom
    runner = state.runner
    runner._sweeps.clear()  # only the turn merges here
    timings = Timings()
    for name, handler in list(runner._handlers.items()):
        runner._handlers[name] = timings.wrap(name, handler)
    persona_of: dict[uuid.UUID, str] = {}
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            hosts: dict[str, dict[str, str]] = {}
            homes: dict[str, str] = {}
            guests: dict[str, list[tuple[str, dict[str, str]]]] = {}
            for label in ("A", "B"):
                hosts[label] = await sign_up(http, f"durable{label.lower()}", f"Host {label}")
                homes[label] = (await gql(http, HOME, headers=hosts[label]))["me"]["homeRoom"]["id"]
                await post(http, homes[label], RULES, hosts[label])
                await drain(runner, timings, persona_of)
                guests[label] = []
                for _ in range(rooms):
                    room_id, key = await open_room(http, f"durable{label.lower()}")
                    assert key is not None
                    guests[label].append((room_id, {"X-Guest-Key": key}))
                    persona_of[uuid.UUID(room_id)] = label
            per_host: dict[str, list[float]] = defaultdict(list)
            for n in range(rounds):
                await post(
                    http,
                    homes["A"],
                    f"For a sponsored post, never below ${5000 + 100 * n:,}.",
                    hosts["A"],
                )
                await drain(runner, timings, persona_of)
                for (room_a, key_a), (room_b, key_b) in zip(guests["A"], guests["B"], strict=True):
                    await post(http, room_a, QUESTION, key_a)
                    await post(http, room_b, QUESTION, key_b)
                    for host, values in (await drain(runner, timings, persona_of)).items():
                        per_host[host].extend(values)
        a, b = sorted(per_host["A"]), sorted(per_host["B"])
        pa, pb = percentile(a, 50), percentile(b, 50)
        print(
            f"(2) persona run with a merge due: n={len(a)} p50={pa * 1000:.1f} ms "
            f"p90={percentile(a, 90) * 1000:.1f} ms"
        )
        print(
            f"    persona run without:          n={len(b)} p50={pb * 1000:.1f} ms "
            f"p90={percentile(b, 90) * 1000:.1f} ms"
        )
        print(f"    ratio of p50s: {pa / pb:.2f}")
        for agent in ("arvist", "acc_update"):
            values = sorted(timings.by_agent.get(agent, []))
            if values:
                p50 = percentile(values, 50) * 1000
                print(f"    {agent} run handler: n={len(values)} p50={p50:.1f} ms")
        db = Db(state.sessionmaker)
        arvist = await cost_rows(db, "arvist")
        merges = await cost_rows(db, "acc_update")
        print("(1) " + cost_line("Arvist", arvist, state.settings.arvist_model))
        print("    " + cost_line("AccUpdate", merges, state.settings.acc_update_model))
    finally:
        await server.stop()
        await engine.dispose()


async def sweep_phase(url: str, folder: Path, rooms: int, merged_batches: int) -> None:
    engine, app = await build(url, folder)
    state = app.state.dealroom
    sessionmaker = state.sessionmaker
    try:
        server = await start_in_background(app)
        try:
            async with http_client(f"http://127.0.0.1:{server.port}") as http:
                headers = await sign_up(http, "sweephost", "Sweep Host")
                me = await gql(http, "{ me { id } }", headers=headers)
            host_id = uuid.UUID(me["me"]["id"])
        finally:
            await server.stop()
        now = state.clock.now()
        room_rows, seat_rows = [], []
        for _ in range(rooms):
            room_id = uuid.uuid4()
            room_rows.append(
                {
                    "id": room_id,
                    "kind": "deal",
                    "mode": "live",
                    "host_account_id": host_id,
                    "title": "A visitor x Sweep Host",
                    "memory": {"host": {"rates": {"sponsored_post": {"floor": "4000 USD"}}}},
                    "memory_version": 1,
                    "event_seq": 0,
                    "model_picks": {},
                    "created_at": now,
                    "last_activity_at": now,
                }
            )
            seat_rows.append(
                {
                    "id": uuid.uuid4(),
                    "room_id": room_id,
                    "key": "host",
                    "account_id": host_id,
                    "last_merged_memory_version": 1,
                    "created_at": now,
                }
            )
            seat_rows.append(
                {
                    "id": uuid.uuid4(),
                    "room_id": room_id,
                    "key": "visitor",
                    "account_id": None,
                    "last_merged_memory_version": 0,
                    "created_at": now,
                }
            )
        started = time.perf_counter()
        async with engine.begin() as conn:
            for start in range(0, rooms, 2000):
                await conn.execute(insert(Room), room_rows[start : start + 2000])
            for start in range(0, len(seat_rows), 4000):
                await conn.execute(insert(Participant), seat_rows[start : start + 4000])
            await conn.execute(
                update(AccountMemory)
                .where(AccountMemory.account_id == host_id)
                .values(document={"rates": {"sponsored_post": {"floor": "6000 USD"}}}, version=2)
            )
        async with engine.begin() as conn:
            await conn.exec_driver_sql("ANALYZE")  # what autovacuum does after a bulk insert
        print(f"(3) {rooms} rooms inserted in {time.perf_counter() - started:.1f} s")
        statements: list[str] = []

        def record(_c: Any, _cur: Any, statement: str, *_a: Any) -> None:
            statements.append(statement)

        runner = state.runner
        runner._sweeps.clear()
        timings = Timings()
        for name, handler in list(runner._handlers.items()):
            runner._handlers[name] = timings.wrap(name, handler)
        claims: list[float] = []
        claim = runner._claim

        async def timed_claim() -> Any:
            began = time.perf_counter()
            try:
                return await claim()
            finally:
                claims.append(time.perf_counter() - began)

        runner._claim = timed_claim
        passes: list[tuple[int, float, int]] = []
        executed, executing = 0, 0.0
        while True:
            statements.clear()
            event.listen(engine.sync_engine, "before_cursor_execute", record)
            started = time.perf_counter()
            try:
                queued = await sync_stale_account_memory(
                    sessionmaker, state.clock, state.settings.stale_sync_batch
                )
            finally:
                event.remove(engine.sync_engine, "before_cursor_execute", record)
            passes.append((queued, time.perf_counter() - started, len(statements)))
            if queued == 0:
                break
            if len(passes) <= merged_batches:
                # Workers merge this batch: the real runs, timed.
                started = time.perf_counter()
                while await runner.run_once():
                    executed += 1
                executing += time.perf_counter() - started
            else:
                # The rest are merged by fiat (same end state, not timed), so the sweep's scan
                # is measured over the whole 10,000 without 10,000 merges' wall time.
                async with engine.begin() as conn:
                    ids = select(AgentRun.participant_id).where(AgentRun.status == "queued")
                    await conn.execute(
                        update(Participant)
                        .where(Participant.id.in_(ids))
                        .values(last_merged_memory_version=2)
                    )
                    await conn.execute(
                        update(AgentRun).where(AgentRun.status == "queued").values(status="done")
                    )
        work = [p for p in passes if p[0]]
        times = sorted(p[1] for p in work)
        print(
            f"    sweep: {len(work)} passes queued {sum(p[0] for p in work)} AccUpdate runs "
            f"({state.settings.stale_sync_batch} a pass) in {sum(times):.2f} s of sweeping; per "
            f"pass p50 {percentile(times, 50) * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms; "
            f"statements per pass {sorted({p[2] for p in work})} (the last, empty pass: "
            f"{passes[-1][2]})"
        )
        handler = sorted(timings.by_agent.get("acc_update", []))
        claims.sort()
        print(
            f"    the first {merged_batches} batches merged by one worker: {executed} runs in "
            f"{executing:.1f} s ({executed / executing:.0f} runs/s); AccUpdate handler p50 "
            f"{percentile(handler, 50) * 1000:.1f} ms, claim p50 "
            f"{percentile(claims, 50) * 1000:.1f} ms"
        )
        db = Db(sessionmaker)
        try:
            merged = await db.scalar(
                select(func.count())
                .select_from(Participant)
                .where(Participant.key == "host", Participant.last_merged_memory_version == 2)
            )
        finally:
            await db.close()
        print(f"    host seats up to date at the end: {merged} of {rooms + 1}")
    finally:
        await engine.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sweep-rooms", type=int, default=10_000)
    parser.add_argument("--merged-batches", type=int, default=2)
    parser.add_argument("--pg", default=DEFAULT_PG_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0)
    args = parser.parse_args()
    prepare_run(args.wait_idle)
    for line in machine_summary():
        print(line)
    for backend in ("sqlite", "postgresql"):
        folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-durable-"))
        url = (
            f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
            if backend == "sqlite"
            else await create_pg_database(args.pg, "bench_durable")
        )
        try:
            print(f"--- {backend}")
            await turn_phase(url, folder, args.rooms, args.rounds)
            if backend == "postgresql":
                sweep_url = await create_pg_database(args.pg, "bench_sweep")
                try:
                    await sweep_phase(sweep_url, folder, args.sweep_rooms, args.merged_batches)
                finally:
                    await drop_pg_database(args.pg, sweep_url)
        finally:
            if backend == "postgresql":
                await drop_pg_database(args.pg, url)
            remove_tree(folder)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
