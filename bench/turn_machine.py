"""Agent turns per second per machine: N worker processes draining one PostgreSQL + Redis.

``bench/turns.py`` times one process's runner; the target is per machine (at least 100 turns per
second on 2 cores with a zero-latency model). This script queues the turns first (guests post over
HTTP into a server with no workers), then starts N worker processes, each the real runner
(``create_runner``, as ``dealroom worker`` builds it) with the bench's :class:`turns.ZeroClient`
and ``--workers`` workers, and times them until no run is outstanding. Rounds alternate the process
counts (default 1 then 2) and ``--loops`` (``asyncio uvloop`` compares the two) in one run,
repeated, so a ratio is read against a baseline taken minutes apart, not days.

Reported per round: turns/s (a turn = one posted message's persona run and Distil run), the
workers' CPU (all worker processes, % of one core), and the whole machine's CPU (both cores,
PostgreSQL and Redis included) over the timed window.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.queues import SimpleQueue
from multiprocessing.synchronize import Event
from pathlib import Path

import psutil
from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    autovacuum_stand_in,
    create_pg_database,
    drop_pg_database,
    http_client,
    machine_summary,
    prepare_run,
    remove_tree,
    sign_up,
)
from turns import (
    HOST_HANDLE,
    Backend,
    ZeroClient,
    message_text,
    open_rooms,
    post,
    serve,
    settings_for,
    wait_all_done,
)

from dealroom import gc_tuning
from dealroom.jobs.wiring import create_runner
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.realtime import create_broker
from dealroom.services.clock import SystemClock


def worker_process(
    backend: Backend,
    workers: int,
    loop: str,
    ready: Event,
    go: Event,
    stop: Event,
    report: SimpleQueue[float],
) -> None:
    """One worker process: import and connect first (``ready``), run turns from ``go`` until
    ``stop``, on ``loop`` (``asyncio``, as ``dealroom worker`` runs, or ``uvloop``, as
    uvicorn runs ``serve`` and its in-process workers); then put in ``report`` the seconds
    its collections took from ``go`` to ``stop``."""
    if loop == "uvloop":
        import uvloop

        uvloop.run(_work(backend, workers, ready, go, stop, report))
    else:
        asyncio.run(_work(backend, workers, ready, go, stop, report))


async def _work(
    backend: Backend, workers: int, ready: Event, go: Event, stop: Event, report: SimpleQueue[float]
) -> None:
    loop = asyncio.get_running_loop()
    engine = create_engine(backend.url)
    broker = create_broker(backend.redis_url)
    await broker.start()
    # Rooms of earlier rounds go quiet while later rounds run; their audits (the Guard after
    # a minute, the curator after ten) are not turns, so they are kept out of the window.
    quiet = {"guard_quiet_seconds": 86_400.0, "curator_quiet_seconds": 86_400.0}
    settings = settings_for(backend, workers).model_copy(update=quiet)
    runner = create_runner(
        settings, create_sessionmaker(engine), broker, SystemClock(), ZeroClient()
    )
    if os.environ.get("DEALROOM_BENCH_GC") == "tuned":
        # as ``serve`` tunes its own, without freezing survivors (a worker holds no
        # subscriptions; a turn's leftover cycles must stay collectable)
        gc_tuning.settle_after_startup(survivors=False)
    else:
        gc_tuning.watch_pauses()  # timed only, the collector as CPython sets it
    try:
        ready.set()
        await loop.run_in_executor(None, go.wait)
        collecting = sum(gc_tuning.PAUSES.seconds)
        await runner.start()
        await loop.run_in_executor(None, stop.wait)
        report.put(sum(gc_tuning.PAUSES.seconds) - collecting)
    finally:
        await runner.close()
        await broker.close()
        await engine.dispose()


@dataclass
class Round:
    processes: int
    loop: str
    turns: int
    seconds: float
    workers_cpu: float
    """CPU seconds of all worker processes over the timed window."""
    machine_cpu: float
    """% of all cores over the timed window."""
    gc_seconds: float = 0.0
    """The worker processes' collections, summed, from ``go`` to ``stop``."""
    lane: str = "on"
    """The raw lane in the worker processes (``--lanes``)."""
    gc: str = "default"
    """The worker processes' collector (``--gcs``): CPython's default, as ``dealroom worker``
    keeps it, or tuned as ``serve`` tunes its own."""

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds


