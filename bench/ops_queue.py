"""Operators' queue benchmark: statements per ``opsQueue`` page and its p50/p95, quiet and
under a concurrent load, against a hand-written floor, over ``--rooms`` rooms (10,000).

Method. A fresh database (a temporary SQLite file; with ``--database-url`` a throwaway
PostgreSQL database beside that URL's) gets its rooms directly as rows (Core inserts, not
through the server): 100 hosts and 2,000 visitors (``tests/support/ops_rows.py``), a flag of a
random level (low, medium, high, firewall) in one room of six and a second in one of forty,
two finished runs a room and a failed one in one room of ten, a Guard verdict a room (94%
healthy, 4% repaired, 2% unrepaired), a written offer in three rooms of ten with a payment
each (5% disputed, 3% pending past a day), a notification a room (60 escalated waits), 50
webhooks (5 failing past a day, 2 disabled), and the operators' own rows: 30% of the flags
resolved, one item in ten of the rest acknowledged and assigned. About 3,300 items stay open
(552 are resolved).

The app is served by uvicorn on a free loopback port, with no background workers, and an
operator signs up over HTTP. For each page size (``--sizes``, 20 and 50) the operator walks the
queue page by page to the deepest page of ``--depths`` (1, 10, 50), counting the statements of
every page on the engine; then pages 1, 10 and 50 are each requested ``--repeat`` times (after
one warm-up), quiet and then while a second process (this script with ``--load``) keeps
``--load-clients`` (4) signed-in visitors posting messages into their rooms over HTTP,
``--load-rate`` (10) posts a second between them, or as fast as the server answers with
``--load-rate 0``. The floor, in the same run: the same page (the same sources, joins, order,
keyset and limit) as one hand-written SQL statement sent straight through the driver (asyncpg
or aiosqlite) on its own connection; its rows are checked against the page's. Prints the
statements per page (and fails if they differ across depths and sizes), p50/p95 in ms, and
the ratio to the floor. Nothing asserts on timing."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import re
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import httpx
import uvicorn
from _client import (
    UNTHROTTLED,
    StatementLog,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    ms,
    open_room,
    other_test_runs,
    percentile,
    post_body,
    prepare_run,
    queries_only,
    remove_tree,
    sign_up,
    start_uvicorn,
)
from sqlalchemy import insert, select, text, update
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.logging import configure as configure_logging
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import (
    Account,
    AgentRun,
    Flag,
    GuardVerdict,
    Notification,
    Offer,
    OpsQueueItem,
    Participant,
    Payment,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from tests.support.ops_rows import RoomSpec, add_accounts, add_rooms

QUEUE = """
query($first: Int!, $after: String) {
  opsQueue(first: $first, after: $after) {
    nodes { id kind level summary roomId roomTitle link raisedAt ageSeconds acknowledgedAt
            assignee resolvedAt note }
    pageInfo { hasNextPage endCursor }
  }
}
"""
LEVELS = ("low", "medium", "high", "firewall")
STATUSES = ("APPROVED", "ACCEPTED", "PAYMENT_HELD", "COMPLETED", "REJECTED")
BATCH = 1000
STALE_AFTER = timedelta(days=1)
"""The service's own: a pending payment or a failing webhook this old is an item."""

