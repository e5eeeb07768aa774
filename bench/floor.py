"""The hot path against the stack itself: server CPU per ``postMessage``
next to bare-stack apps doing the same write (``bench/floor_apps.py``), in one run.

One throwaway PostgreSQL database, migrated; one Redis. ``dealroom serve`` (agent workers off,
post limit lifted) and the four floor apps run as subprocesses on loopback ports with the same
uvicorn options; the strawberry floor apps cache parsing and validation as dealroom does. A
host signs up; for the guest path ``--rooms`` guests open deal rooms for dealroom, as many
again for the floor apps; for the signed-in path ``--accounts`` visitors sign up and open a
room each for dealroom and another for the floor apps. Then, in interleaved rounds,
``--clients`` closed-loop clients post into one path's rooms as their visitors (a guest with
its guest key, a signed-in visitor with its bearer token), each walking its share a post per
room in turn, for ``--seconds`` against each server on each path in turn; the server's own CPU
time over the window divided by the requests answered is its CPU per request. Prints per path
and variant: ms CPU per request (median over rounds), requests/s, the single-process ceiling
that CPU cost implies, and dealroom's cost as a multiple of it; then, per path, dealroom's
cost against the strawberry + asyncpg floor (``CACHING_FLOOR``) as the ratio of the medians and
round by round (the two measured in the same round). It asserts nothing.

    .venv/bin/python bench/floor.py [--rounds 3] [--seconds 8] [--clients 16] [--processes 1]
        [--paths guest,signed-in] [--floors ...] [--profile DIR]

``--processes N`` runs ``dealroom serve --processes N`` and N copies of each floor app (clients
spread over them): the machine's throughput per variant, not one process's, and the
throughput ratio against the Core floor that the machine's throughput target is stated in.

``--profile DIR`` runs every server under cProfile switched on for the measured windows only
(not set-up, start-up or warm-up) and prints, per path, where dealroom's CPU per request goes
against the caching floor's; the profiles are kept in DIR (``NAME.PATH.prof``, for pstats).
cProfile slows Python code unevenly, so that run's CPU figures are not the measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pstats
import secrets
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from _client import (
    DEALROOM,
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    UNTHROTTLED_ENV,
    ServerProcess,
    autovacuum_stand_in,
    create_pg_database,
    drop_pg_database,
    free_port,
    http_client,
    machine_summary,
    migrate,
    ms,
    open_room,
    percentile,
    post_body,
    prepare_run,
    remove_tree,
    sign_up,
    visitor_address,
)

from dealroom.config import Settings

HERE = Path(__file__).resolve().parent
FLOORS = ("strawberry-orm", "strawberry-core", "strawberry-asyncpg", "starlette-asyncpg")
STATEMENTS = {name: 4 for name in FLOORS}  # BEGIN, UPDATE … RETURNING, INSERT, COMMIT
CACHING_FLOOR = "strawberry-asyncpg"
"""The floor dealroom's target is stated against: strawberry with the same parse and
validation caching, writing through raw asyncpg."""
PATHS = ("guest", "signed-in")
"""A guest posting in its room (``x-guest-key``); a signed-in visitor posting in its room
(``Authorization: Bearer``)."""
HOST = "floorhost"

Room = tuple[str, dict[str, str]]
"""A room's id and the headers that post in it as its visitor."""

PROFILED = """
import cProfile, os, runpy, signal, sys, time
out, windows, running = sys.argv[1], [0], []
def start(_signum, _frame):
    running.append(cProfile.Profile(time.thread_time))
    running[-1].enable()
def stop(_signum, _frame):
    if running:
        profiler = running.pop()
        profiler.disable()
        written = f"{out}.{windows[0]}"
        profiler.dump_stats(written + ".part")
        os.replace(written + ".part", written)  # whole when it appears
        windows[0] += 1
signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
sys.argv = sys.argv[2:]
sys.path[0] = os.path.dirname(sys.argv[0])  # as running the script itself would
runpy.run_path(sys.argv[0], run_name="__main__")
"""
"""A server script run under cProfile while a window is open: SIGUSR1 opens one, SIGUSR2
closes it and writes its stats to ``OUT.N`` (the N-th window, from 0). The timer is the event
loop thread's CPU time, not the wall clock: on a shared machine, time the process spends
preempted or waiting in the loop would otherwise land on whichever frame is on top."""