async def one_round(
    backend: Backend,
    processes: int,
    loop: str,
    args: argparse.Namespace,
    base_url: str,
    lane: str = "on",
    gc: str = "default",
) -> Round:
    """Queue ``rooms × messages`` turns, then drain them with ``processes`` worker processes
    running on ``loop``, the raw lane ``lane`` and the collector ``gc`` in them (spawned:
    they read the environment)."""
    os.environ["DEALROOM_RAW_LANE"] = "1" if lane == "on" else "0"
    os.environ["DEALROOM_BENCH_GC"] = gc
    engine = create_engine(backend.url)
    sessionmaker = create_sessionmaker(engine)
    context = multiprocessing.get_context("spawn")
    ready = [context.Event() for _ in range(processes)]
    go, stop = context.Event(), context.Event()
    report: SimpleQueue[float] = context.SimpleQueue()
    children = [
        context.Process(
            target=worker_process, args=(backend, args.workers, loop, r, go, stop, report)
        )
        for r in ready
    ]
    try:
        async with http_client(base_url) as http:
            rooms = await open_rooms(http, args.rooms)
            for n in range(args.messages):
                await asyncio.gather(
                    *(post(http, room, message_text(i, n)) for i, room in enumerate(rooms))
                )
        for child in children:
            child.start()
        for event in ready:
            if not await asyncio.to_thread(event.wait, 120.0):
                raise TimeoutError("a worker process did not start")
        watched = [psutil.Process(child.pid) for child in children]
        cpu0 = sum(sum(p.cpu_times()[:2]) for p in watched)
        psutil.cpu_percent()
        started = time.monotonic()
        go.set()
        finished = await wait_all_done(sessionmaker, args.timeout)
        machine = psutil.cpu_percent()
        cpu = sum(sum(p.cpu_times()[:2]) for p in watched) - cpu0
    finally:
        stop.set()
        go.set()
        for child in children:
            if child.pid is not None:
                child.join(30)
                if child.is_alive():
                    child.kill()
        await engine.dispose()
    collected = 0.0
    while not report.empty():
        collected += report.get()
    turns = args.rooms * args.messages
    return Round(processes, loop, turns, finished - started, cpu, machine, collected, lane, gc)


async def run(args: argparse.Namespace) -> list[Round]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-turn-machine-"))
    database_url = await create_pg_database(args.pg_url, "dealroom_bench_turn_machine")
    backend = Backend("postgres", database_url, args.redis_url, folder)
    engine = create_engine(backend.url)
    broker = create_broker(backend.redis_url)
    server = None
    rounds: list[Round] = []
    stand_in = contextlib.AsyncExitStack()
    try:
        await upgrade(engine)
        analyzer = await stand_in.enter_async_context(autovacuum_stand_in(database_url))
        await broker.start()
        _app, server = await serve(backend, engine, broker, workers=0)
        base_url = f"http://127.0.0.1:{server.port}"
        async with http_client(base_url) as http:
            await sign_up(http, HOST_HANDLE, "Turn Bench Host")
        for index in range(args.repeat):
            for processes in args.processes:
                for loop in args.loops:
                    for lane in args.lanes:
                        for gc in args.gcs:
                            found = await one_round(
                                backend, processes, loop, args, base_url, lane, gc
                            )
                            rounds.append(found)
                            print(f"  round {index + 1}: {row(found)}", flush=True)
        print(
            f"PostgreSQL autovacuum {analyzer['autovacuum']}; "
            f"ANALYZE run {analyzer['analyzed']} times by the benchmark in its stead, "
            f"each of {analyzer['takes']}"
        )
    finally:
        await stand_in.aclose()
        if server is not None:
            await server.stop()
        await broker.close()
        await engine.dispose()
        await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)
    return rounds