# The page as one hand-written statement, chosen before its rows are joined to their rooms as
# the repository does; ``:name`` placeholders are rendered per driver.
FLOOR = """
WITH items AS (
  SELECT 'flag' AS kind, f.id AS source_id, f.room_id AS room_id,
         CASE f.level WHEN 'high' THEN 'high' WHEN 'low' THEN 'low' ELSE 'medium' END AS level,
         CASE f.level WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END AS rank,
         f.created_at AS raised_at, f.evidence AS summary
  FROM flags f
  UNION ALL
  SELECT 'escalation', n.id, n.room_id, 'high', 0, COALESCE(n.waiting_since, n.created_at),
         'Escalated: ' || n.title
  FROM notifications n WHERE n.wait_state = 'escalated'
  UNION ALL
  SELECT 'verdict', v.id, v.room_id,
         CASE WHEN v.verdict = 'unrepaired' THEN 'high' ELSE 'low' END,
         CASE WHEN v.verdict = 'unrepaired' THEN 0 ELSE 2 END, v.created_at,
         'The Guard''s audit: ' || v.verdict
  FROM guard_verdicts v WHERE v.verdict <> 'healthy'
  UNION ALL
  SELECT 'failed_run', r.id, r.room_id, 'medium', 1, COALESCE(r.finished_at, r.created_at),
         r.agent || ' failed: ' || COALESCE(r.error, '')
  FROM agent_runs r WHERE r.status = 'failed'
  UNION ALL
  SELECT 'payment', p.id, o.room_id,
         CASE WHEN p.status = 'disputed' THEN 'high' ELSE 'medium' END,
         CASE WHEN p.status = 'disputed' THEN 0 ELSE 1 END,
         CASE WHEN p.status = 'disputed' THEN p.updated_at ELSE p.created_at END,
         'Payment ' || p.status || ': ' || CAST(p.total AS TEXT) || ' ' || p.currency
  FROM payments p JOIN offers o ON o.id = p.offer_id
  WHERE p.status = 'disputed' OR (p.status = 'pending' AND p.created_at <= :stale)
  UNION ALL
  SELECT 'webhook', w.id, NULL, 'medium', 1, COALESCE(w.disabled_at, d.since),
         'Webhook failing: ' || w.url
  FROM webhooks w LEFT JOIN (
    SELECT webhook_id, MIN(first_attempt_at) AS since FROM webhook_deliveries
    WHERE status <> 'delivered' AND first_attempt_at IS NOT NULL GROUP BY webhook_id
  ) d ON d.webhook_id = w.id
  WHERE w.status = 'disabled'
     OR (d.since <= :stale AND (w.last_success_at IS NULL OR w.last_success_at < d.since))
), page AS (
  SELECT i.kind, i.source_id, i.room_id, i.level, i.rank, i.raised_at, i.summary,
         q.acknowledged_at, q.assigned_to, q.note
  FROM items i
  LEFT JOIN ops_queue_items q ON q.kind = i.kind AND q.source_id = i.source_id
  WHERE q.resolved_at IS NULL {keyset}
  ORDER BY i.rank, i.raised_at, i.kind, i.source_id
  LIMIT :limit
)
SELECT p.*, r.title, a.handle
FROM page p
LEFT JOIN rooms r ON r.id = p.room_id
LEFT JOIN accounts a ON a.id = p.assigned_to
ORDER BY p.rank, p.raised_at, p.kind, p.source_id
"""
KEYSET = """AND (i.rank > :rank
  OR (i.rank = :rank AND i.raised_at > :at)
  OR (i.rank = :rank AND i.raised_at = :at AND i.kind > :kind)
  OR (i.rank = :rank AND i.raised_at = :at AND i.kind = :kind AND i.source_id > :source))"""
PG_TYPES = {
    "stale": "timestamptz",
    "limit": "int",
    "rank": "int",
    "at": "timestamptz",
    "kind": "text",
    "source": "uuid",
}


def render(template: str, dialect: str, values: dict[str, Any]) -> tuple[str, list[Any]]:
    """The statement with ``$n`` (PostgreSQL, typed) or ``?`` (SQLite) and its arguments."""
    names: list[str] = []
    args: list[Any] = []

    def placeholder(found: re.Match[str]) -> str:
        name = found.group(1)
        if dialect == "sqlite":
            args.append(values[name])
            return "?"
        if name not in names:
            names.append(name)
            args.append(values[name])
        return f"${names.index(name) + 1}::{PG_TYPES[name]}"

    return re.sub(r"(?<![:\w]):([a-z]+)\b", placeholder, template), args


# --- rows ------------------------------------------------------------------------------------


async def _insert(engine: AsyncEngine, table: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH):
        async with engine.begin() as conn:
            await conn.execute(insert(table), rows[start : start + BATCH])


