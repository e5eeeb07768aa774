"""Operators' search benchmark: statements per page and p50 of ``opsSearchRooms``,
``opsSearchOffers`` and ``opsSearchAccounts`` over ``--rooms`` rooms (10,000 by default).

Builds the app in-process on a fresh database (``--backend sqlite``: a temporary SQLite file;
``--backend postgres``: a throwaway PostgreSQL database) and inserts the rooms directly with
the test row factories (``tests/support/ops_rows.py``), not through the server: 100 hosts,
2,000 visitors (one room in ten a guest's), one flag in twenty rooms, one to three model calls
per room and a written offer in three rooms of ten. An operator signs up over HTTP and each
search runs ``--repeat`` times per page size (the first request warms caches and is not
counted) while a ``before_cursor_execute`` listener counts the statements. A page after a
cursor is measured too. Every read also writes its audit record (one INSERT and its COMMIT),
counted with the rest. It asserts nothing."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import uvicorn
from _client import (
    DEFAULT_PG_URL,
    UNTHROTTLED,
    StatementLog,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    ms,
    other_test_runs,
    percentile,
    prepare_run,
    queries_only,
    remove_tree,
    sign_up,
    start_uvicorn,
)
from sqlalchemy import text, update
from sqlalchemy.ext.asyncio import AsyncEngine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Account
from tests.support.ops_rows import RoomSpec, add_accounts, add_rooms

ROOMS = """
query($search: OpsRoomSearch, $first: Int!, $after: String) {
  opsSearchRooms(search: $search, first: $first, after: $after) {
    nodes { id hostHandle stage flagCount totalSpend { priceUsd calls } } hasNextPage endCursor
  }
}
"""
OFFERS = """
query($search: OpsOfferSearch, $first: Int!, $after: String) {
  opsSearchOffers(search: $search, first: $first, after: $after) {
    nodes { id roomId stage fee currency } hasNextPage endCursor
  }
}
"""
ACCOUNTS = """
query($query: String!, $first: Int!, $after: String) {
  opsSearchAccounts(query: $query, first: $first, after: $after) {
    nodes { handle email } hasNextPage endCursor
  }
}
"""
STATUSES = ("APPROVED", "ACCEPTED", "PAYMENT_HELD", "COMPLETED", "REJECTED")
LEVELS = ("low", "medium", "high", "firewall")


def searches(now: datetime) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(label, document, root field, variables without the page)."""
    window = {
        "activeFrom": (now - timedelta(days=3)).isoformat(),
        "activeBefore": (now - timedelta(days=2)).isoformat(),
    }
    return [
        ("rooms, no filter", ROOMS, "opsSearchRooms", {"search": {}}),
        ("rooms, host", ROOMS, "opsSearchRooms", {"search": {"hostHandle": "host007"}}),
        (
            "rooms, visitor email",
            ROOMS,
            "opsSearchRooms",
            {"search": {"visitor": "v0042@b.example"}},
        ),
        ("rooms, visitor name", ROOMS, "opsSearchRooms", {"search": {"visitor": "visitor 0042"}}),
        ("rooms, stage", ROOMS, "opsSearchRooms", {"search": {"stage": "COMPLETED"}}),
        ("rooms, flag high", ROOMS, "opsSearchRooms", {"search": {"flagLevel": "high"}}),
        ("rooms, spend >= 0.05", ROOMS, "opsSearchRooms", {"search": {"minSpendUsd": "0.05"}}),
        ("rooms, activity window", ROOMS, "opsSearchRooms", {"search": window}),
        ("offers, stage", OFFERS, "opsSearchOffers", {"search": {"stages": ["COMPLETED"]}}),
        (
            "offers, fee range",
            OFFERS,
            "opsSearchOffers",
            {"search": {"minFee": "1000", "maxFee": "2000"}},
        ),
        ("accounts, handle prefix", ACCOUNTS, "opsSearchAccounts", {"query": "v01"}),
        ("accounts, email", ACCOUNTS, "opsSearchAccounts", {"query": "v0042@b.example"}),
    ]


