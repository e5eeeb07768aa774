"""Quiet-room benchmark: what watching rooms costs the database, and what the Guard costs a room.

Method.
(1) Watch claims on PostgreSQL (a throwaway database, migrated). 10,000 rooms are inserted,
    each with an armed watch (``room_watches``), armed within the last minute so none is due:
    the steady state, where every worker's poll finds nothing. ``WatchRepository.claim_due``
    is timed in its own transaction (begin, the claim query with ``FOR UPDATE SKIP LOCKED``,
    commit) N times; then with 50 watches due (each claimed and rolled back, so the same 50
    stay due); then against an empty ``room_watches`` table for the ratio. The re-arm a reply
    does (``WatchRepository.arm`` under the room's row lock) is timed the same way. The query
    plan of the claim is printed.
(2) The Guard's cost per quiet room (SQLite, in-process app over HTTP, offline engine,
    ``workers=0``: every queued run is executed by this script with ``runner.run_once()``).
    In each of R deal rooms a guest chats the offline engine's path to a written offer, the
    brand and the talent approve it (each side's agent is told), and the room goes quiet: the
    clock moves past ``DEALROOM_GUARD_QUIET_SECONDS``, the watch fires, the Guard runs. Tokens
    are read from the ledger (``model_calls``); for the offline engine they are estimates of
    ~4 characters a token, priced here at the configured models' list prices
    (``pricing.price``: the Guard on ``DEALROOM_GUARD_MODEL``, gemini-2.5-pro by default).

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
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _client import (
    DEFAULT_PG_URL,
    POST,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    ms,
    open_room,
    percentile,
    remove_tree,
    sign_up,
    start_uvicorn,
)

from dealroom.agents.models.base import Usage
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.pricing import price
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Account, ModelCall, Room, RoomWatch
from dealroom.persistence.watches import WatchRepository
from dealroom.realtime import create_broker

HOME = "query { me { homeRoom { id } } }"
ROOM_OFFER = "query($id: ID!) { room(id: $id) { offer { id version } } }"
APPROVE = """
mutation($offerId: ID!, $version: Int) {
  approveOffer(offerId: $offerId, version: $version) { stage }
}
"""
RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, and I never work with alcohol "
    "brands."
)
LINES = (
    "Hi, we'd like a sponsored post on 15 March 2027, 50% upfront",
    "We can pay $7,000",
    "Yes, that works",
)


class MovableClock:
    """The injected clock, moved by the script instead of waiting a minute."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


# --- (1) watch claims on PostgreSQL ------------------------------------------------------------


async def timed(sessionmaker: Any, work: Any, n: int, *, commit: bool = True) -> list[float]:
    samples: list[float] = []
    for _ in range(n):
        db = Db(sessionmaker)
        start = time.perf_counter()
        try:
            await work(db)
            if commit:
                await db.commit()
            else:
                await db.rollback()
        finally:
            await db.close()
        samples.append(time.perf_counter() - start)
    return sorted(samples)


def line(label: str, samples: Sequence[float]) -> str:
    return (
        f"| {label} | {len(samples)} | {ms(percentile(samples, 50))} | "
        f"{ms(percentile(samples, 99))} |"
    )


async def claims(pg_url: str, watches: int, n: int) -> list[str]:
    url = await create_pg_database(pg_url, "dealroom_bench_watches")
    engine = create_engine(url)
    out: list[str] = []
    try:
        await upgrade(engine)
        sessionmaker = create_sessionmaker(engine)
        now = datetime.now(UTC)
        account = uuid.uuid4()
        rooms = [uuid.uuid4() for _ in range(watches)]
        async with engine.begin() as conn:
            await conn.execute(
                insert(Account), [{"id": account, "handle": "benchhost", "display_name": "Bench"}]
            )

        async def claim(db: Db, at: datetime = now) -> None:
            guard_before = at - timedelta(seconds=60)
            await WatchRepository(db).claim_due(
                guard_before=guard_before,
                curator_before=at - timedelta(seconds=600),
                limit=50,
            )

        empty = await timed(sessionmaker, claim, n)
        async with engine.begin() as conn:
            await conn.execute(
                insert(Room),
                [
                    {
                        "id": room,
                        "kind": "deal",
                        "mode": "live",
                        "host_account_id": account,
                        "title": f"room {i}",
                        "memory": {},
                        "created_at": now,
                        "last_activity_at": now,
                    }
                    for i, room in enumerate(rooms)
                ],
            )
            await conn.execute(
                insert(RoomWatch),
                [
                    {
                        "room_id": room,
                        "generation": 1,
                        "step": "guard",
                        "armed_at": now - timedelta(seconds=i % 59),
                    }
                    for i, room in enumerate(rooms)
                ],
            )
            await conn.execute(text("ANALYZE room_watches"))
        idle = await timed(sessionmaker, claim, n)

        async def due(db: Db) -> None:
            # 50 of the 10,000 are past the window; rolled back so they stay due.
            await claim(db, now + timedelta(seconds=60))

        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "UPDATE room_watches SET armed_at = armed_at - interval '120 seconds' "
                    "WHERE room_id IN (SELECT room_id FROM room_watches LIMIT 50)"
                )
            )
        some_due = await timed(sessionmaker, due, n, commit=False)
        counter = 0

        async def arm(db: Db) -> None:
            nonlocal counter
            counter += 1
            room = rooms[counter % len(rooms)]
            await db.execute(select(Room.id).where(Room.id == room).with_for_update())
            await WatchRepository(db).arm(room, datetime.now(UTC))

        arming = await timed(sessionmaker, arm, n)
        async with engine.connect() as conn:
            plan = (
                await conn.execute(
                    text(
                        "EXPLAIN SELECT * FROM room_watches WHERE (step = 'guard' AND armed_at <= "
                        ":g) OR (step = 'curator' AND armed_at <= :c) ORDER BY armed_at LIMIT 50 "
                        "FOR UPDATE SKIP LOCKED"
                    ),
                    {"g": now - timedelta(seconds=60), "c": now - timedelta(seconds=600)},
                )
            ).scalars()
            plan_lines = list(plan)
        out += [
            f"### (1) watch claims on PostgreSQL, {watches:,} armed watches, {n} samples each",
            "",
            "| operation | n | p50 ms | p99 ms |",
            "| --- | --- | --- | --- |",
            line("claim, empty table", empty),
            line(f"claim, {watches:,} armed, none due", idle),
            line(f"claim, {watches:,} armed, 50 due (claimed, rolled back)", some_due),
            line("re-arm on a reply (room lock + watch update)", arming),
            "",
            f"ratio p50 none-due / empty: {statistics.median(idle) / statistics.median(empty):.2f}",
            "",
            "plan: " + " / ".join(p.strip() for p in plan_lines),
        ]
    finally:
        await engine.dispose()
        await drop_pg_database(pg_url, url)
    return out