@dataclass
class Figures:
    rate: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    errors: int = 0
    rest_per_request: list[float] = field(default_factory=list)
    """The machine's CPU per request beyond the servers' and the clients' own: PostgreSQL,
    Redis (and anything else running)."""
    machine: list[float] = field(default_factory=list)
    by_round: dict[int, float] = field(default_factory=dict)
    """CPU per request in each round that answered requests."""
    answered: int = 0
    profiles: list[Path] = field(default_factory=list)
    """The profiled windows' stats files (``--profile``)."""


async def drive(
    servers: list[ServerProcess],
    rooms: list[Room],
    clients: int,
    seconds: float,
    profile: bool = False,
) -> tuple[int, int, list[float], float, float, float]:
    """Closed-loop posting, client ``i`` to ``servers[i % len(servers)]`` (one variant's
    processes); returns (answered, errors, latencies, the servers' CPU seconds together, the
    clients' (this process's) CPU seconds, the whole machine's busy CPU seconds).
    ``profile``: the servers' profilers (``PROFILED``) run over the measured window."""
    answered = 0
    errors = 0
    latencies: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        https = [
            await stack.enter_async_context(http_client(s.base_url, connections=clients))
            for s in servers
        ]

        async def client(index: int, until: float) -> None:
            nonlocal answered, errors
            http = https[index % len(https)]
            turn = index
            while time.monotonic() < until:
                # each client walks its share of the rooms, a post per room in turn
                room_id, visitor = rooms[turn % len(rooms)]
                turn += clients
                headers = {"content-type": "application/json", **visitor}
                body = post_body(room_id, f"hello {secrets.token_hex(3)}")
                started = time.perf_counter()
                response = await http.post("/graphql", content=body, headers=headers)
                latencies.append(time.perf_counter() - started)
                if response.status_code != 200 or b'"errors"' in response.content:
                    errors += 1
                    if errors == 1:
                        print(f"  first error: {response.status_code} {response.text[:300]}")
                        if b"LOGIN_REQUIRED" in response.content:
                            print("  (the guests reached their cap: run with more --rooms)")
                else:
                    answered += 1

        # a short warm-up (imports, pools, caches) outside the measured window
        await asyncio.gather(*(client(i, time.monotonic() + 1.0) for i in range(clients)))
        answered, errors, latencies = 0, 0, []
        if profile:
            _signal(servers, signal.SIGUSR1)
        cpu_before = sum(s.cpu_seconds() for s in servers)
        own_before, machine_before = _own_cpu(), _machine_busy()
        await asyncio.gather(*(client(i, time.monotonic() + seconds) for i in range(clients)))
        cpu = sum(s.cpu_seconds() for s in servers) - cpu_before
        own, machine = _own_cpu() - own_before, _machine_busy() - machine_before
        if profile:
            _signal(servers, signal.SIGUSR2)  # the stats are written outside the window
    return answered, errors, latencies, cpu, own, machine


def _signal(servers: list[ServerProcess], signum: int) -> None:
    for server in servers:
        assert server.proc is not None
        server.proc.send_signal(signum)


def _own_cpu() -> float:
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


def _machine_busy() -> float:
    """Busy CPU seconds of the whole machine so far: every process's, those that ended too
    (PostgreSQL's backends come and go with the servers' pool overflow)."""
    times = psutil.cpu_times()
    return float(sum(times)) - times.idle - getattr(times, "iowait", 0.0)