async def populate(engine: AsyncEngine, rooms: int, now: datetime, seed: int) -> dict[str, int]:
    """The rooms and every queue source, as rows; returns how many of each were written."""
    rng = random.Random(seed)
    hosts = [(f"host{n:03d}", f"Host {n:03d}", None) for n in range(100)]
    visitors = [(f"v{n:04d}", f"Visitor {n:04d}", f"v{n:04d}@b.example") for n in range(2000)]
    ids = await add_accounts(
        engine, [*hosts, *visitors, ("opsmate", "Ops Mate", None)], now - timedelta(days=90)
    )
    async with engine.begin() as conn:
        await conn.execute(
            update(Account).where(Account.handle == "opsmate").values(is_operator=True)
        )
    mate = ids["opsmate"]
    host_ids = [ids[h] for h, _, _ in hosts]
    visitor_ids = [ids[v] for v, _, _ in visitors]
    specs = []
    for n in range(rooms):
        offer = rng.random() < 0.3
        flags: tuple[str, ...] = (LEVELS[rng.randrange(4)],) if n % 6 == 0 else ()
        if n % 40 == 1:
            flags += (LEVELS[rng.randrange(4)],)
        specs.append(
            RoomSpec(
                host=host_ids[n % len(host_ids)],
                visitor=None if n % 10 == 0 else visitor_ids[rng.randrange(len(visitor_ids))],
                last_activity_at=now - timedelta(minutes=n * 7 + rng.randrange(5)),
                flags=flags,
                spend_usd=(Decimal(rng.randrange(1, 4000)) / 100000,),
                offer_status=STATUSES[rng.randrange(len(STATUSES))] if offer else None,
                brand_approved=rng.random() < 0.5,
                fee=f"{rng.randrange(200, 20000)}.00" if offer else None,
            )
        )
    await add_rooms(engine, specs)
    async with engine.connect() as conn:
        panes = (
            await conn.execute(
                select(Participant.room_id, Participant.id).where(Participant.key == "visitor")
            )
        ).all()
        offers = (await conn.execute(select(Offer.id, Offer.created_at))).all()
        flag_rows = (await conn.execute(select(Flag.id, Flag.room_id, Flag.created_at))).all()
    hosts_of = {spec.id: spec.host for spec in specs}
    runs: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    for n, (room_id, pane_id) in enumerate(panes):
        at = now - timedelta(minutes=rng.randrange(60 * 24 * 30))
        failed = n % 10 == 0
        for k in range(3 if failed else 2):
            status = "failed" if k == 2 else "done"
            runs.append(
                {
                    "id": uuid.uuid4(),
                    "room_id": room_id,
                    "participant_id": pane_id,
                    "agent": "persona",
                    "status": status,
                    "attempts": 3 if status == "failed" else 1,
                    "error": "model unavailable" if status == "failed" else None,
                    "not_before": at,
                    "created_at": at + timedelta(seconds=k),
                    "finished_at": at + timedelta(seconds=k + 1),
                }
            )
        draw = rng.random()
        verdict = "unrepaired" if draw < 0.02 else "repaired" if draw < 0.06 else "healthy"
        verdicts.append(
            {
                "id": uuid.uuid4(),
                "room_id": room_id,
                "run_id": runs[-1]["id"],
                "verdict": verdict,
                "findings": [],
                "edits": [],
                "created_at": at + timedelta(seconds=5),
            }
        )
        escalated = n % (max(1, len(panes) // 60)) == 0
        notes.append(
            {
                "id": uuid.uuid4(),
                "account_id": hosts_of[room_id],
                "room_id": room_id,
                "kind": "decision",
                "audience": "host",
                "source": f"bench:{room_id}",
                "title": "Your agent asks: may we do 3 reels?",
                "body": "The brand asked for three reels.",
                "link": f"/r/{room_id}",
                "reason": "You are the host.",
                "status": "kept",
                "next_attempt_at": at,
                "wait_state": "escalated" if escalated else "settled",
                "waiting_since": at,
                "created_at": at,
            }
        )
    payments = []
    for offer_id, created in offers:
        draw = rng.random()
        status = "disputed" if draw < 0.05 else "pending" if draw < 0.08 else "held"
        at = created - (STALE_AFTER * 2 if status == "pending" else timedelta(0))
        payments.append(
            {
                "id": uuid.uuid4(),
                "offer_id": offer_id,
                "idempotency_key": uuid.uuid4().hex,
                "method": "test_card_ok",
                "provider": "test",
                "status": status,
                "currency": "USD",
                "due": Decimal("500"),
                "platform_fee": Decimal("100"),
                "total": Decimal("600"),
                "offer_version": 1,
                "created_at": at,
                "updated_at": at + timedelta(hours=1),
            }
        )
    hooks, events, deliveries = [], [], []
    for n in range(50):
        hook_id, event_id = uuid.uuid4(), uuid.uuid4()
        failing, disabled = n < 5, 5 <= n < 7
        since = now - timedelta(days=2 if failing else 0, hours=n)
        hooks.append(
            {
                "id": hook_id,
                "account_id": host_ids[n],
                "url": f"https://partner{n}.example/hook",
                "events": ["offer.created"],
                "secret": "whsec_bench",
                "status": "disabled" if disabled else "active",
                "disabled_at": since if disabled else None,
                "last_success_at": None if failing or disabled else since,
                "created_at": since - timedelta(days=10),
            }
        )
        events.append(
            {"id": event_id, "type": "offer.created", "source": f"bench-{n}", "payload": {}}
        )
        deliveries.append(
            {
                "id": uuid.uuid4(),
                "webhook_id": hook_id,
                "event_id": event_id,
                "status": "pending" if failing or disabled else "delivered",
                "attempts": 6 if failing else 1,
                "next_attempt_at": since,
                "created_at": since,
                "first_attempt_at": since,
            }
        )
    # The operators' own rows: 30% of the flags resolved; one in ten of the rest acknowledged.
    for n, (flag_id, room_id, created) in enumerate(flag_rows):
        resolved = rng.random() < 0.3
        if resolved or n % 10 == 0:
            items.append(_item("flag", flag_id, room_id, created, now, mate, resolved=resolved))
    for n, run in enumerate(r for r in runs if r["status"] == "failed"):
        if n % 10 == 0:
            items.append(
                _item("failed_run", run["id"], run["room_id"], run["finished_at"], now, mate)
            )
    await _insert(engine, AgentRun.__table__, runs)
    await _insert(engine, GuardVerdict.__table__, verdicts)
    await _insert(engine, Notification.__table__, notes)
    await _insert(engine, Payment.__table__, payments)
    await _insert(engine, Webhook.__table__, hooks)
    await _insert(engine, WebhookEvent.__table__, events)
    await _insert(engine, WebhookDelivery.__table__, deliveries)
    await _insert(engine, OpsQueueItem.__table__, items)
    return {
        "flags": len(flag_rows),
        "runs": len(runs),
        "failed runs": sum(r["status"] == "failed" for r in runs),
        "verdicts not healthy": sum(v["verdict"] != "healthy" for v in verdicts),
        "escalations": sum(n["wait_state"] == "escalated" for n in notes),
        "payments": len(payments),
        "payment items": sum(p["status"] in ("disputed", "pending") for p in payments),
        "webhook items": 7,
        "resolved": sum(i["resolved_at"] is not None for i in items),
    }


def _item(
    kind: str,
    source_id: uuid.UUID,
    room_id: uuid.UUID,
    raised_at: datetime,
    now: datetime,
    operator: uuid.UUID,
    *,
    resolved: bool = False,
) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "kind": kind,
        "source_id": source_id,
        "room_id": room_id,
        "level": "medium",
        "summary": "as first acted on",
        "raised_at": raised_at,
        "acknowledged_at": now,
        "acknowledged_by": operator,
        "assigned_to": operator,
        "resolved_at": now if resolved else None,
        "resolved_by": operator if resolved else None,
        "note": "handled" if resolved else None,
        "created_at": now,
        "updated_at": now,
    }


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Walk:
    """One page size's walk: each page's statements, cursors and item ids."""

    first: int
    statements: list[int] = field(default_factory=list)
    sample: list[str] = field(default_factory=list)
    """The statements of the deepest page."""
    cursors: list[str | None] = field(default_factory=list)
    """The ``after`` that reads page n+1 (None for the first)."""
    ids: list[list[str]] = field(default_factory=list)


async def walk(
    http: httpx.AsyncClient, log: StatementLog, headers: dict[str, str], first: int, pages: int
) -> Walk:
    found = Walk(first)
    after: str | None = None
    for _ in range(pages):
        with log.capture() as seen:
            page = (await gql(http, QUEUE, {"first": first, "after": after}, headers))["opsQueue"]
        found.statements.append(len(queries_only(seen)))
        found.sample = queries_only(seen)
        found.cursors.append(after)
        found.ids.append([node["id"] for node in page["nodes"]])
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    return found


async def timed_pages(
    http: httpx.AsyncClient, headers: dict[str, str], first: int, after: str | None, repeat: int
) -> list[float]:
    seconds = []
    for n in range(repeat + 1):
        started = time.monotonic()
        await gql(http, QUEUE, {"first": first, "after": after}, headers)
        if n:
            seconds.append(time.monotonic() - started)
    return sorted(seconds)


class Floor:
    """The page as one hand-written statement on a driver connection of its own."""

    def __init__(self, url: str, sqlite_path: Path | None, now: datetime) -> None:
        self.url = url
        self.sqlite_path = sqlite_path
        self.dialect = "sqlite" if sqlite_path is not None else "postgresql"
        stale = now - STALE_AFTER
        self.stale: Any = (
            stale.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
            if self.dialect == "sqlite"
            else stale
        )
        self.pg: Any = None
        self.lite: aiosqlite.Connection | None = None

    async def __aenter__(self) -> Floor:
        if self.sqlite_path is not None:
            self.lite = await aiosqlite.connect(self.sqlite_path)
        else:
            dsn = make_url(self.url).set(drivername="postgresql")
            self.pg = await asyncpg.connect(dsn.render_as_string(hide_password=False))
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self.lite is not None:
            await self.lite.close()
        if self.pg is not None:
            await self.pg.close()

    def statement(self, first: int, after: tuple[Any, ...] | None) -> tuple[str, list[Any]]:
        values: dict[str, Any] = {"stale": self.stale, "limit": first + 1}
        keyset = ""
        if after is not None:
            keyset = KEYSET
            values |= dict(zip(("rank", "at", "kind", "source"), after, strict=True))
        return render(FLOOR.format(keyset=keyset), self.dialect, values)

    async def page(self, first: int, after: tuple[Any, ...] | None) -> list[tuple[Any, ...]]:
        statement, args = self.statement(first, after)
        if self.lite is not None:
            async with self.lite.execute(statement, args) as cursor:
                return [tuple(r) for r in await cursor.fetchall()]
        return [tuple(r) for r in await self.pg.fetch(statement, *args)]

    async def explain(self, first: int, after: tuple[Any, ...] | None) -> list[str]:
        """PostgreSQL's plan of the page, run."""
        statement, args = self.statement(first, after)
        return [str(r[0]) for r in await self.pg.fetch("EXPLAIN ANALYZE " + statement, *args)]

    def item_id(self, row: tuple[Any, ...]) -> str:
        source = row[1]
        return f"{row[0]}:{uuid.UUID(hex=source) if isinstance(source, str) else source}"

    async def afters(self, first: int, pages: int) -> list[tuple[Any, ...] | None]:
        """The keyset that reads page n+1 (None for the first), walked by the floor itself."""
        found: list[tuple[Any, ...] | None] = [None]
        for _ in range(pages - 1):
            rows = (await self.page(first, found[-1]))[:first]
            if len(rows) < first:
                break
            last = rows[-1]
            found.append((last[4], last[5], last[0], last[1]))
        return found

    async def timed(self, first: int, after: tuple[Any, ...] | None, repeat: int) -> list[float]:
        seconds = []
        for n in range(repeat + 1):
            started = time.monotonic()
            await self.page(first, after)
            if n:
                seconds.append(time.monotonic() - started)
        return sorted(seconds)


@dataclass
class Row:
    first: int
    depth: int
    returned: int
    statements: int
    quiet: list[float]
    loaded: list[float] = field(default_factory=list)
    floor_quiet: list[float] = field(default_factory=list)
    floor_loaded: list[float] = field(default_factory=list)


# --- the load: a second process --------------------------------------------------------------


async def start_load(base_url: str, clients: int, rate: float) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--load",
        base_url,
        "--load-clients",
        str(clients),
        "--load-rate",
        str(rate),
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 120)
    if line.strip() != b"ready":
        process.kill()
        raise RuntimeError(f"the load process did not start: {line!r}")
    return process