# --- (2) the Guard's cost per quiet room ----------------------------------------------------


async def drain(app_state: Any) -> int:
    ran = 0
    while await app_state.runner.run_once():
        ran += 1
    return ran


async def guard_cost(rooms: int) -> list[str]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-guard-"))
    clock = MovableClock()
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}",
        model_engine="offline",
        workers=0,
        access_log=False,
    )
    engine = create_engine(settings.resolved_database_url)
    await upgrade(engine)
    broker = create_broker(None)
    await broker.start()
    app = create_app(settings, clock=clock, engine=engine, broker=broker, model=OfflineClient())
    state = app.state.dealroom
    server, task, port = await start_uvicorn(app)
    try:
        async with http_client(f"http://127.0.0.1:{port}") as http:
            host = await sign_up(http, "guardbench", "Dev Raman")
            home = (await gql(http, HOME, headers=host))["me"]["homeRoom"]["id"]
            await gql(http, POST, {"input": _post(home, RULES)}, host)
            await drain(state)
            room_ids: list[str] = []
            for _ in range(rooms):
                room_id, key = await open_room(http, "guardbench")
                guest = {"X-Guest-Key": key} if key else {}
                for text_line in LINES:
                    await gql(http, POST, {"input": _post(room_id, text_line)}, guest)
                    await drain(state)
                offer = (await gql(http, ROOM_OFFER, {"id": room_id}, guest))["room"]["offer"]
                if offer is not None:
                    for who in (guest, host):
                        await gql(
                            http,
                            APPROVE,
                            {"offerId": offer["id"], "version": offer["version"]},
                            who,
                        )
                        await drain(state)
                room_ids.append(room_id)
            clock.offset += timedelta(seconds=settings.guard_quiet_seconds + 1)
            await state.runner.sweep()
            await drain(state)
        db = Db(state.sessionmaker)
        try:
            calls = list(
                await db.scalars(
                    select(ModelCall).where(ModelCall.room_id.in_([uuid.UUID(r) for r in room_ids]))
                )
            )
        finally:
            await db.close()
    finally:
        server.should_exit = True
        await task
        await broker.close()
        await engine.dispose()
        remove_tree(folder)
    by_agent: dict[str, list[ModelCall]] = defaultdict(list)
    for call in calls:
        by_agent[call.agent].append(call)
    total = sum((_list_price(c) for c in calls), Decimal(0))
    out = [
        f"### (2) the Guard's cost per quiet room, {rooms} deal rooms (offline token estimates, "
        "list prices)",
        "",
        "| agent | model | calls per room | input tok/call | output tok/call | $ per room "
        "| share |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for agent, rows in sorted(by_agent.items(), key=lambda kv: -sum(map(_list_price, kv[1]))):
        spend = sum((_list_price(c) for c in rows), Decimal(0))
        out.append(
            f"| {agent} | {rows[0].model} | {len(rows) / rooms:.1f} | "
            f"{statistics.mean(c.input_tokens for c in rows):.0f} | "
            f"{statistics.mean(c.output_tokens for c in rows):.0f} | "
            f"{spend / rooms:.5f} | {spend / total:.1%} |"
        )
    out.append(f"| all | | {len(calls) / rooms:.1f} | | | {total / rooms:.5f} | 100% |")
    return out


def _post(room_id: str, body: str) -> dict[str, str]:
    return {"roomId": room_id, "body": body, "clientMessageId": uuid.uuid4().hex}


def _list_price(call: ModelCall) -> Decimal:
    usage = Usage(call.input_tokens, call.output_tokens, call.cached_tokens)
    return price(call.model, usage) or Decimal(0)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--watches", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--rooms", type=int, default=10)
    args = parser.parse_args(argv)
    lines = [*machine_summary(), ""]
    lines += asyncio.run(claims(args.pg_url, args.watches, args.samples))
    lines += ["", *asyncio.run(guard_cost(args.rooms))]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