async def main_async(args: argparse.Namespace) -> None:
    pg_url = await create_pg_database(args.pg_url, "dealroom_floor")
    logs = Path(tempfile.mkdtemp(prefix="dealroom-floor-"))
    env = {
        **os.environ,
        "DEALROOM_DATABASE_URL": pg_url,
        "DEALROOM_REDIS_URL": args.redis_url,
        "DEALROOM_WORKERS": "0",
        "DEALROOM_POSTS_PER_MINUTE": "100000000",
        "DEALROOM_ACCESS_LOG": "false",
        "DEALROOM_DEMO": "0",
        "FLOOR_DATABASE_URL": pg_url,
        "FLOOR_REDIS_URL": args.redis_url,
        # the cross-room throttle would refuse the load
        **UNTHROTTLED_ENV,
        # the guest cap as in production: its count reads up to the cap, so a
        # lifted cap would have it read every post a benchmark guest ever made, hundreds
        # where production reads at most the cap; the rooms are many enough that no guest
        # reaches it (a refusal would show as an error)
        "DEALROOM_GUEST_MESSAGE_CAP": str(args.guest_cap),
    }
    servers: dict[str, list[ServerProcess]] = {}
    figures: dict[tuple[str, str], Figures] = {}
    # --profile: each server's stats files, one per profiled window (PROFILED)
    profile_bases: dict[str, list[Path]] = {}
    stand_in = contextlib.AsyncExitStack()
    try:
        migrate(env)
        analyzer = await stand_in.enter_async_context(autovacuum_stand_in(pg_url))
        for name in ("dealroom", *args.floors):
            servers[name] = []
            profile_bases[name] = []
            # `dealroom serve --processes N` shares one port among its children (its CPU is
            # read from the supervisor and its children); a floor app runs N times, each on
            # its own port, the clients spread over them
            for index in range(1 if name == "dealroom" else args.processes):
                folder = logs / f"{name}-{index}"
                folder.mkdir()
                port = free_port()
                script = [str(DEALROOM), "serve", "--host", "127.0.0.1", "--port", str(port)]
                script += ["--processes", str(args.processes)]
                command = script
                if name != "dealroom":
                    script = [str(HERE / "floor_apps.py"), name, str(port)]
                    command = [sys.executable, *script]
                if args.profile is not None:
                    base = args.profile / f"{name}-{index}.prof"
                    profile_bases[name].append(base)
                    command = [sys.executable, "-c", PROFILED, str(base), *script]
                servers[name].append(
                    ServerProcess(env=env, port=port, log_dir=folder, command=command)
                )
        servers["dealroom"][0].start()
        async with http_client(servers["dealroom"][0].base_url) as http:
            rooms = await open_rooms(http, args)
        for name in args.floors:  # they read the rooms' visitor panes at start-up
            for server in servers[name]:
                server.start()

        figures.update(((name, path), Figures()) for name in servers for path in args.paths)
        order = list(servers)
        windows = dict.fromkeys(servers, 0)
        for round_no in range(args.rounds):
            # interleaved: a path's servers one after another, so that dealroom and the floors
            # are measured close together; each round starts with a different server (and
            # path) so drift spreads evenly
            paths = args.paths if round_no % 2 == 0 else args.paths[::-1]
            shift = round_no % len(order)
            for path in paths:
                for name in order[shift:] + order[:shift]:
                    done, errors, latencies, cpu, own, machine = await drive(
                        servers[name],
                        rooms[path, "dealroom" if name == "dealroom" else "floors"],
                        args.clients,
                        args.seconds,
                        profile=args.profile is not None,
                    )
                    entry = figures[name, path]
                    if args.profile is not None:
                        entry.profiles += [
                            Path(f"{b}.{windows[name]}") for b in profile_bases[name]
                        ]
                        windows[name] += 1
                    entry.errors += errors
                    rest = max(0.0, machine - cpu - own)
                    if done:
                        entry.by_round[round_no] = cpu / done
                        entry.answered += done
                        entry.rate.append(done / args.seconds)
                        entry.latency.extend(latencies)
                        entry.rest_per_request.append(rest / done)
                        entry.machine.append(100 * machine / args.seconds)
                    print(
                        f"round {round_no + 1} {path:<9} {name:<19} "
                        f"{done / args.seconds:7.0f} req/s  "
                        f"{ms(cpu / max(done, 1))} ms CPU/req  clients {ms(own / max(done, 1))}  "
                        f"PostgreSQL, Redis and the rest {ms(rest / max(done, 1))}  "
                        f"machine {100 * machine / args.seconds:.0f}%  errors {errors}",
                        flush=True,
                    )
        report(figures, args)
        if args.profile is not None:
            profile_report(figures, args)
        print(
            f"PostgreSQL autovacuum {analyzer['autovacuum']}; "
            f"ANALYZE run {analyzer['analyzed']} times by the benchmark in its stead, "
            f"each of {analyzer['takes']}"
        )
    finally:
        for group in servers.values():
            for server in group:
                server.stop()
        await stand_in.aclose()
        await drop_pg_database(args.pg_url, pg_url)
        if any(entry.errors for entry in figures.values()):
            print(f"errors: the servers' logs are kept in {logs}")
        else:
            remove_tree(logs)