async def stop_load(process: asyncio.subprocess.Process) -> dict[str, Any]:
    process.send_signal(signal.SIGTERM)
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    return dict(json.loads(out.decode().strip().splitlines()[-1]))


async def load(base_url: str, clients: int, rate: float) -> None:
    """Signed-in visitors posting into their rooms with one host, ``rate`` posts a second
    between them (0: as fast as answered), until SIGTERM; then prints the posts per second."""
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    tag = uuid.uuid4().hex[:6]
    async with http_client(base_url) as http:
        host = f"lh{tag}"
        await sign_up(http, host, "Load Host")
        people = []
        for n in range(clients):
            headers = await sign_up(http, f"lv{tag}{n}", f"Load Visitor {n}")
            room_id, _ = await open_room(http, host, headers)
            people.append((room_id, headers))
        posts = 0
        errors = 0
        first_error = ""

        async def poster(room_id: str, headers: dict[str, str]) -> None:
            nonlocal posts, errors, first_error
            interval = clients / rate if rate > 0 else 0.0
            due = time.monotonic()
            while not stop.is_set():
                due += interval
                if interval:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), max(0.0, due - time.monotonic()))
                    if stop.is_set():
                        break
                response = await http.post(
                    "/graphql",
                    content=post_body(room_id, f"load message {posts}"),
                    headers={"Content-Type": "application/json", **headers},
                )
                if response.status_code == 200 and not response.json().get("errors"):
                    posts += 1
                else:
                    errors += 1
                    first_error = first_error or response.text[:300]

        print("ready", flush=True)
        started = time.monotonic()
        tasks = [asyncio.create_task(poster(r, h)) for r, h in people]
        await stop.wait()
        await asyncio.gather(*tasks, return_exceptions=True)
        took = time.monotonic() - started
    print(
        json.dumps(
            {"posts_per_second": posts / took, "errors": errors, "first_error": first_error}
        ),
        flush=True,
    )