def row(r: Round) -> str:
    return (
        f"{r.processes} process(es) on {r.loop}, raw lane {r.lane}, collector {r.gc}: "
        f"{r.turns} turns in "
        f"{r.seconds:.2f} s = "
        f"{r.turns_per_second:.1f} turns/s; workers' CPU {100 * r.workers_cpu / r.seconds:.0f}% "
        f"of a core ({1000 * r.workers_cpu / r.turns:.1f} ms per turn, of which "
        f"{1000 * r.gc_seconds / r.turns:.1f} ms collecting); "
        f"machine {r.machine_cpu:.0f}%"
    )


def report(rounds: Sequence[Round]) -> list[str]:
    lines = ["processes  loop     rounds  turns/s (median)  ms worker CPU/turn  machine CPU"]
    for lane, gc in sorted({(r.lane, r.gc) for r in rounds}, reverse=True):
        mine = [r for r in rounds if (r.lane, r.gc) == (lane, gc)]
        if len(mine) < len(rounds):
            lines.append(f"raw lane {lane}, collector {gc}:")
        lines.extend(_by_count(mine))
    return lines


def _by_count(rounds: Sequence[Round]) -> list[str]:
    lines: list[str] = []
    medians: dict[tuple[int, str], float] = {}
    for key in sorted({(r.processes, r.loop) for r in rounds}):
        mine = [r for r in rounds if (r.processes, r.loop) == key]
        medians[key] = statistics.median(r.turns_per_second for r in mine)
        cpu = statistics.median(1000 * r.workers_cpu / r.turns for r in mine)
        machine = statistics.median(r.machine_cpu for r in mine)
        lines.append(
            f"{key[0]:>9}  {key[1]:<8}{len(mine):>6}{medians[key]:>18.1f}{cpu:>20.1f}"
            f"{machine:>12.0f}%"
        )
    for loop in sorted({r.loop for r in rounds}):
        counts = sorted(p for p, name in medians if name == loop)
        if len(counts) > 1:
            low, high = medians[(counts[0], loop)], medians[(counts[-1], loop)]
            lines.append(
                f"{loop}: {counts[-1]} ÷ {counts[0]} process(es) = {high / low:.2f}x "
                f"(target: >= 100 turns/s per machine)"
            )
    for processes in sorted({p for p, _ in medians}):
        if (processes, "uvloop") in medians and (processes, "asyncio") in medians:
            ratio = medians[(processes, "uvloop")] / medians[(processes, "asyncio")]
            lines.append(f"{processes} process(es): uvloop ÷ asyncio = {ratio:.2f}x turns/s")
    return lines


def compared(
    parser: argparse.ArgumentParser, flag: str, choices: tuple[str, ...], help: str
) -> None:
    """An option naming variants to alternate round by round; the first is the default."""
    parser.add_argument(flag, nargs="+", choices=choices, default=[choices[0]], help=help)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workers", type=int, default=4, help="agent workers per process")
    compared(
        parser,
        "--loops",
        ("asyncio", "uvloop"),
        "event loops to compare, round by round (dealroom worker runs on asyncio's, serve on "
        "uvloop)",
    )
    compared(
        parser,
        "--lanes",
        ("on", "off"),
        "the raw lane in the workers, compared round by round (DEALROOM_RAW_LANE)",
    )
    compared(
        parser,
        "--gcs",
        ("default", "tuned"),
        "the workers' collector, compared round by round: tuned as serve tunes its own "
        "(without freezing survivors), or CPython's default (dealroom worker keeps it)",
    )
    parser.add_argument("--rooms", type=int, default=40)
    parser.add_argument("--messages", type=int, default=6, help="messages per room per round")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    args = parser.parse_args(argv)
    if min(*args.processes, args.workers, args.rooms, args.messages, args.repeat) < 1:
        parser.error("sizes must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prepare_run(args.wait_idle)
    print("\n".join(machine_summary()))
    print(f"command: {' '.join(sys.argv)}; zero-latency model; PostgreSQL + Redis")
    rounds = asyncio.run(run(args))
    print("\n".join(report(rounds)))


if __name__ == "__main__":
    main()