async def open_rooms(
    http: httpx.AsyncClient, args: argparse.Namespace
) -> dict[tuple[str, str], list[Room]]:
    """The host, and each path's rooms: ``(path, "dealroom")`` for dealroom's posts,
    ``(path, "floors")`` for the floor apps' (they write the same tables: their posts would
    count against a guest's cap, and would interleave with dealroom's in its panes)."""
    await sign_up(http, HOST, "Floor Host")
    gate = asyncio.Semaphore(16)
    rooms: dict[tuple[str, str], list[Room]] = {}
    if "guest" in args.paths:
        # each guest from an address of its own, as distinct visitors are

        async def visit(index: int) -> Room:
            async with gate:
                address = {"X-Forwarded-For": visitor_address(index)}
                room_id, key = await open_room(http, HOST, address)
                assert key is not None
                return room_id, {"x-guest-key": key}

        opened = list(await asyncio.gather(*(visit(i) for i in range(2 * args.rooms))))
        rooms["guest", "dealroom"] = opened[: args.rooms]
        rooms["guest", "floors"] = opened[args.rooms :]
    if "signed-in" in args.paths:
        # a signed-in visitor has no cap; one room with the host for dealroom's posts and a
        # second conversation for the floors'

        async def member(index: int) -> tuple[Room, Room]:
            async with gate:
                who = await sign_up(http, f"floorvisitor{index}", f"Floor Visitor {index}")
                mine, _ = await open_room(http, HOST, who)
                theirs, _ = await open_room(http, HOST, who, new_conversation=True)
                assert mine != theirs
                return (mine, who), (theirs, who)

        pairs = await asyncio.gather(*(member(i) for i in range(args.accounts)))
        rooms["signed-in", "dealroom"] = [mine for mine, _ in pairs]
        rooms["signed-in", "floors"] = [theirs for _, theirs in pairs]
    return rooms


def _median(values: Iterable[float]) -> float:
    listed = list(values)
    return statistics.median(listed) if listed else float("nan")