# --- the run ---------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-queue-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    server: uvicorn.Server | None = None
    task: asyncio.Task[None] | None = None
    result: dict[str, Any] = {"machine": machine_summary()}
    sqlite_path: Path | None = None
    try:
        if args.database_url:
            database_url = await create_pg_database(args.database_url, "dealroom_bench_queue")
            url = database_url
        else:
            sqlite_path = folder / "bench.sqlite3"
            url = f"sqlite+aiosqlite:///{sqlite_path}"
        engine = create_engine(url)
        await upgrade(engine)
        now = datetime.now(UTC)
        started = time.monotonic()
        result["rows"] = await populate(engine, args.rooms, now, args.seed)
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
        result["setup_seconds"] = time.monotonic() - started
        settings = Settings(
            database_url=url,
            redis_url=None,
            data_dir=folder,
            debug=False,
            # No background loops: their polls would land in the pages' statement counts.
            workers=0,
            webhook_workers=0,
            notify_workers=0,
        ).model_copy(update=UNTHROTTLED | {"posts_per_minute": 10**9})
        app = create_app(settings, engine=engine)
        server, task, port = await start_uvicorn(app)
        base_url = f"http://127.0.0.1:{port}"
        result["other_pytest_at_start"] = other_test_runs()
        deepest = max(args.depths)
        rows: list[Row] = []
        async with http_client(base_url) as http, Floor(url, sqlite_path, now) as floor:
            operator = await sign_up(http, "benchops", "Bench Operator")
            async with engine.begin() as conn:
                await conn.execute(
                    update(Account).where(Account.handle == "benchops").values(is_operator=True)
                )
            walks: dict[int, Walk] = {}
            afters: dict[int, list[tuple[Any, ...] | None]] = {}
            with StatementLog(engine) as log:
                for first in args.sizes:
                    walks[first] = await walk(http, log, operator, first, deepest)
            for first in args.sizes:
                afters[first] = await floor.afters(first, deepest)
                got = walks[first]
                if len(got.cursors) < deepest or len(afters[first]) < deepest:
                    raise RuntimeError(f"fewer than {deepest} pages of {first}: add --rooms")
                for depth in args.depths:
                    mine = [
                        floor.item_id(r) for r in await floor.page(first, afters[first][depth - 1])
                    ]
                    if mine[:first] != got.ids[depth - 1]:
                        raise RuntimeError(f"the floor's page {depth} of {first} differs")
                    rows.append(
                        Row(
                            first,
                            depth,
                            len(got.ids[depth - 1]),
                            got.statements[depth - 1],
                            await timed_pages(
                                http, operator, first, got.cursors[depth - 1], args.repeat
                            ),
                            floor_quiet=await floor.timed(
                                first, afters[first][depth - 1], args.repeat
                            ),
                        )
                    )
            counts = {n for w in walks.values() for n in w.statements}
            result["statements"] = sorted(counts)
            result["sample"] = walks[max(args.sizes)].sample
            result["pages_walked"] = sum(len(w.statements) for w in walks.values())
            if len(counts) != 1:
                raise RuntimeError(f"statements per page differ: {sorted(counts)}")
            process = await start_load(base_url, args.load_clients, args.load_rate)
            try:
                await asyncio.sleep(1.0)
                for row in rows:
                    after = walks[row.first].cursors[row.depth - 1]
                    row.loaded = await timed_pages(http, operator, row.first, after, args.repeat)
                    row.floor_loaded = await floor.timed(
                        row.first, afters[row.first][row.depth - 1], args.repeat
                    )
            finally:
                result["load"] = await stop_load(process)
            if args.explain and floor.pg is not None:
                biggest = max(args.sizes)
                result["plan"] = await floor.explain(biggest, afters[biggest][-1])
        result["rows_measured"] = [vars(r) for r in rows]
        result["other_pytest_at_end"] = other_test_runs()
    finally:
        if server is not None and task is not None:
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 30)
        if engine is not None:
            await engine.dispose()
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.database_url, database_url)
        remove_tree(folder)
    return result


