"""Where a held subscription's server memory goes: a tracemalloc diagnostic for realtime.py.

Builds the app in-process (SQLite + in-process broker) under ``tracemalloc``, serves it with
uvicorn on a free loopback port, opens N ``paneEvents`` subscriptions from a subscriber
process (the same one ``realtime.py`` uses), and compares snapshots: before, while held, and
after they are closed. Prints the bytes per subscription by package and the top allocation
sites, the RSS growth for comparison, and what stays allocated after every socket is closed
(a leak would show there). tracemalloc slows the server; the figures are memory, not time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import signal
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import psutil
from _client import (
    UNTHROTTLED,
    http_client,
    machine_summary,
    open_room,
    raise_nofile_limit,
    remove_tree,
    sign_up,
    start_uvicorn,
)
from realtime import HOST_HANDLE, Room, SubscriberPool, specs_for

from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade


def package_of(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0].removesuffix(".py")
    if "/dealroom/" in filename:
        return "dealroom"
    if "/asyncio/" in filename:
        return "asyncio"
    return "stdlib/other"


def by_package(diff: Sequence[tracemalloc.StatisticDiff]) -> dict[str, int]:
    """Attribute each allocation to the innermost frame outside the stdlib (who asked)."""
    totals: dict[str, int] = {}
    for stat in diff:
        frames = [frame.filename for frame in stat.traceback]
        owner = next(
            (package_of(f) for f in frames if package_of(f) not in ("stdlib/other", "asyncio")),
            package_of(frames[0]) if frames else "?",
        )
        totals[owner] = totals.get(owner, 0) + stat.size_diff
    return totals


def snapshot() -> tracemalloc.Snapshot:
    """The traced allocations now (an empty snapshot when not tracing)."""
    gc.collect()
    if not tracemalloc.is_tracing():
        return tracemalloc.Snapshot([], 1)
    return tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )


def gc_pause() -> tuple[float, int]:
    """How long one full collection takes now (every socket waits that long), and how many
    objects the collector tracks."""
    gc.collect()
    started = time.perf_counter()
    gc.collect()
    return time.perf_counter() - started, len(gc.get_objects())


async def wait_connections(port: int, wanted: int, limit: float) -> int:
    """Poll (bounded) until this process holds ``wanted`` established sockets on ``port``."""
    me = psutil.Process()
    count = 0
    for _ in range(int(limit / 0.5) + 1):
        count = sum(
            1
            for c in me.net_connections(kind="tcp")
            if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port
        )
        if count >= wanted:
            break
        await asyncio.sleep(0.5)
    return count


async def run(args: argparse.Namespace) -> None:
    raise_nofile_limit(args.subscriptions + 2048)
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-mem-"))
    url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
    engine = create_engine(url)
    # The client cannot pace subscribes (graphql-transport-ws does not acknowledge them), so the
    # server queues every subscribe's lookups on SQLite's one pooled connection; under
    # tracemalloc that queue outlasts the pool's 60 s checkout timeout. Memory is what we
    # measure here, so give the checkout more time (realtime.py runs the server as shipped).
    engine.sync_engine.pool._timeout = 900  # type: ignore[attr-defined]
    pool = SubscriberPool()
    server = task = None
    try:
        await upgrade(engine)
        settings = Settings(database_url=url, redis_url=None, data_dir=folder).model_copy(
            update=UNTHROTTLED
        )
        server, task, port = await start_uvicorn(create_app(settings, engine=engine))
        base = f"http://127.0.0.1:{port}"
        async with http_client(base, connections=8) as http:
            host = await sign_up(http, HOST_HANDLE, "Bench Host")
            rooms = []
            for index in range(args.subscriptions // 2):
                room_id, key = await open_room(http, HOST_HANDLE)
                assert key is not None
                rooms.append(Room(index, room_id, key))
        specs = specs_for(rooms, {"authorization": host["Authorization"]})
        rss = psutil.Process().memory_info
        await asyncio.sleep(1)
        pause_before, objects_before = gc_pause()
        before, rss_before = snapshot(), rss().rss

        # Few at a time: under tracemalloc the server is several times slower, and a burst of
        # subscribes would queue past the SQLite pool's 60 s checkout timeout.
        pool.start(f"ws://127.0.0.1:{port}/graphql", specs, 1, concurrency=8)
        opened, failures, _took = await pool.wait_opened(timeout=600)
        held_sockets = await wait_connections(port, opened, 60)
        await asyncio.sleep(3)  # let the last subscribe operations reach their wait
        pause_held, objects_held = gc_pause()
        held, rss_held = snapshot(), rss().rss
        diff = held.compare_to(before, "traceback")
        grown = sum(stat.size_diff for stat in diff)
        print("\n".join(machine_summary()))
        print(
            f"\n{opened} subscriptions held ({held_sockets} sockets; open failures {failures})\n"
            f"  tracemalloc: +{grown / 2**20:.1f} MiB = {grown / 1024 / opened:.1f} KiB per "
            f"subscription (Python allocations)\n"
            f"  RSS:         +{(rss_held - rss_before) / 2**20:.1f} MiB = "
            f"{(rss_held - rss_before) / 1024 / opened:.1f} KiB per subscription"
            + (" (with tracemalloc's own overhead)" if tracemalloc.is_tracing() else "")
        )
        print(
            f"  gc-tracked objects: +{(objects_held - objects_before) / opened:.0f} per "
            f"subscription; a full collection takes {pause_before * 1000:.0f} ms before, "
            f"{pause_held * 1000:.0f} ms with them held (the event loop stops meanwhile)"
        )
        print("\n  per subscription, by the package that allocated (innermost non-stdlib frame):")
        for name, size in sorted(by_package(diff).items(), key=lambda item: -item[1])[:12]:
            print(f"    {name:<24} {size / 1024 / opened:7.2f} KiB")
        print("\n  top allocation sites (per subscription):")
        for stat in held.compare_to(before, "lineno")[: args.top]:
            frame = stat.traceback[0]
            where = frame.filename.split("site-packages/")[-1].split("/work/main/")[-1]
            print(
                f"    {stat.size_diff / 1024 / opened:7.2f} KiB  {stat.count_diff / opened:6.1f}"
                f" blocks  {where}:{frame.lineno}"
            )

        await pool.stop()
        await wait_connections(port, 0, 1)
        await asyncio.sleep(3)
        after, rss_after = snapshot(), rss().rss
        left = sum(stat.size_diff for stat in after.compare_to(before, "traceback"))
        print(
            f"\nafter closing them all: tracemalloc {left / 2**20:+.2f} MiB vs before "
            f"({left / 1024 / opened:.2f} KiB per subscription still allocated); RSS "
            f"{(rss_after - rss_before) / 2**20:+.1f} MiB (the allocator keeps freed pages)"
        )
        for stat in after.compare_to(before, "lineno")[:5]:
            frame = stat.traceback[0]
            where = frame.filename.split("site-packages/")[-1].split("/work/main/")[-1]
            print(
                f"    {stat.size_diff / 1024:9.1f} KiB in {stat.count_diff:+6d} blocks  "
                f"{where}:{frame.lineno}"
            )
    finally:
        pool.kill()
        if server is not None and task is not None:
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 30)
        await engine.dispose()
        remove_tree(folder)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--subscriptions", type=int, default=1000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument(
        "--frames", type=int, default=6, help="tracemalloc frames kept (0: no tracemalloc)"
    )
    args = parser.parse_args(argv)

    def terminate(_signum: int, _frame: object) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, terminate)
    if args.frames > 0:
        tracemalloc.start(args.frames)
    started = time.monotonic()
    asyncio.run(run(args))
    print(f"\n(took {time.monotonic() - started:.0f}s)")


if __name__ == "__main__":
    main()