def report(figures: dict[tuple[str, str], Figures], args: argparse.Namespace) -> None:
    print()
    for line in machine_summary():
        print(line)
    print(
        f"{args.clients} closed-loop clients; {args.rooms} guests' rooms and {args.accounts} "
        f"signed-in visitors' rooms for dealroom (as many again for the floor apps); "
        f"{args.rounds} rounds of {args.seconds:.0f}s per server and path, {args.processes} "
        "process(es) per server, PostgreSQL + Redis, agent workers off; the strawberry floors "
        "cache parsing and validation as dealroom does"
        + (
            "; PROFILED (cProfile): these CPU figures are not the measurement"
            if args.profile
            else ""
        )
    )
    for path in args.paths:
        base = _median(figures["dealroom", path].by_round.values())
        print(f"\n{path} path")
        print(
            "| variant | statements | ms CPU / request | req/s | p50 ms | ceiling / process "
            "| dealroom ÷ variant | PostgreSQL, Redis, rest: ms CPU / request | machine busy |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name in [n for n, p in figures if p == path]:
            entry = figures[name, path]
            cpu = _median(entry.by_round.values())
            p50 = percentile(sorted(entry.latency), 50)
            statements = STATEMENTS.get(name, "see test_statements")
            print(
                f"| {name} | {statements} | {cpu * 1000:.2f} | {_median(entry.rate):.0f} | "
                f"{ms(p50)} | ~{1 / cpu:.0f}/s | {base / cpu:.2f}× | "
                f"{_median(entry.rest_per_request) * 1000:.2f} | {_median(entry.machine):.0f}% |"
                + (f" ({entry.errors} errors)" if entry.errors else "")
            )
    if CACHING_FLOOR in args.floors:
        print(
            f"\ndealroom ÷ {CACHING_FLOOR} (the floor with dealroom's parse and validation "
            "caching), CPU per request; target ≤ 2×:"
        )
        for path in args.paths:
            mine, floor = figures["dealroom", path], figures[CACHING_FLOOR, path]
            same = sorted(set(mine.by_round) & set(floor.by_round))
            each = [mine.by_round[r] / floor.by_round[r] for r in same]
            a, b = _median(mine.by_round.values()), _median(floor.by_round.values())
            print(
                f"  {path:<9} {a * 1000:.2f} ÷ {b * 1000:.2f} ms = {a / b:.2f}× "
                f"(round by round {', '.join(f'{x:.2f}×' for x in each)}; "
                f"median {_median(each):.2f}×)"
            )
    if "strawberry-core" not in args.floors:
        return
    for path in args.paths:
        rate, core = (_median(figures[name, path].rate) for name in ("dealroom", "strawberry-core"))
        print(
            f"\nthroughput, {path} path, dealroom ÷ strawberry-core: {rate / core:.2f} "
            f"({rate:.0f} ÷ {core:.0f} req/s with {args.processes} process(es) each; the target "
            "asks at least 0.75 of the Core floor's throughput per machine, with 5,000 "
            "subscriptions held: bench/realtime.py)"
        )


def profile_report(figures: dict[tuple[str, str], Figures], args: argparse.Namespace) -> None:
    """Per path: dealroom's profiled CPU per request next to the caching floor's, by where the
    code lives, then dealroom's costliest functions (own time, and inclusive time for its
    own code). Merged stats are kept as ``NAME.PATH.prof``."""
    assert args.profile is not None
    for path in args.paths:
        tables: dict[str, tuple[dict[tuple[str, int, str], tuple[Any, ...]], int]] = {}
        for name in ("dealroom", CACHING_FLOOR):
            entry = figures.get((name, path))
            if entry is None or not entry.profiles or not entry.answered:
                continue
            files = [str(f) for f in entry.profiles if _written(f)]
            if not files:
                continue
            merged = pstats.Stats(*files)
            merged.dump_stats(str(args.profile / f"{name}.{path}.prof"))
            tables[name] = (merged.stats, entry.answered)  # type: ignore[attr-defined]
        if "dealroom" not in tables:
            continue
        names = list(tables)
        groups = {name: _by_place(*tables[name]) for name in names}
        places = sorted(
            set().union(*(g.keys() for g in groups.values())),
            key=lambda k: -groups["dealroom"].get(k, 0.0),
        )
        print(
            f"\nprofile, {path} path: ms per request of profiled own time, by where the code lives"
        )
        print("| where | " + " | ".join(names) + (" | difference |" if len(names) > 1 else " |"))
        print("| --- |" + " ---: |" * (len(names) + (len(names) > 1)))
        totals = {name: sum(groups[name].values()) for name in names}
        for place in [*places, "total"]:
            values = [totals[n] if place == "total" else groups[n].get(place, 0.0) for n in names]
            if place != "total" and max(values) < 0.005:
                continue
            cells = " | ".join(f"{v:.3f}" for v in values)
            diff = f" | {values[0] - values[1]:+.3f}" if len(values) > 1 else ""
            print(f"| {place} | {cells}{diff} |")
        stats, answered = tables["dealroom"]
        print(
            f"\ndealroom, {path} path: top functions by own time (ms per request; a "
            "coroutine's every resumption counts as a call)"
        )
        ranked = sorted(stats.items(), key=lambda item: -item[1][2])
        for key, value in ranked[: args.profile_top]:
            print(f"  {1000 * value[2] / answered:7.3f}  {_calls(value, answered)}  {_label(key)}")
        print(
            f"\ndealroom, {path} path: its own code by inclusive time (ms per request; "
            "approximate where SQLAlchemy's greenlet switches under the frame)"
        )
        own = [item for item in stats.items() if "/dealroom/" in item[0][0]]
        for key, value in sorted(own, key=lambda item: -item[1][3])[: args.profile_top]:
            print(f"  {1000 * value[3] / answered:7.3f}  {_calls(value, answered)}  {_label(key)}")


def _calls(value: tuple[Any, ...], answered: int) -> str:
    return f"{value[1] / answered:6.1f} calls"


def _written(path: Path, wait: float = 15.0) -> bool:
    """A window's stats file, once its server has written it (after SIGUSR2)."""
    deadline = time.monotonic() + wait
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return path.exists()


def _by_place(
    stats: dict[tuple[str, int, str], tuple[Any, ...]], answered: int
) -> dict[str, float]:
    places: dict[str, float] = {}
    for (filename, _line, function), value in stats.items():
        if filename == "~" and "select.epoll" in function:
            continue  # the loop's idle wait
        place = _place(filename, function)
        places[place] = places.get(place, 0.0) + 1000 * value[2] / answered
    return places


def _place(filename: str, function: str) -> str:
    if filename == "~":
        return "C built-ins (socket, json, asyncpg's, …)"
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0].removesuffix(".py")
    if "/dealroom/" in filename:
        parts = filename.split("/dealroom/")[-1].split("/")
        return "dealroom/" + (parts[0] if len(parts) > 1 else parts[0].removesuffix(".py"))
    if filename.endswith("floor_apps.py"):
        return "floor_apps"
    if "/asyncio/" in filename or filename.endswith("selectors.py"):
        return "asyncio"
    return "stdlib/other"