def report(result: dict[str, Any], args: argparse.Namespace) -> None:
    print("\n".join(result["machine"]))
    backend = "postgresql" if args.database_url else "sqlite"
    print(
        f"backend {backend}; command: {' '.join(sys.argv)}; {args.rooms} rooms inserted in "
        f"{result['setup_seconds']:.1f}s; pytest processes at start/end: "
        f"{len(result['other_pytest_at_start'])}/{len(result['other_pytest_at_end'])}"
    )
    print("rows: " + ", ".join(f"{k} {v}" for k, v in result["rows"].items()))
    load = result["load"]
    errors = f"{load['errors']} errors" + (
        f": {load['first_error'][:200]}" if load["errors"] else ""
    )
    print(
        f"load: {args.load_clients} visitors posting from a second process "
        f"({args.load_rate:g}/s asked; 0 is as fast as answered), "
        f"{load['posts_per_second']:.0f} posts/s ({errors})"
    )
    print(
        f"statements per page (without BEGIN/COMMIT), all {result['pages_walked']} pages walked: "
        f"{result['statements']}"
    )
    for statement in result["sample"]:
        print(f"  {statement[:150]}")
    print(
        f"\n{'first':>5} {'page':>5} {'rows':>5} {'stmts':>5} | {'quiet p50':>9} {'p95':>6} "
        f"{'floor':>6} {'ratio':>6} | {'load p50':>8} {'p95':>6} {'floor':>6} {'ratio':>6}"
    )
    for r in result["rows_measured"]:
        q50, l50 = percentile(r["quiet"], 50), percentile(r["loaded"], 50)
        f50, fl50 = percentile(r["floor_quiet"], 50), percentile(r["floor_loaded"], 50)
        print(
            f"{r['first']:>5} {r['depth']:>5} {r['returned']:>5} {r['statements']:>5} | "
            f"{ms(q50):>9} {ms(percentile(r['quiet'], 95)):>6} {ms(f50):>6} {q50 / f50:>5.1f}x | "
            f"{ms(l50):>8} {ms(percentile(r['loaded'], 95)):>6} {ms(fl50):>6} {l50 / fl50:>5.1f}x"
        )
    if result.get("plan"):
        print("\nPostgreSQL's plan of the floor, deepest page of 50:")
        print("\n".join(f"  {line}" for line in result["plan"]))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--database-url", help="a PostgreSQL URL to make a throwaway database beside"
    )
    parser.add_argument("--rooms", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--depths", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--load-clients", type=int, default=4)
    parser.add_argument(
        "--load-rate", type=float, default=10.0, help="posts a second (0: as fast as answered)"
    )
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--explain", action="store_true", help="print PostgreSQL's plan")
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--load", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rooms < 1 or args.repeat < 1 or any(not 1 <= n <= 100 for n in args.sizes):
        parser.error("need --rooms >= 1, --repeat >= 1 and sizes in 1..100")
    if any(d < 1 for d in args.depths) or args.load_clients < 1:
        parser.error("need depths >= 1 and --load-clients >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    # The server's info lines (one per ops read) would bury the figures.
    configure_logging(level=logging.WARNING)
    if args.load:
        asyncio.run(load(args.load, args.load_clients, args.load_rate))
        return
    prepare_run(args.wait_idle)
    result = asyncio.run(run(args))
    report(result, args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
