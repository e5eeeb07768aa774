"""Partner webhook benchmark: what the outbox row costs an approval, how soon a stage change
reaches a partner after its commit, and deliveries per second per worker process.

Method. On each backend (SQLite in a temporary file with the in-process broker; PostgreSQL in
a throwaway database with Redis) the world is written as rows: two hosts, each with N deal
rooms holding a written offer waiting on the brand (WRITTEN_AWAITING_BRAND) and a guest
visitor. Host B has a webhook (all four events) pointing at a receiver running in its own
process (bench/_receiver.py: answers 200 at once, logs each webhook-id with its arrival time).

(1) outbox cost on approveOffer: the app is served by uvicorn with no delivery worker
    (``webhook_workers=0``); the guests approve their offers over HTTP, alternating host A's
    rooms (no webhook: the outbox is one indexed SELECT that finds nobody) and host B's (the
    outbox writes one event and one delivery row). p50/p99 of each, and the ratio.
(2) fan-out latency: 1,000 stage changes, written one after another through
    ``offer_events.record_stage`` (the function every stage change goes through) in their own
    transactions, while one in-process WebhookWorker (1 loop, batch 20) delivers them; the
    commit time of each is taken right after ``commit()`` returns, and the receiver's arrival
    time of its webhook-id is matched to it: latency after commit, p50/p99.
(3) throughput: 1,000 stage changes are written with no worker running, then one worker
    process (this one; 1 loop, then 4 loops) delivers the backlog: deliveries per second from
    the first claim to the last recorded delivery.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    create_pg_database,
    drop_pg_database,
    free_port,
    gql,
    http_client,
    machine_summary,
    ms,
    percentile,
    prepare_run,
    remove_tree,
)
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.webhook_delivery import WebhookWorker
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import (
    Account,
    Offer,
    Participant,
    Room,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from dealroom.realtime import Broker, create_broker
from dealroom.server import start_in_background
from dealroom.services.accounts.identity import digest, new_guest_key
from dealroom.services.clock import SystemClock
from dealroom.services.live.publish import publish_after_commit
from dealroom.services.offers import events as offer_events
from dealroom.services.partners.webhooks import new_secret

APPROVE = "mutation($id: ID!) { approveOffer(offerId: $id) { stage } }"


@dataclass
class Deal:
    offer_id: uuid.UUID
    guest_key: str


async def world(engine: AsyncEngine, rooms: int, hook_url: str) -> tuple[list[Deal], list[Deal]]:
    """Hosts A (no webhook) and B (a webhook), ``rooms`` offers each, waiting on the brand."""
    db = Db(create_sessionmaker(engine))
    now = datetime.now(UTC)
    deals: dict[str, list[Deal]] = {"a": [], "b": []}
    try:
        for handle in ("a", "b"):
            host = Account(id=uuid.uuid4(), handle=f"host{handle}", display_name=handle)
            await db.add(host)
            if handle == "b":
                await db.add(
                    Webhook(
                        account_id=host.id,
                        url=hook_url,
                        events=[
                            "offer.created",
                            "offer.stage_changed",
                            "payment.captured",
                            "payment.declined",
                        ],
                        secret=new_secret(),
                        status="active",
                    )
                )
            for i in range(rooms):
                room = Room(
                    id=uuid.uuid4(),
                    kind="deal",
                    mode="live",
                    host_account_id=host.id,
                    title=f"deal {i}",
                    memory={},
                    created_at=now,
                    last_activity_at=now,
                )
                key = new_guest_key()
                offer = Offer(
                    id=uuid.uuid4(),
                    room_id=room.id,
                    key="new-offer",
                    seller_account_id=host.id,
                    status="APPROVED",
                    terms={
                        "deliverables": ["one sponsored post"],
                        "fee": {"amount": "7500.00", "currency": "USD"},
                        "dates": ["2027-03-15"],
                    },
                    open_questions=[],
                    version=1,
                    fingerprint="0" * 64,
                    created_at=now,
                    updated_at=now,
                )
                await db.add(room)
                await db.add(
                    Participant(room_id=room.id, key="host", account_id=host.id),
                    Participant(room_id=room.id, key="visitor", guest_key_hash=digest(key)),
                    offer,
                )
                deals[handle].append(Deal(offer.id, key))
        await db.commit()
    finally:
        await db.close()
    return deals["a"], deals["b"]


async def approvals(
    base_url: str, without: list[Deal], with_hook: list[Deal]
) -> tuple[list[float], list[float]]:
    plain: list[float] = []
    hooked: list[float] = []
    async with http_client(base_url) as http:
        for a, b in zip(without, with_hook, strict=True):
            for deal, into in ((a, plain), (b, hooked)):
                started = time.perf_counter()
                data = await gql(
                    http,
                    APPROVE,
                    {"id": str(deal.offer_id)},
                    headers={"X-Guest-Key": deal.guest_key},
                )
                into.append(time.perf_counter() - started)
                assert data["approveOffer"]["stage"] == "BRAND_ACKED_AWAITING_TALENT", data
    return plain, hooked


async def stage_changes(
    engine: AsyncEngine, broker: Broker, offers: Sequence[uuid.UUID], count: int
) -> dict[str, float]:
    """``count`` stage changes through record_stage; the wall time each committed at, by the
    id of the webhook event it wrote."""
    sessionmaker = create_sessionmaker(engine)
    committed: dict[str, float] = {}
    for i in range(count):
        offer_id = offers[i % len(offers)]
        db = Db(sessionmaker)
        try:
            offer = await db.get(Offer, offer_id)
            assert offer is not None
            published = await offer_events.record_stage(
                db, offer, actor="bench", now=datetime.now(UTC)
            )
            publish_after_commit(db, broker, published)
            await db.commit()
            at = time.time()
            event_id = await db.scalar(
                select(WebhookEvent.id).order_by(WebhookEvent.created_at.desc()).limit(1)
            )
            committed[str(event_id)] = at
        finally:
            await db.close()
    return committed


async def delivered(engine: AsyncEngine) -> int:
    db = Db(create_sessionmaker(engine))
    try:
        return int(
            await db.scalar(
                select(func.count(WebhookDelivery.id)).where(WebhookDelivery.status == "delivered")
            )
            or 0
        )
    finally:
        await db.close()


def arrivals(log: Path) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in log.read_text().splitlines():
        event_id, at = line.split()
        found.setdefault(event_id, float(at))  # the first arrival of each id
    return found


async def run_backend(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-hooks-"))
    database_url: str | None = None
    receiver: subprocess.Popen[bytes] | None = None
    result: dict[str, Any] = {"backend": name}
    try:
        if name == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_hooks")
            url, redis_url = database_url, args.redis_url
        else:
            url, redis_url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}", None
        port = free_port()
        log = folder / "arrivals.log"
        receiver = subprocess.Popen(  # noqa: ASYNC220 (started once, before anything is timed)
            [sys.executable, str(Path(__file__).parent / "_receiver.py"), str(port), str(log)]
        )
        hook_url = f"http://127.0.0.1:{port}/hook"
        engine = create_engine(url)
        await upgrade(engine)
        broker = create_broker(redis_url)
        await broker.start()
        settings = Settings(
            database_url=url,
            redis_url=redis_url,
            data_dir=folder,
            access_log=False,
            model_engine="offline",
            workers=0,
            webhook_workers=0,
            webhook_allow_loopback=True,
        )
        plain, hooked = await world(engine, args.approvals, hook_url)
        fanout = [d.offer_id for d in hooked]  # stage changes spread over host B's rooms
        await asyncio.sleep(1.0)  # the receiver process is up

        app = create_app(settings, engine=engine, broker=broker)
        server = await start_in_background(app)
        try:
            result["approve"] = await approvals(f"http://127.0.0.1:{server.port}", plain, hooked)
        finally:
            await server.stop()
        # the approvals' own deliveries are not measured: send them now
        sessionmaker = create_sessionmaker(engine)
        drain = WebhookWorker(settings, sessionmaker, broker, SystemClock())
        while await drain.run_once():
            pass

        one = settings.model_copy(update={"webhook_workers": 1, "webhook_poll_seconds": 0.2})
        worker = WebhookWorker(one, sessionmaker, broker, SystemClock())
        await worker.start()
        before = await delivered(engine)
        committed = await stage_changes(engine, broker, fanout, args.changes)
        while await delivered(engine) < before + args.changes:  # noqa: ASYNC110 (polls the DB)
            await asyncio.sleep(0.05)
        await worker.close()
        seen = arrivals(log)
        result["latency"] = sorted(seen[i] - t for i, t in committed.items() if i in seen)
        result["changes_per_second"] = args.changes / (
            max(committed.values()) - min(committed.values())
        )

        for loops in (1, 4):
            await stage_changes(engine, broker, fanout, args.changes)  # a backlog, no worker
            busy = settings.model_copy(update={"webhook_workers": loops})
            worker = WebhookWorker(busy, sessionmaker, broker, SystemClock())
            before = await delivered(engine)
            started = time.perf_counter()
            await worker.start()
            while await delivered(engine) < before + args.changes:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            seconds = time.perf_counter() - started
            await worker.close()
            result[f"throughput_{loops}"] = args.changes / seconds
        await broker.close()
        await engine.dispose()
    finally:
        if receiver is not None:
            receiver.terminate()
            with contextlib.suppress(Exception):
                receiver.wait(timeout=10)
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)
    return result


def report(result: dict[str, Any]) -> list[str]:
    plain, hooked = result["approve"]
    plain, hooked = sorted(plain), sorted(hooked)
    latency = result["latency"]
    p50_plain, p50_hooked = statistics.median(plain), statistics.median(hooked)
    return [
        f"### {result['backend']}",
        "",
        "| measure | figure |",
        "| --- | --- |",
        f"| approveOffer, no webhook (n={len(plain)}) | p50 {ms(p50_plain)} ms, "
        f"p99 {ms(percentile(plain, 99))} ms |",
        f"| approveOffer, webhook: outbox event + delivery row (n={len(hooked)}) | p50 "
        f"{ms(p50_hooked)} ms, p99 {ms(percentile(hooked, 99))} ms |",
        f"| outbox cost on approveOffer (p50 ratio) | {p50_hooked / p50_plain:.2f}x |",
        f"| delivery after commit, {len(latency)} stage changes at "
        f"{result['changes_per_second']:.0f}/s | p50 {ms(statistics.median(latency))} ms, "
        f"p99 {ms(percentile(latency, 99))} ms, max {ms(latency[-1])} ms |",
        f"| deliveries/s, one worker process, 1 loop (batch 20) | {result['throughput_1']:.0f} |",
        f"| deliveries/s, one worker process, 4 loops | {result['throughput_4']:.0f} |",
        "",
    ]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--approvals", type=int, default=200)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prepare_run(args.wait_idle)
    print("\n".join(machine_summary()), flush=True)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for name in backends:
        result = asyncio.run(run_backend(name, args))
        print("\n".join(report(result)), flush=True)


if __name__ == "__main__":
    main()
