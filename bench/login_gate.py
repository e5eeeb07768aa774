"""Login-gate benchmark: what the outbound choke point costs a turn, gated against ungated, and how
long a claim and its ordered replay take for a room with 20 held effects.

Method. On each backend (SQLite in a temporary file with the in-process broker; PostgreSQL in
a throwaway database with Redis) the app is built in-process over the offline engine and
served by uvicorn on a loopback port; the bench speaks GraphQL over HTTP like a client app.
A host signs up and tells their agent their rules in the home room.

(1) choke point on a turn: ROOMS guest rooms (gated: the visitor is an unclaimed guest) and
    ROOMS rooms of signed-in brands (ungated) each get the same bid ("...can pay $7,000"): the
    visitor persona's turn sends a note to the host's pane, which ``effects.emit`` holds
    (gated: a ``pending_effects`` row, the gate's run, ``LoginRequiredChanged``) or performs
    (a dispatch and the host pane's run). With ``workers=0`` every queued run is executed with
    ``runner.run_once()`` one at a time; the persona run that answers the bid is timed and its
    SQL statements counted (engine ``before_cursor_execute``). Only that run is measured; gated
    and ungated rooms alternate so drift hits both alike.
(2) claim + replay: a guest room holding 20 notes (arranged as the gate leaves them) is
    claimed by ``signUp`` carrying the guest key, on a server with 2 workers; the signUp's
    HTTP time (the claim is in its transaction) is set against a signUp with no guest key, and
    the replay is timed from the signUp's answer until every held row is ``replayed`` and the
    runs it queued (the host pane's 20 deliveries) are done. REPEAT rooms, one at a time.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    UNTHROTTLED,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    open_room,
    percentile,
    remove_tree,
    sign_up,
)
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents.models.offline import OfflineClient
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Participant, PendingEffect
from dealroom.realtime import create_broker
from dealroom.server import start_in_background
from dealroom.services.turns.context import RunSnapshot

RULES = "My fee for a sponsored post is $8,000, never below $6,000."
BID = "Hi, we'd like a sponsored post on 15 March 2027 and can pay $7,000"
POST = "mutation($input: PostMessageInput!) { postMessage(input: $input) { cursor } }"
HELD = 20


class Counter:
    """SQL statements on the engine while ``on`` is set."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.on = False
        self.count = 0
        event.listen(engine.sync_engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        if self.on:
            self.count += 1


def settings_for(url: str, redis_url: str | None, folder: Path, workers: int) -> Settings:
    """The throttles are off: every room here is opened from one address."""
    return Settings(
        database_url=url,
        redis_url=redis_url,
        data_dir=folder,
        debug=False,
        access_log=False,
        model_engine="offline",
        workers=workers,
        worker_poll_seconds=0.05,
        posts_per_minute=100_000,
        guest_message_cap=100_000,
    ).model_copy(update=UNTHROTTLED)


async def post(http: Any, room_id: str, headers: dict[str, str], body: str) -> None:
    await gql(
        http,
        POST,
        {"input": {"roomId": room_id, "body": body, "clientMessageId": uuid.uuid4().hex}},
        headers,
    )


async def turn_phase(
    engine: AsyncEngine, url: str, redis_url: str | None, folder: Path, rooms: int
) -> dict[str, Any]:
    broker = create_broker(redis_url)
    await broker.start()
    app = create_app(
        settings_for(url, redis_url, folder, 0), engine=engine, broker=broker, model=OfflineClient()
    )
    runner: TurnRunner = app.state.dealroom.runner
    server = await start_in_background(app)
    counter = Counter(engine)
    samples: dict[str, list[tuple[float, int]]] = {"gated": [], "ungated": []}
    current: list[str] = []
    persona = runner._handlers["persona"]

    async def measured(run: RunSnapshot) -> None:
        if not current:
            await persona(run)
            return
        counter.count, counter.on = 0, True
        started = time.perf_counter()
        try:
            await persona(run)
        finally:
            counter.on = False
        samples[current[0]].append((time.perf_counter() - started, counter.count))
        current.clear()

    runner._handlers["persona"] = measured
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            host = await sign_up(http, "devraman", "Dev Raman")
            home = await gql(http, "query { me { homeRoom { id } } }", headers=host)
            await post(http, home["me"]["homeRoom"]["id"], host, RULES)
            while await runner.run_once():
                pass
            for index in range(rooms):
                for kind in ("gated", "ungated"):
                    if kind == "gated":
                        room_id, key = await open_room(http, "devraman")
                        headers = {"X-Guest-Key": str(key)}
                    else:
                        headers = await sign_up(http, f"brand{index}", f"Brand {index}")
                        room_id, _ = await open_room(http, "devraman", headers)
                    await post(http, room_id, headers, BID)
                    # The message's own runs: the persona (measured) first, then Distil.
                    current.append(kind)
                    while await runner.run_once():
                        pass
    finally:
        await server.stop()
        await broker.close()
    result: dict[str, Any] = {}
    for kind, rows in samples.items():
        times = sorted(t for t, _ in rows)
        counts = [c for _, c in rows]
        result[kind] = {
            "runs": len(rows),
            "p50_ms": percentile(times, 50) * 1000,
            "p90_ms": percentile(times, 90) * 1000,
            "statements_median": statistics.median(counts) if counts else float("nan"),
        }
    return result


async def arrange_held(engine: AsyncEngine, room_id: str, now: Any) -> None:
    db = Db(create_sessionmaker(engine))
    try:
        rid = uuid.UUID(room_id)
        seats = {
            p.key: p.id
            for p in await db.scalars(select(Participant).where(Participant.room_id == rid))
        }
        source = uuid.uuid4()
        for index in range(HELD):
            await db.add(
                PendingEffect(
                    id=uuid.uuid4(),
                    room_id=rid,
                    seq=index + 1,
                    kind="pane_send",
                    payload={
                        "from": str(seats["visitor"]),
                        "to": str(seats["host"]),
                        "substance": f"A visitor offers ${7000 + index} for a sponsored post.",
                        "payload": {"open_questions": []},
                        "position": index,
                        "chain_depth": 2,  # the host's answer is not sent on: only the replay
                        "stage": "NO_WRITTEN_OFFER",
                    },
                    status="held",
                    source_run_id=source,
                    created_at=now,
                )
            )
        await db.commit()
    finally:
        await db.close()


async def replay_phase(
    engine: AsyncEngine, url: str, redis_url: str | None, folder: Path, repeat: int
) -> dict[str, Any]:
    broker = create_broker(redis_url)
    await broker.start()
    app = create_app(
        settings_for(url, redis_url, folder, 2), engine=engine, broker=broker, model=OfflineClient()
    )
    runner: TurnRunner = app.state.dealroom.runner
    clock = app.state.dealroom.clock
    server = await start_in_background(app)
    claims: list[float] = []
    plain: list[float] = []
    replays: list[float] = []
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            for index in range(repeat):
                started = time.perf_counter()
                await sign_up(http, f"plain{index}", f"Plain {index}")
                plain.append(time.perf_counter() - started)
                room_id, key = await open_room(http, "devraman")
                await arrange_held(engine, room_id, clock.now())
                started = time.perf_counter()
                await gql(
                    http,
                    "mutation($i: SignUpInput!) { signUp(input: $i) { token } }",
                    {
                        "i": {
                            "email": f"mara{index}@example.com",
                            "password": "correct horse battery",
                            "handle": f"mara{index}",
                            "displayName": f"Mara {index}",
                        }
                    },
                    {"X-Guest-Key": str(key)},
                )
                claimed = time.perf_counter()
                claims.append(claimed - started)
                await wait_replayed(engine, room_id)
                await runner.wait_idle(120)
                replays.append(time.perf_counter() - claimed)
    finally:
        await server.stop()
        await broker.close()
    return {
        "signup_plain_p50_ms": percentile(sorted(plain), 50) * 1000,
        "signup_claim_p50_ms": percentile(sorted(claims), 50) * 1000,
        "replay_20_p50_ms": percentile(sorted(replays), 50) * 1000,
        "replay_20_max_ms": max(replays) * 1000,
        "per_effect_ms": percentile(sorted(replays), 50) * 1000 / HELD,
        "rooms": repeat,
    }


async def wait_replayed(engine: AsyncEngine, room_id: str) -> None:
    db = Db(create_sessionmaker(engine))
    try:
        while True:
            left = await db.scalar(
                select(func.count(PendingEffect.id)).where(
                    PendingEffect.room_id == uuid.UUID(room_id),
                    PendingEffect.status != "replayed",
                )
            )
            await db.rollback()
            if not left:
                return
            await asyncio.sleep(0.01)
    finally:
        await db.close()


async def run_backend(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-gate-"))
    database_url: str | None = None
    try:
        if name == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_gate")
            url, redis_url = database_url, args.redis_url
        else:
            url, redis_url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}", None
        engine = create_engine(url)
        await upgrade(engine)
        try:
            turns = await turn_phase(engine, url, redis_url, folder, args.rooms)
            replay = await replay_phase(engine, url, redis_url, folder, args.repeat)
        finally:
            await engine.dispose()
        return {"backend": name, "turns": turns, "replay": replay}
    finally:
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)


