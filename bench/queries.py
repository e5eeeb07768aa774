"""Query benchmark: SQL statements per ``rooms`` page of 10 and of 50.

Builds the app in-process on a fresh database (``--backend sqlite``: a temporary SQLite file;
``--backend postgres``: a throwaway PostgreSQL database), serves it with uvicorn on a free
loopback port, and drives it over HTTP like a client app. One host gets ``--rooms`` deal rooms
(half opened by guests, half by signed-in visitors), each with messages in both panes. A
``before_cursor_execute`` listener on the engine counts the statements each ``rooms(first: N)``
request runs. Prints statements per page, their ratio, and the mean response time over
``--repeat`` requests of each size. It asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
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
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade

HOST_HANDLE = "benchhost"
PAGE = """
query($first: Int!) {
  rooms(first: $first) {
    edges {
      node {
        id title subtitle readerSeat loginRequired
        participants { seat displayName isGuest account { handle } }
        lastMessage { body alignment }
      }
    }
    pageInfo { hasNextPage }
  }
}
"""


async def populate(http: httpx.AsyncClient, rooms: int, messages: int) -> dict[str, str]:
    """One host with ``rooms`` deal rooms; returns the host's headers."""
    host = await sign_up(http, HOST_HANDLE, "Bench Host")
    for n in range(rooms):
        visitor: dict[str, str] = {}
        if n % 2:
            visitor = await sign_up(http, f"visitor{n:03d}", f"Visitor {n:03d}")
        room_id, guest_key = await open_room(http, HOST_HANDLE, visitor)
        if guest_key:
            visitor = {"X-Guest-Key": guest_key}
        for m in range(messages):
            for who in (visitor, host):  # the visitor's pane, then the host's own pane
                response = await http.post(
                    "/graphql",
                    content=post_body(room_id, f"room {n} message {m}", f"r{n}-m{m}"),
                    headers={"Content-Type": "application/json", **who},
                )
                body = response.json()
                if body.get("errors"):
                    raise RuntimeError(f"postMessage failed: {body['errors']}")
    return host


@dataclass
class PageFigures:
    first: int
    rooms_returned: int
    statements: list[int]
    queries: list[int]
    seconds: list[float]
    sample: list[str]


async def measure(
    http: httpx.AsyncClient, log: StatementLog, host: dict[str, str], first: int, repeat: int
) -> PageFigures:
    figures = PageFigures(first, 0, [], [], [], [])
    for n in range(repeat + 1):  # the first request warms caches and is not counted
        with log.capture() as seen:
            started = time.monotonic()
            data = await gql(http, PAGE, {"first": first}, host)
            took = time.monotonic() - started
        if n == 0:
            figures.rooms_returned = len(data["rooms"]["edges"])
            figures.sample = list(seen)
            continue
        figures.statements.append(len(seen))
        figures.queries.append(len(queries_only(seen)))
        figures.seconds.append(took)
    return figures


async def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-q-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    server: uvicorn.Server | None = None
    task: asyncio.Task[None] | None = None
    result: dict[str, Any] = {"args": vars(args), "machine": machine_summary()}
    try:
        if args.backend == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_q")
            url = database_url
        else:
            url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
        engine = create_engine(url)
        await upgrade(engine)
        settings = Settings(
            database_url=url, redis_url=None, data_dir=folder, debug=False
        ).model_copy(update=UNTHROTTLED)
        app = create_app(settings, engine=engine)
        server, task, port = await start_uvicorn(app)
        result["other_pytest_at_start"] = other_test_runs()
        async with http_client(f"http://127.0.0.1:{port}") as http:
            started = time.monotonic()
            host = await populate(http, args.rooms, args.messages)
            result["setup_seconds"] = time.monotonic() - started
            with StatementLog(engine) as log:
                pages = [await measure(http, log, host, n, args.repeat) for n in args.sizes]
        result["pages"] = [vars(p) for p in pages]
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
        f"backend {args.backend}; command: {' '.join(sys.argv)}; host with {args.rooms} deal "
        f"rooms (+ its home room), {args.messages} message(s) per pane; setup "
        f"{result['setup_seconds']:.1f}s; pytest processes at start/end: "
        f"{result['other_pytest_at_start']}/{result['other_pytest_at_end']}"
    )
    pages = result["pages"]
    print(
        f"\n{'page':>16} {'rooms':>6} {'statements':>11} {'w/o BEGIN/PRAGMA':>17} "
        f"{'mean ms':>8} {'p50 ms':>7} {'min ms':>7} {'max ms':>7}"
    )
    for page in pages:
        counts, queries, seconds = page["statements"], page["queries"], sorted(page["seconds"])
        spread = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}"
        qspread = (
            f"{min(queries)}" if min(queries) == max(queries) else f"{min(queries)}-{max(queries)}"
        )
        print(
            f"{'rooms(first: ' + str(page['first']) + ')':>16} {page['rooms_returned']:>6} "
            f"{spread:>11} {qspread:>17} {ms(statistics.fmean(seconds)):>8} "
            f"{ms(percentile(seconds, 50)):>7} {ms(seconds[0]):>7} {ms(seconds[-1]):>7}"
        )
    if len(pages) >= 2:
        small, large = pages[0], pages[-1]
        ratio = statistics.fmean(large["queries"]) / max(1e-9, statistics.fmean(small["queries"]))
        print(
            f"\nstatements per page, first: {large['first']} / first: {small['first']} = "
            f"{ratio:.2f} (page size ratio {large['first'] / small['first']:.0f})"
        )
    print(f"\nstatements of one rooms(first: {pages[-1]['first']}) request:")
    for statement in pages[-1]["sample"]:
        print(f"  {statement[:150]}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--rooms", type=int, default=60)
    parser.add_argument("--messages", type=int, default=2, help="per pane per room")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    parser.add_argument("--json", type=Path, help="also write the figures here")
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