def _label(key: tuple[str, int, str]) -> str:
    filename, line, function = key
    if filename == "~":
        return function
    for marker in ("site-packages/", "/work/main/"):
        if marker in filename:
            filename = filename.split(marker)[-1]
            break
    else:
        filename = Path(filename).name
    return f"{filename}:{line} {function}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument(
        "--rooms",
        type=int,
        default=1000,
        # each guest may post the guest cap (30) in all: 1,000 rooms hold 30,000 posts, three
        # rounds of 9 s at 1,100 a second (400 rooms ran out at 470 a second: 7 refusals)
        help="guests' rooms for dealroom (as many again for the floor apps)",
    )
    parser.add_argument(
        "--accounts",
        type=int,
        default=64,
        # no cap on a signed-in visitor's posts: rooms enough that the clients' concurrent
        # posts land in different rooms (and different accounts' cross-room counts)
        help="signed-in visitors, each with a room for dealroom and one for the floor apps",
    )
    parser.add_argument(
        "--paths",
        type=lambda value: [name for name in value.split(",") if name],
        default=list(PATHS),
        help="the paths to measure, comma-separated (default: guest,signed-in)",
    )
    parser.add_argument(
        "--guest-cap",
        type=int,
        default=Settings().guest_message_cap,
        help="dealroom's guest cap; production's by default",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="processes per server: dealroom serve --processes N, N copies of each floor app",
    )
    parser.add_argument(
        "--floors",
        type=lambda value: [name for name in value.split(",") if name],
        default=list(FLOORS),
        help="the floor apps to run beside dealroom, comma-separated (default: all four); "
        "--floors strawberry-core brackets realtime.py's runs with the Core floor in a minute",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="run the servers under cProfile over the measured windows, keep the stats in DIR "
        "and print where dealroom's CPU per request goes against the caching floor's "
        "(the run's CPU figures are then not the measurement)",
    )
    parser.add_argument("--profile-top", type=int, default=25, help="functions listed per table")
    parser.add_argument("--pg-url", default=os.environ.get("DEALROOM_BENCH_PG_URL", DEFAULT_PG_URL))
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest runs")
    args = parser.parse_args()
    if unknown := set(args.floors) - set(FLOORS):
        parser.error(f"unknown floors {sorted(unknown)}; choose from {', '.join(FLOORS)}")
    if unknown := set(args.paths) - set(PATHS):
        parser.error(f"unknown paths {sorted(unknown)}; choose from {', '.join(PATHS)}")
    if not args.paths:
        parser.error("--paths: at least one")
    if args.profile is not None:
        if args.processes != 1:
            parser.error("--profile profiles one process per server: --processes 1")
        args.profile = args.profile.resolve()
        args.profile.mkdir(parents=True, exist_ok=True)
    prepare_run(args.wait_idle)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