def report(result: dict[str, Any]) -> None:
    turns, replay = result["turns"], result["replay"]
    gated, ungated = turns["gated"], turns["ungated"]
    print(f"\n== {result['backend']} ==")
    print("(1) the bid's persona turn, through the choke point")
    for kind, row in (("gated (held)", gated), ("ungated (sent)", ungated)):
        print(
            f"  {kind:15} runs={row['runs']:3}  p50={row['p50_ms']:.1f} ms  "
            f"p90={row['p90_ms']:.1f} ms  statements={row['statements_median']:.0f}"
        )
    print(
        f"  ratio gated/ungated: p50 {gated['p50_ms'] / ungated['p50_ms']:.2f}x, statements "
        f"{gated['statements_median'] / ungated['statements_median']:.2f}x"
    )
    print(f"(2) claim + ordered replay of {HELD} held notes ({replay['rooms']} rooms)")
    print(
        f"  signUp p50: {replay['signup_plain_p50_ms']:.1f} ms without a guest key, "
        f"{replay['signup_claim_p50_ms']:.1f} ms claiming "
        f"({replay['signup_claim_p50_ms'] / replay['signup_plain_p50_ms']:.2f}x)"
    )
    print(
        f"  replay to the last delivery: p50 {replay['replay_20_p50_ms']:.0f} ms, "
        f"max {replay['replay_20_max_ms']:.0f} ms, {replay['per_effect_ms']:.0f} ms per effect"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--rooms", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    for line in machine_summary():
        print(line)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for name in backends:
        report(await run_backend(name, args))
    sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
