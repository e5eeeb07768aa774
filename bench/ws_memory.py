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
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import httpx
import psutil
from _client import (
    UNTHROTTLED,
    http_client,
    machine_summary,
    open_room,
    post_body,
    raise_nofile_limit,
    remove_tree,
    sign_up,
    start_uvicorn,
)
from realtime import HOST_HANDLE, Room, SubscriberPool, specs_for

from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.gc_tuning import settle_after_startup
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.services.ops import metrics


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


def tracked_types() -> Counter[str]:
    """Objects the collector walks, by type."""
    return Counter(type(o).__name__ for o in gc.get_objects())


def gc_pause() -> tuple[float, int]:
    """How long one full collection takes now (every socket waits that long), and how many
    objects the collector tracks."""
    gc.collect()
    started = time.perf_counter()
    gc.collect()
    return time.perf_counter() - started, len(gc.get_objects())


async def wait_subscribed(wanted: int, limit: float) -> int:
    """Poll (bounded) until the server has ``wanted`` paneEvents subscriptions open."""
    count = 0
    for _ in range(int(limit / 0.5) + 1):
        found = metrics.REGISTRY.get_sample_value(
            "dealroom_subscriptions_open", {"field": "paneEvents"}
        )
        count = int(found or 0)
        if count >= wanted:
            break
        await asyncio.sleep(0.5)
    return count


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
            update={**UNTHROTTLED, "workers": 0}  # no agent replies: the events are the posts
        )
        app = create_app(settings, engine=engine)
        if args.freeze:
            settle_after_startup()  # as `dealroom serve` does; the app then refreezes on settle
        server, task, port = await start_uvicorn(app)
        base = f"http://127.0.0.1:{port}"
        async with http_client(base, connections=8) as http:
            host = await sign_up(http, HOST_HANDLE, "Bench Host")
            rooms = []
            for index in range(args.subscriptions // 2):
                room_id, key = await open_room(http, HOST_HANDLE)
                assert key is not None
                rooms.append(Room(index, room_id, key))
        one_each = specs_for(rooms, {"authorization": host["Authorization"]})
        # --tabs T: each reader follows its pane from T sockets (tabs, devices, integrations).
        specs = [
            replace(spec, index=tab * len(one_each) + spec.index)
            for tab in range(args.tabs)
            for spec in one_each
        ]
        rss = psutil.Process().memory_info
        await asyncio.sleep(1)
        pause_before, objects_before = gc_pause()
        before, rss_before = snapshot(), rss().rss
        types_before, frozen_before = tracked_types(), gc.get_freeze_count()

        # Few at a time: under tracemalloc the server is several times slower, and a burst of
        # subscribes would queue past the SQLite pool's 60 s checkout timeout.
        pool.start(f"ws://127.0.0.1:{port}/graphql", specs, 1, concurrency=8)
        opened, failures, _took, _refused = await pool.wait_opened(timeout=600)
        held_sockets = await wait_connections(port, opened, 60)
        # The server works through the subscribes long after the client has sent them.
        serving = await wait_subscribed(opened, 600)
        # Let the last subscribe operations reach their wait, and the burst count as settled
        # (gc_tuning.refreeze_when_settled: 2 s quiet, polled every second).
        await asyncio.sleep(4.5)
        pause_held, objects_held = gc_pause()
        held, rss_held = snapshot(), rss().rss
        types_held, frozen_held = tracked_types(), gc.get_freeze_count()
        diff = held.compare_to(before, "traceback")
        grown = sum(stat.size_diff for stat in diff)
        print("\n".join(machine_summary()))
        print(
            f"\n{opened} subscriptions held ({held_sockets} sockets, {serving} open in the server; "
            f"open failures {failures})\n"
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
        print(
            f"  frozen (gc.freeze, never walked): {frozen_before} before, {frozen_held} held "
            f"(+{(frozen_held - frozen_before) / opened:.0f} per subscription)"
        )
        grown_types = (types_held - types_before).most_common(args.top)
        print("\n  objects the collector walks, per subscription, by type:")
        for name, count in grown_types:
            print(f"    {count / opened:6.1f}  {name}")
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

        if args.events:
            async with http_client(base, connections=8) as http:
                for line in await deliveries(http, rooms, pool, args.events, len(specs)):
                    print(line)

        await pool.stop()
        await wait_connections(port, 0, 1)
        await asyncio.sleep(3)
        after, rss_after = snapshot(), rss().rss
        print(
            f"\nafter closing them all: frozen {gc.get_freeze_count()} (held {frozen_held}, before "
            f"{frozen_before}; frozen objects freed by reference counting leave this count, a "
            f"frozen cycle stays until gc.unfreeze()); the collector walks "
            f"{len(gc.get_objects()) - objects_before:+d} objects against before"
        )
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


async def deliveries(
    http: httpx.AsyncClient, rooms: Sequence[Room], pool: SubscriberPool, rounds: int, subs: int
) -> list[str]:
    """CPU per delivered event, with each event executed and encoded per subscriber (fan-out
    off) against once per shared view (fan-out on), in one run over the same sockets. Each
    round posts one message into every room as its guest; the process CPU includes the posts
    (the same in both phases), so the difference is what fan-out saves."""
    from dealroom.schema import fanout  # only here: the script also measures older code

    print(f"\n{rounds} message(s) per room, {subs} subscriptions (server CPU, this process):")
    lines: list[str] = []
    cpu: dict[bool, float] = {}
    for enabled in (False, True):
        fanout.ENABLED = enabled
        fanout.reset()
        got, started = pool.received(), time.process_time()
        expected = got + rounds * subs
        for n in range(rounds):
            for room in rooms:
                body = post_body(room.room_id, f"{enabled}:{n}:{room.index}")
                response = await http.post(
                    "/graphql",
                    content=body,
                    headers={"Content-Type": "application/json", "X-Guest-Key": room.guest_key},
                )
                response.raise_for_status()
        for _ in range(600):
            if pool.received() >= expected:
                break
            await asyncio.sleep(0.05)
        spent = time.process_time() - started
        cpu[enabled] = spent / max(1, pool.received() - got)
        print(  # as each phase ends: a slow machine may not reach the second
            f"  fan-out {'on ' if enabled else 'off'}: {pool.received() - got} of "
            f"{expected - got} events delivered, {spent:.2f} s CPU = "
            f"{cpu[enabled] * 1000:.3f} ms per delivered event (with its share of the post)",
            flush=True,
        )
    saved = cpu[False] - cpu[True]
    lines.append(
        f"  fan-out saves {saved * 1000:.3f} ms per delivery "
        f"({cpu[False] / cpu[True]:.2f}x less CPU per delivered event)"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--subscriptions", type=int, default=1000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--tabs", type=int, default=1, help="sockets per reader and pane")
    parser.add_argument(
        "--events", type=int, default=0, help="messages per room for the CPU per delivery"
    )
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="freeze after start-up as `dealroom serve` does (the app refreezes on settle)",
    )
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