async def populate(engine: AsyncEngine, rooms: int, now: datetime, seed: int) -> None:
    rng = random.Random(seed)
    hosts: list[tuple[str, str, str | None]] = [
        (f"host{n:03d}", f"Host {n:03d}", None) for n in range(100)
    ]
    visitors: list[tuple[str, str, str | None]] = [
        (f"v{n:04d}", f"Visitor {n:04d}", f"v{n:04d}@b.example") for n in range(2000)
    ]
    ids = await add_accounts(engine, hosts + visitors, now - timedelta(days=90))
    host_ids = [ids[h] for h, _, _ in hosts]
    visitor_ids = [ids[v] for v, _, _ in visitors]
    specs = []
    for n in range(rooms):
        offer = rng.random() < 0.3
        specs.append(
            RoomSpec(
                host=host_ids[n % len(host_ids)],
                visitor=None if n % 10 == 0 else visitor_ids[rng.randrange(len(visitor_ids))],
                last_activity_at=now - timedelta(minutes=n * 7 + rng.randrange(5)),
                flags=(LEVELS[rng.randrange(len(LEVELS))],) if n % 20 == 0 else (),
                spend_usd=tuple(
                    Decimal(rng.randrange(1, 4000)) / 100000 for _ in range(rng.randrange(1, 4))
                ),
                offer_status=STATUSES[rng.randrange(len(STATUSES))] if offer else None,
                brand_approved=rng.random() < 0.5,
                fee=f"{rng.randrange(200, 20000)}.00" if offer else None,
            )
        )
    await add_rooms(engine, specs)


@dataclass
class Figures:
    label: str
    first: int
    after_cursor: bool
    returned: int = 0
    queries: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    most: list[str] = field(default_factory=list)
    """The statements of the counted request that sent the most."""
    search_statement: tuple[str, Any] | None = None
    """The page's own SELECT (the longest one), as sent, to replay alone."""
    db_seconds: list[float] = field(default_factory=list)
    """That statement replayed alone on one connection: the database's share."""
    plan: str = ""


async def measure(
    http: Any,
    log: StatementLog,
    headers: dict[str, str],
    search: tuple[str, str, str, dict[str, Any]],
    first: int,
    repeat: int,
    *,
    paged: bool,
) -> Figures:
    label, document, root, variables = search
    figures = Figures(label, first, paged)
    after = None
    if paged:
        page = (await gql(http, document, variables | {"first": first}, headers))[root]
        after = page["endCursor"]
    for n in range(repeat + 1):
        with log.capture() as seen:
            started = time.monotonic()
            data = await gql(http, document, variables | {"first": first, "after": after}, headers)
            took = time.monotonic() - started
        if n == 0:
            figures.returned = len(data[root]["nodes"])
            selects = [(q, p) for q, p in log.sent if q.lstrip().upper().startswith("SELECT")]
            figures.search_statement = max(selects, key=lambda qp: len(qp[0]), default=None)
            continue
        figures.queries.append(len(queries_only(seen)))
        if len(queries_only(seen)) > len(figures.most):
            figures.most = queries_only(seen)
        figures.seconds.append(took)
    return figures


async def replay(engine: AsyncEngine, figures: Figures, repeat: int) -> None:
    """Time the page's own statement alone, and read which indexes PostgreSQL's plan uses."""
    if figures.search_statement is None:
        return
    statement, parameters = figures.search_statement
    if isinstance(parameters, list):
        parameters = tuple(parameters)
    async with engine.connect() as conn:
        for n in range(repeat + 1):
            started = time.monotonic()
            await conn.exec_driver_sql(statement, parameters)
            if n:
                figures.db_seconds.append(time.monotonic() - started)
        if engine.dialect.name == "postgresql":
            found = await conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + statement, parameters)
            figures.plan = plan_summary(found.scalar())
        await conn.rollback()


def plan_summary(plan: Any) -> str:
    """The indexes a plan reads and the tables it scans whole."""
    indexes: set[str] = set()
    scans: set[str] = set()

    def walk(node: dict[str, Any]) -> None:
        if "Index Name" in node:
            indexes.add(node["Index Name"])
        if node.get("Node Type") == "Seq Scan":
            scans.add(node.get("Relation Name", "?"))
        for child in node.get("Plans", []):
            walk(child)

    document = json.loads(plan) if isinstance(plan, str) else plan
    walk(document[0]["Plan"])
    seq = f"; whole: {', '.join(sorted(scans))}" if scans else ""
    return f"{', '.join(sorted(indexes)) or 'no index'}{seq}"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-ops-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    server: uvicorn.Server | None = None
    task: asyncio.Task[None] | None = None
    result: dict[str, Any] = {"args": vars(args), "machine": machine_summary()}
    try:
        if args.backend == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_ops")
            url = database_url
        else:
            url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
        engine = create_engine(url)
        await upgrade(engine)
        now = datetime.now(UTC)
        started = time.monotonic()
        await populate(engine, args.rooms, now, args.seed)
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
        result["setup_seconds"] = time.monotonic() - started
        settings = Settings(
            database_url=url,
            redis_url=None,
            data_dir=folder,
            debug=False,
            # No background loops: their polls would land in the requests' statement counts.
            workers=0,
            webhook_workers=0,
            notify_workers=0,
        ).model_copy(update=UNTHROTTLED)
        app = create_app(settings, engine=engine)
        server, task, port = await start_uvicorn(app)
        result["other_pytest_at_start"] = other_test_runs()
        async with http_client(f"http://127.0.0.1:{port}") as http:
            operator = await sign_up(http, "benchops", "Bench Operator")
            async with engine.begin() as conn:
                await conn.execute(
                    update(Account).where(Account.handle == "benchops").values(is_operator=True)
                )
            figures = []
            with StatementLog(engine) as log:
                for search in searches(now):
                    for first in args.sizes:
                        figures.append(
                            await measure(
                                http, log, operator, search, first, args.repeat, paged=False
                            )
                        )
                    figures.append(
                        await measure(
                            http, log, operator, search, args.sizes[0], args.repeat, paged=True
                        )
                    )
            for f in figures:
                await replay(engine, f, args.repeat)
        result["figures"] = [vars(f) | {"search_statement": None} for f in figures]
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
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)
    return result


def report(result: dict[str, Any], args: argparse.Namespace) -> None:
    print("\n".join(result["machine"]))
    print(
        f"backend {args.backend}; command: {' '.join(sys.argv)}; {args.rooms} rooms inserted in "
        f"{result['setup_seconds']:.1f}s; pytest processes at start/end: "
        f"{result['other_pytest_at_start']}/{result['other_pytest_at_end']}"
    )
    print(
        f"\n{'search':<26} {'page':>10} {'rows':>5} {'statements':>11} {'p50 ms':>7} "
        f"{'max ms':>7} {'db p50':>7}"
    )
    for f in result["figures"]:
        counts, seconds = f["queries"], sorted(f["seconds"])
        spread = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}"
        page = f"{f['first']}{' after' if f['after_cursor'] else ''}"
        db = sorted(f["db_seconds"])
        print(
            f"{f['label']:<26} {page:>10} {f['returned']:>5} {spread:>11} "
            f"{ms(percentile(seconds, 50)):>7} {ms(seconds[-1]):>7} "
            f"{ms(percentile(db, 50)) if db else '-':>7}"
        )
    if args.verbose:
        for f in result["figures"]:
            print(f"\n{f['label']}, first {f['first']}{' after' if f['after_cursor'] else ''}:")
            for statement in f["most"]:
                print(f"  {statement[:160]}")
    plans = {f["label"]: f["plan"] for f in result["figures"] if f["plan"]}
    if plans:
        print("\nPostgreSQL's plan of each search's statement (first page):")
        for label, plan in plans.items():
            print(f"  {label:<26} {plan}")
    means = [statistics.fmean(f["queries"]) for f in result["figures"]]
    print(f"\nstatements per page (without BEGIN/COMMIT): {min(means):.0f}-{max(means):.0f}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--rooms", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--verbose", action="store_true", help="print each page's statements")
    args = parser.parse_args(argv)
    if args.rooms < 1 or args.repeat < 1 or any(not 1 <= n <= 100 for n in args.sizes):
        parser.error("need --rooms >= 1, --repeat >= 1 and sizes in 1..100")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prepare_run(args.wait_idle)
    result = asyncio.run(run(args))
    report(result, args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
