"""Realtime benchmark: subscriptions held, delivery latency, server memory.

One real ``dealroom serve`` subprocess on a free loopback port with a fresh database:

* ``--backend embedded``: SQLite file + in-process broker;
* ``--backend redis``: a throwaway PostgreSQL database + Redis pub/sub.

The script signs up one host, opens N/2 deal rooms as distinct guests, then holds N
``paneEvents(roomId, seat: VISITOR)`` subscriptions, two per room (the host's and the guest's),
each on its own websocket, authenticated in ``connection_init``. Subscribers run in separate
processes (``--sub-procs``) so that the poster's event loop does not delay their timestamps;
``time.monotonic`` is system-wide on Linux, so arrival and return times share one clock.

Phases, each with its own figures:

1. baseline: 100 subscriptions (50 rooms), 20 msg/s for ``--baseline-seconds``;
2. the N subscriptions are opened and held; server RSS before and while held;
3. probe: one message into every room, to check that every held subscription delivers;
4. load: ``postMessage`` at the fixed aggregate rate R, round robin over the rooms (as each
   room's guest), on a fixed timetable, for T seconds. Latency of each delivered event =
   its arrival time - the return time of the postMessage call that caused it (negatives,
   possible because the server publishes just before it writes its HTTP response, are
   clamped to 0 and counted). That measure hides queueing in the server (a saturated server
   publishes and answers in the same breath), so "send -> event" (from the moment the
   postMessage call started) and the postMessage round trip are reported beside it.

Subscriptions open as fast as 96 concurrent handshakes go, or at ``--open-rate`` per second.
The server runs through a tiny wrapper that logs its garbage-collection pauses (``--no-gc-log``
runs ``dealroom serve`` bare); ``--server-profile`` runs it under cProfile instead.

It prints figures; it asserts nothing about them. ``--json FILE`` also writes them as JSON.
Every loop is bounded in count and time; the server, the subscriber processes, the temporary
data directory and the PostgreSQL database are removed on the way out, error or not.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

import httpx
import psutil
from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    UNTHROTTLED_ENV,
    ServerProcess,
    autovacuum_stand_in,
    backend_census,
    create_pg_database,
    drop_pg_database,
    free_port,
    http_client,
    machine_summary,
    migrate,
    ms,
    open_room,
    open_subscription,
    other_test_runs,
    percentile,
    post_body,
    prepare_run,
    profile_summary,
    raise_nofile_limit,
    remove_tree,
    sign_up,
    visitor_address,
)
from _waits import cpu_waits, postgres_pids
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

HOST_HANDLE = "benchhost"
BASELINE_SUBSCRIPTIONS = 100
BASELINE_RATE = 20.0
WORKER_MAX_LIFETIME = 3600.0
"""A subscriber process never outlives this, whatever happens to its parent."""


# --- subscriber processes --------------------------------------------------------------------


START_ATTEMPTS = 30
"""Subscribes per subscription while the server answers UNAVAILABLE (retrying after its
``retryAfterSeconds``, as the web client does)."""
START_VERDICT_SECONDS = 7.0
"""A subscription not refused within this long has started (the server's admission refuses
after 5 s in its queue by default)."""


@dataclass(frozen=True)
class SubSpec:
    """One subscription: which room, as whom."""

    index: int
    room_index: int
    room_id: str
    init: dict[str, str]
    who: str  # "host" | "guest"


@dataclass
class WorkerReport:
    opened: int = 0
    open_failures: dict[str, int] = field(default_factory=dict)
    open_seconds: float = 0.0
    open_at_end: int = 0
    """Sockets still open when told to stop."""
    live_at_end: int = 0
    """Of those, subscriptions the server had not ended with an error or ``complete``."""
    ended: list[int] = field(default_factory=list)
    """Indices of subscriptions the server ended (error or complete)."""
    closed_by_server: dict[str, int] = field(default_factory=dict)
    protocol_errors: dict[str, int] = field(default_factory=dict)
    refused_unavailable: int = 0
    other_events: int = 0
    """Pane events other than a message (``{}`` for this selection: typing, an agent's
    delta), counted and otherwise ignored."""
    """Start-ups the server refused UNAVAILABLE; each was retried after its retryAfterSeconds."""
    arrivals: list[tuple[str, int, float]] = field(default_factory=list)
    """(message body, subscription index, time.monotonic() at arrival)"""
    stalls: list[tuple[float, float]] = field(default_factory=list)
    """(time.monotonic() it fell asleep, seconds late) for each time this subscriber
    process's event loop woke over ``CLIENT_STALL`` late once its subscriptions were open:
    anything that stopped it reading (a collection, a wait for a CPU) shows so. Events that
    arrive late because of it are the benchmark's, not the server's."""


CLIENT_STALL = 0.03
"""A subscriber process's own pause this long (seconds) is reported (``WorkerReport.stalls``)."""


def _watch_own_pauses(report: WorkerReport) -> asyncio.Task[None]:
    """Record this process's event loop waking up late."""

    async def watch() -> None:
        while True:
            asleep = time.monotonic()
            await asyncio.sleep(0.01)
            if (late := time.monotonic() - asleep - 0.01) > CLIENT_STALL:
                report.stalls.append((asleep, late))

    return asyncio.create_task(watch())


def subscriber_main(
    pipe: Connection,
    ws_url: str,
    specs: list[SubSpec],
    concurrency: int,
    counter: Synchronized[int],
    open_rate: float,
) -> None:
    """Entry point of a subscriber process (spawned)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    raise_nofile_limit(len(specs) + 1024)
    asyncio.run(_subscriber(pipe, ws_url, specs, concurrency, counter, open_rate))


async def _subscriber(
    pipe: Connection,
    ws_url: str,
    specs: list[SubSpec],
    concurrency: int,
    counter: Synchronized[int],
    open_rate: float,
) -> None:
    born = time.monotonic()
    parent = os.getppid()
    report = WorkerReport()
    sockets: dict[int, ClientConnection] = {}
    readers: dict[int, asyncio.Task[None]] = {}
    failures: Counter[str] = Counter()
    closed: Counter[str] = Counter()
    protocol_errors: Counter[str] = Counter()
    gate = asyncio.Semaphore(concurrency)
    stopping = False
    ended: set[int] = set()  # subscriptions the server errored or completed
    # the first thing each subscription hears: None (an event, or an ending other than a
    # refusal) or UNAVAILABLE's retryAfterSeconds
    verdicts: dict[int, asyncio.Future[float | None]] = {}

    def verdict(index: int, value: float | None) -> None:
        future = verdicts.get(index)
        if future is not None and not future.done():
            future.set_result(value)

    async def read(spec: SubSpec, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                arrived = time.monotonic()
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "next":
                    payload = message.get("payload") or {}
                    event = (payload.get("data") or {}).get("paneEvents")
                    if event == {} and not payload.get("errors"):
                        verdict(spec.index, None)
                        report.other_events += 1  # typing, a delta: not in the selection
                        continue
                    if payload.get("errors") or not event:
                        errors = payload.get("errors") or [{}]
                        codes = [e.get("extensions", {}).get("code") for e in errors]
                        if codes[0] == "UNAVAILABLE" and not stopping:
                            report.refused_unavailable += 1
                            verdict(spec.index, errors[0]["extensions"].get("retryAfterSeconds", 1))
                            return  # the opener closes this socket and subscribes again
                        verdict(spec.index, None)
                        said = str(errors[0].get("message", ""))[:100]
                        protocol_errors[f"next with errors {codes}: {said}"] += 1
                        ended.add(spec.index)
                        continue
                    verdict(spec.index, None)
                    report.arrivals.append((event["message"]["body"], spec.index, arrived))
                    counter.value += 1
                elif kind == "ping":
                    await ws.send('{"type":"pong"}')
                elif kind == "pong":
                    continue
                else:
                    verdict(spec.index, None)
                    protocol_errors[f"{kind}: {str(raw)[:120]}"] += 1
                    if kind in ("error", "complete"):
                        ended.add(spec.index)
        except ConnectionClosed:
            pass
        except Exception as exc:
            protocol_errors[f"reader {type(exc).__name__}: {exc}"[:160]] += 1
        if not stopping:
            closed[f"code {ws.close_code} {ws.close_reason or ''}".strip()] += 1

    async def open_one(n: int, spec: SubSpec) -> None:
        if open_rate > 0:  # paced: subscription n starts at started + n / open_rate
            await asyncio.sleep(max(0.0, started + n / open_rate - time.monotonic()))
        for _ in range(START_ATTEMPTS):
            async with gate:
                try:
                    ws = await open_subscription(
                        ws_url,
                        spec.init,
                        {"roomId": spec.room_id, "seat": "VISITOR"},
                        timeout=60,
                    )
                except Exception as exc:
                    failures[f"{type(exc).__name__}: {exc}"[:160]] += 1
                    return
            heard = verdicts[spec.index] = asyncio.get_running_loop().create_future()
            sockets[spec.index] = ws
            readers[spec.index] = asyncio.create_task(read(spec, ws))
            try:
                # a refusal comes within the server's admission wait (5 s by default)
                retry_after = await asyncio.wait_for(asyncio.shield(heard), START_VERDICT_SECONDS)
            except TimeoutError:
                return  # not refused: started
            if retry_after is None:
                return
            del sockets[spec.index]
            readers.pop(spec.index).cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 5)
            await asyncio.sleep(retry_after)
        failures[f"refused UNAVAILABLE {START_ATTEMPTS} times"] += 1

    started = time.monotonic()
    opening = [asyncio.create_task(open_one(n, spec)) for n, spec in enumerate(specs)]
    budget = max(120.0, 0.1 * len(specs)) + (len(specs) / open_rate if open_rate > 0 else 0)
    _, pending = await asyncio.wait(opening, timeout=budget)
    for task in pending:
        task.cancel()
        failures["open phase timed out"] += 1
    report.opened = len(sockets)
    report.open_seconds = time.monotonic() - started
    # What the opening built lives until the end: out of the collector's way, and no collection at
    # all while events arrive (this process's cycles are few; refcounting frees each event's
    # objects). With the collector on, young collections of the events' objects pause it for
    # 50-90 ms of wall time once or twice a posting on a busy machine, stamping the events behind
    # it late by as much.
    gc.collect()
    gc.freeze()
    gc.disable()
    own_pauses = _watch_own_pauses(report)
    report.open_failures = dict(failures)
    pipe.send(
        (
            "opened",
            report.opened,
            report.open_failures,
            report.open_seconds,
            report.refused_unavailable,
        )
    )

    # Hold until told to stop (bounded by our lifetime and our parent's).
    while not pipe.poll():
        if time.monotonic() - born > WORKER_MAX_LIFETIME or os.getppid() != parent:
            break
        await asyncio.sleep(0.1)
    with contextlib.suppress(EOFError, OSError):
        if pipe.poll():
            pipe.recv()

    stopping = True
    own_pauses.cancel()
    report.open_at_end = sum(
        1 for index, ws in sockets.items() if ws.state is State.OPEN and not readers[index].done()
    )
    report.live_at_end = sum(
        1
        for index, ws in sockets.items()
        if ws.state is State.OPEN and not readers[index].done() and index not in ended
    )
    report.ended = sorted(ended)
    report.closed_by_server = dict(closed)
    report.protocol_errors = dict(protocol_errors)

    async def close(ws: ClientConnection) -> None:
        async with gate:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 5)

    closers = [asyncio.create_task(close(ws)) for ws in sockets.values()]
    if closers:
        await asyncio.wait(closers, timeout=120)
    for task in readers.values():
        task.cancel()
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.send(("report", asdict(report)))


@dataclass
class SubscriberPool:
    """Subscriber processes holding one phase's subscriptions."""

    procs: list[BaseProcess] = field(default_factory=list)
    pipes: list[Connection] = field(default_factory=list)
    counters: list[Synchronized[int]] = field(default_factory=list)

    def start(
        self,
        ws_url: str,
        specs: Sequence[SubSpec],
        processes: int,
        concurrency: int = 96,
        open_rate: float = 0.0,
    ) -> None:
        """Spread ``specs`` over ``processes``; together they open at most ``concurrency``
        sockets at a time and, if ``open_rate`` > 0, at most that many per second."""
        ctx = multiprocessing.get_context("spawn")
        processes = max(1, min(processes, len(specs)))
        for n in range(processes):
            mine = list(specs[n::processes])
            parent_end, child_end = ctx.Pipe()
            counter: Synchronized[int] = ctx.Value("q", 0)
            proc = ctx.Process(
                target=subscriber_main,
                args=(
                    child_end,
                    ws_url,
                    mine,
                    max(4, concurrency // processes),
                    counter,
                    open_rate / processes,
                ),
                name=f"bench-subscriber-{n}",
                daemon=True,
            )
            proc.start()
            child_end.close()
            self.procs.append(proc)
            self.pipes.append(parent_end)
            self.counters.append(counter)

    async def wait_opened(self, timeout: float) -> tuple[int, dict[str, int], float, int]:
        """Subscriptions opened, failures, seconds taken, UNAVAILABLE refusals retried."""
        opened, failures, seconds, refused = 0, Counter[str](), 0.0, 0
        deadline = time.monotonic() + timeout
        for pipe, proc in zip(self.pipes, self.procs, strict=True):
            while not pipe.poll():
                if time.monotonic() > deadline or not proc.is_alive():
                    raise RuntimeError(f"{proc.name} did not report its subscriptions opened")
                await asyncio.sleep(0.2)
            _, count, failed, took, retried = pipe.recv()
            opened += count
            failures.update(failed)
            seconds = max(seconds, took)
            refused += retried
        return opened, dict(failures), seconds, refused

    def received(self) -> int:
        return sum(int(c.value) for c in self.counters)

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.pid is not None]

    async def stop(self, timeout: float = 180.0) -> WorkerReport:
        total = WorkerReport()
        for pipe in self.pipes:
            with contextlib.suppress(BrokenPipeError, OSError):
                pipe.send("stop")
        deadline = time.monotonic() + timeout
        for pipe, proc in zip(self.pipes, self.procs, strict=True):
            got: dict[str, Any] | None = None
            while time.monotonic() < deadline:
                with contextlib.suppress(EOFError, OSError):
                    if pipe.poll():
                        kind, payload = pipe.recv()
                        if kind == "report":
                            got = payload
                            break
                        continue
                if not proc.is_alive():
                    break
                await asyncio.sleep(0.1)
            if got is None:
                total.protocol_errors[f"{proc.name} sent no report"] = 1
                continue
            part = WorkerReport(**got)
            total.opened += part.opened
            total.open_at_end += part.open_at_end
            total.live_at_end += part.live_at_end
            total.other_events += part.other_events
            total.ended += part.ended
            total.arrivals += [tuple(a) for a in part.arrivals]  # type: ignore[misc]
            total.stalls += [tuple(s) for s in part.stalls]  # type: ignore[misc]
            for mine, theirs in (
                (total.closed_by_server, part.closed_by_server),
                (total.protocol_errors, part.protocol_errors),
                (total.open_failures, part.open_failures),
            ):
                for key, value in theirs.items():
                    mine[key] = mine.get(key, 0) + value
        self.kill()
        return total

    def kill(self) -> None:
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        for pipe in self.pipes:
            pipe.close()
        self.procs.clear()
        self.pipes.clear()
        self.counters.clear()


# --- the poster ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Room:
    index: int
    room_id: str
    guest_key: str


SLOW_ROUND_TRIP = 0.1
"""A ``postMessage`` round trip this long (seconds) is counted by when it started."""


@dataclass
class PostResult:
    key: str
    target: float
    started: float = math.nan
    returned: float = math.nan
    error: str | None = None


@dataclass
class Schedule:
    results: list[PostResult]
    began: float
    ended: float
    overshoot: list[float]
    """How late the poster's loop woke up for a send it slept towards (its own slowness)."""
    gate_wait: list[float]
    """How long each send waited for an in-flight slot (the server's slowness)."""


async def post_schedule(
    pool: Sequence[httpx.AsyncClient],
    jobs: Sequence[tuple[str, Room]],
    rate: float,
    max_inflight: int,
    budget: float,
) -> Schedule:
    """Send ``jobs`` as postMessage on a fixed timetable (job i at t0 + i/rate), never more
    than ``max_inflight`` at once, and stop sending once ``budget`` seconds have passed.

    ``pool`` is several small pooled clients used in turn: one httpx client with hundreds of
    connections spends milliseconds of CPU per request in its pool bookkeeping (measured:
    ~1 ms/request at 8 connections per client, 2-3 ms at 64-256), which would make this
    process, not the server, the limit."""
    bodies = [post_body(room.room_id, key, key) for key, room in jobs]
    headers = [
        {"Content-Type": "application/json", "X-Guest-Key": room.guest_key} for _, room in jobs
    ]
    gate = asyncio.Semaphore(max_inflight)
    tasks: set[asyncio.Task[None]] = set()
    results: list[PostResult] = []
    overshoot: list[float] = []
    gate_wait: list[float] = []

    async def send(
        http: httpx.AsyncClient, result: PostResult, body: bytes, head: dict[str, str]
    ) -> None:
        try:
            response = await http.post("/graphql", content=body, headers=head)
            result.returned = time.monotonic()
            if response.status_code != 200:
                result.error = f"HTTP {response.status_code}"
                return
            payload = json.loads(response.content)
            if payload.get("errors"):
                codes = {e.get("extensions", {}).get("code") for e in payload["errors"]}
                result.error = ",".join(sorted(str(c) for c in codes))
        except httpx.HTTPError as exc:
            result.error = type(exc).__name__
        finally:
            gate.release()

    began = time.monotonic() + 0.05
    hard_stop = began + budget
    for i, ((key, _room), body, head) in enumerate(zip(jobs, bodies, headers, strict=True)):
        target = began + i / rate
        delay = target - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        now = time.monotonic()
        if now > hard_stop:
            break
        if delay > 0:
            overshoot.append(max(0.0, now - target))
        if gate.locked():  # every slot in flight: the server is behind the timetable
            try:
                await asyncio.wait_for(gate.acquire(), max(0.01, hard_stop - now))
            except TimeoutError:
                break
        else:
            await gate.acquire()  # returns at once
        result = PostResult(key=key, target=target, started=time.monotonic())
        gate_wait.append(result.started - now)
        results.append(result)
        task = asyncio.create_task(send(pool[i % len(pool)], result, body, head))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(set(tasks), timeout=90)
    for task in list(tasks):
        task.cancel()
    return Schedule(results, began, time.monotonic(), overshoot, gate_wait)


# --- measuring -------------------------------------------------------------------------------


def _cpu(pid: int) -> float:
    with contextlib.suppress(psutil.Error):
        times = psutil.Process(pid).cpu_times()
        return float(times.user + times.system)
    return 0.0


@dataclass
class CpuWindow:
    """CPU seconds of the server, each bench client process, PostgreSQL + Redis, and the
    whole machine, at one instant."""

    server: float
    clients: dict[int, float]
    stores: dict[int, float]
    machine_busy: float
    wall: float

    @classmethod
    def take(cls, server: ServerProcess, client_pids: Sequence[int]) -> CpuWindow:
        stores: dict[int, float] = {}
        for proc in psutil.process_iter(["name"]):
            name = proc.info["name"] or ""
            if name.startswith(("postgres", "redis-server")):
                stores[proc.pid] = _cpu(proc.pid)
        machine = psutil.cpu_times()
        busy = float(sum(machine)) - machine.idle - getattr(machine, "iowait", 0.0)
        return cls(
            server=server.cpu_seconds(),
            clients={pid: _cpu(pid) for pid in client_pids},
            stores=stores,
            machine_busy=busy,
            wall=time.monotonic(),
        )

    def percent_since(self, before: CpuWindow) -> dict[str, Any]:
        wall = max(1e-9, self.wall - before.wall)
        each = [
            round(100 * (self.clients[pid] - before.clients.get(pid, 0.0)) / wall)
            for pid in self.clients
        ]
        return {
            "server": 100 * (self.server - before.server) / wall,
            "clients": float(sum(each)),
            "clients_each": each,
            # Processes that ended in between are missed; ones that started count from birth.
            "postgres_redis": 100
            * sum(cpu - before.stores.get(pid, 0.0) for pid, cpu in self.stores.items())
            / wall,
            "machine": 100 * (self.machine_busy - before.machine_busy) / wall,
            "seconds": wall,
        }


async def wait_quiet(server: ServerProcess, limit: float = 90.0, threshold: float = 10.0) -> None:
    """Poll (bounded) until the server's CPU stays under ``threshold`` % for a second."""
    assert server.ps is not None
    deadline = time.monotonic() + limit
    server.ps.cpu_percent(None)
    quiet = 0
    while time.monotonic() < deadline and quiet < 2:
        await asyncio.sleep(0.5)
        quiet = quiet + 1 if server.ps.cpu_percent(None) < threshold else 0


async def wait_received(pool: SubscriberPool, expected: int, limit: float) -> float:
    """Poll (bounded) until the subscribers have received ``expected`` events in total."""
    started = time.monotonic()
    for _ in range(int(limit / 0.05) + 1):
        if pool.received() >= expected or time.monotonic() - started >= limit:
            break
        await asyncio.sleep(0.05)
    return time.monotonic() - started


def delivery(
    schedule: Schedule,
    arrivals: Sequence[tuple[str, int, float]],
    specs_by_index: dict[int, SubSpec],
    prefix: str,
    ended: Sequence[int] = (),
) -> dict[str, Any]:
    """Join a phase's posts with their events: counts and latency percentiles.

    ``ended``: subscriptions the server ended before the phase; events expected to the still
    live ones are counted apart, so a missing event there is a delivery loss, not a dead
    subscription."""
    dead = set(ended)
    live_per_room = Counter(
        spec.room_index for spec in specs_by_index.values() if spec.index not in dead
    )
    returned = {r.key: r.returned for r in schedule.results if r.error is None}
    started = {r.key: r.started for r in schedule.results if r.error is None}
    ok_posts = len(returned)
    errors = Counter(r.error for r in schedule.results if r.error is not None)
    latencies: list[float] = []
    end_to_end: list[float] = []
    negatives = 0
    # Events that trailed their post's response by more than a slow round trip, by the second
    # the post started and by seat: a stall in the delivery path, apart from the posts' own
    late_seconds: Counter[int] = Counter()
    late_seats: Counter[str] = Counter()
    seen: set[tuple[str, int]] = set()
    duplicates = misrouted = unmatched = 0
    for body, index, arrived in arrivals:
        if not body.startswith(prefix):
            continue
        room_index = int(body.split(":")[2])
        if specs_by_index[index].room_index != room_index:
            misrouted += 1
        if (body, index) in seen:
            duplicates += 1
            continue
        seen.add((body, index))
        if body not in returned:
            unmatched += 1
            continue
        latency = arrived - returned[body]
        if latency < 0:
            negatives += 1
            latency = 0.0
        latencies.append(latency)
        end_to_end.append(arrived - started[body])
        if latency > SLOW_ROUND_TRIP:
            late_seconds[int(started[body] - schedule.began)] += 1
            late_seats[specs_by_index[index].who] += 1
    latencies.sort()
    end_to_end.sort()
    rtts = sorted(r.returned - r.started for r in schedule.results if r.error is None)
    # When the slow round trips happened: spread over the run (queueing) or bunched in a few
    # seconds (a stall: a pause, a checkpoint, a long round of some periodic work)
    slow_seconds = Counter(
        int(r.started - schedule.began)
        for r in schedule.results
        if r.error is None and r.returned - r.started > SLOW_ROUND_TRIP
    )
    sent = len(schedule.results)
    last_start = max((r.started for r in schedule.results), default=schedule.began)
    last_return = max((r.returned for r in schedule.results if r.error is None), default=math.nan)
    lags, waits = sorted(schedule.overshoot), sorted(schedule.gate_wait)
    slips = sorted(r.started - r.target for r in schedule.results)
    return {
        "sent": sent,
        "ok": ok_posts,
        "post_errors": dict(errors),
        "send_rate": sent / max(1e-9, last_start - schedule.began) if sent > 1 else math.nan,
        "completion_rate": ok_posts / max(1e-9, last_return - schedule.began)
        if ok_posts
        else math.nan,
        "events_expected": 2 * ok_posts,
        "events_expected_live": sum(
            live_per_room[int(key.split(":")[2])] for key in returned if key.startswith(prefix)
        ),
        "events_received": len(seen) - unmatched,
        "events_unmatched": unmatched,
        "duplicates": duplicates,
        "misrouted": misrouted,
        "negative_latencies": negatives,
        "latency_p50": percentile(latencies, 50),
        "latency_p90": percentile(latencies, 90),
        "latency_p99": percentile(latencies, 99),
        "latency_max": latencies[-1] if latencies else math.nan,
        "e2e_p50": percentile(end_to_end, 50),
        "e2e_p99": percentile(end_to_end, 99),
        "e2e_max": end_to_end[-1] if end_to_end else math.nan,
        "rtt_p50": percentile(rtts, 50),
        "rtt_p99": percentile(rtts, 99),
        "rtt_max": rtts[-1] if rtts else math.nan,
        "slow_by_second": sorted(slow_seconds.items()),
        "late_events_by_second": sorted(late_seconds.items()),
        "late_events_by_seat": dict(late_seats),
        # For --json: the phase's start (time.monotonic()), then every post's start (seconds
        # into the phase) and round trip, in order
        "began": schedule.began,
        "timeline": [
            (round(r.started - schedule.began, 4), round(r.returned - r.started, 4))
            for r in schedule.results
            if r.error is None
        ],
        "overshoot_p99": percentile(lags, 99),
        "gate_wait_p99": percentile(waits, 99),
        "slip_p50": percentile(slips, 50),
        "slip_p99": percentile(slips, 99),
        "subscriptions_delivering": len({index for _, index in seen}),
    }


def jobs_for(prefix: str, rooms: Sequence[Room], count: int) -> list[tuple[str, Room]]:
    """``count`` posts round robin over ``rooms``; body (and clientMessageId) ``prefix:seq:room``,
    so the prefix must be unique per phase (a repeated clientMessageId stores nothing)."""
    return [
        (f"{prefix}:{seq}:{rooms[seq % len(rooms)].index}", rooms[seq % len(rooms)])
        for seq in range(count)
    ]


def specs_for(rooms: Sequence[Room], host_init: dict[str, str]) -> list[SubSpec]:
    specs: list[SubSpec] = []
    for room in rooms:
        specs.append(SubSpec(len(specs), room.index, room.room_id, host_init, "host"))
        specs.append(
            SubSpec(len(specs), room.index, room.room_id, {"guestKey": room.guest_key}, "guest")
        )
    return specs


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Run:
    args: argparse.Namespace
    server: ServerProcess
    database_url: str | None = None
    host_init: dict[str, str] = field(default_factory=dict)
    rooms: list[Room] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    rss: dict[str, int] = field(default_factory=dict)

    def note_rss(self, label: str) -> int:
        value = self.server.rss()
        self.rss[label] = value
        print(f"  server RSS {label}: {value / 2**20:.1f} MiB", flush=True)
        return value

    async def setup(self) -> None:
        args = self.args
        count = args.subscriptions // 2
        started = time.monotonic()
        async with http_client(self.server.base_url, connections=args.setup_concurrency) as http:
            headers = await sign_up(http, HOST_HANDLE, "Bench Host")
            self.host_init = {"authorization": headers["Authorization"]}
            gate = asyncio.Semaphore(args.setup_concurrency)
            rooms: list[Room | None] = [None] * count

            async def visit(index: int) -> None:
                async with gate:
                    for attempt in range(3):
                        try:
                            # each guest from an address of its own, as distinct visitors are: a
                            # key's guest cap counts every key minted from its address, which from
                            # one address is every guest's posts
                            room_id, guest_key = await open_room(
                                http, HOST_HANDLE, {"X-Forwarded-For": visitor_address(index)}
                            )
                            break
                        except (httpx.HTTPError, RuntimeError):
                            if attempt == 2:
                                raise
                            await asyncio.sleep(0.5)
                    assert guest_key is not None, "an anonymous visit mints a guest key"
                    rooms[index] = Room(index, room_id, guest_key)

            await asyncio.wait_for(
                asyncio.gather(*(visit(i) for i in range(count))), timeout=max(300, count * 0.2)
            )
        self.rooms = [room for room in rooms if room is not None]
        took = time.monotonic() - started
        print(f"  {len(self.rooms)} rooms opened by distinct guests in {took:.1f}s", flush=True)
        self.figures["setup_seconds"] = took

    async def phase(
        self,
        name: str,
        rooms: Sequence[Room],
        rate: float,
        seconds: float,
        measure_memory: bool,
    ) -> dict[str, Any]:
        """Open two subscriptions per room, probe every room once, then post at ``rate``."""
        args = self.args
        specs = specs_for(rooms, self.host_init)
        by_index = {spec.index: spec for spec in specs}
        figures: dict[str, Any] = {"subscriptions": len(specs), "rooms": len(rooms), "rate": rate}
        pool = SubscriberPool()
        held = 0
        try:
            await wait_quiet(self.server)
            if measure_memory:
                self.note_rss("before subscriptions")
            connections_before = self.server.established()
            opening = time.monotonic()
            open_rate = args.open_rate if name == "main" else 0.0
            pool.start(self.server.ws_url, specs, args.sub_procs, open_rate=open_rate)
            opened, failures, took, refused = await pool.wait_opened(
                timeout=max(300.0, 0.2 * len(specs))
                + (len(specs) / open_rate if open_rate > 0 else 0)
            )
            await wait_quiet(self.server)  # the server is done with every subscribe's lookups
            figures.update(
                opened=opened,
                open_failures=failures,
                refused_unavailable=refused,
                open_seconds=took,
                server_busy_opening_seconds=time.monotonic() - opening - 1.0,
            )
            print(
                f"  [{name}] {opened}/{len(specs)} subscriptions opened in {took:.1f}s (server "
                f"busy with them for {figures['server_busy_opening_seconds']:.0f}s; "
                f"{refused} UNAVAILABLE refusals retried)"
                + (f"; failures: {failures}" if failures else ""),
                flush=True,
            )
            figures["server_established_held"] = self.server.established() - connections_before
            if measure_memory:
                held = self.note_rss("with subscriptions held")

            async with contextlib.AsyncExitStack() as stack:
                per_client = 8
                http = [
                    await stack.enter_async_context(
                        http_client(self.server.base_url, connections=per_client)
                    )
                    for _ in range(max(1, math.ceil(args.max_inflight / per_client)))
                ]
                # Probe: one message into every room; both of its subscriptions must see it.
                probe_rate = max(1.0, min(rate if name == "baseline" else args.probe_rate, 1e9))
                probe = await post_schedule(
                    http,
                    jobs_for(f"{name}-p", rooms, len(rooms)),
                    probe_rate,
                    args.max_inflight,
                    budget=len(rooms) / probe_rate + 120,
                )
                ok = sum(r.error is None for r in probe.results)
                await wait_received(pool, 2 * ok, args.drain_seconds + 10)
                if measure_memory:
                    self.note_rss("after one event per subscription")

                # Held, nothing posted: what holding costs on its own (pings, heartbeats,
                # re-checks, the collector), which every post's figure below carries a share of.
                await wait_quiet(self.server)
                clients = [os.getpid(), *pool.pids()]
                if args.idle_seconds > 0:
                    idle_from = CpuWindow.take(self.server, clients)
                    await asyncio.sleep(args.idle_seconds)
                    figures["cpu_idle"] = CpuWindow.take(self.server, clients).percent_since(
                        idle_from
                    )
                if args.warmup_seconds > 0 and name == "main":
                    # Posted at `rate` before the measured window and not measured: the
                    # connections and plans a steady load uses are warm when it begins.
                    warm_from = pool.received()
                    warm = await post_schedule(
                        http,
                        jobs_for(f"{name}-w", rooms, int(rate * args.warmup_seconds)),
                        rate,
                        args.max_inflight,
                        budget=args.warmup_seconds * 1.5 + 5,
                    )
                    await wait_received(
                        pool,
                        warm_from + 2 * sum(r.error is None for r in warm.results),
                        args.drain_seconds,
                    )
                # Load: a fixed timetable at `rate` for `seconds`.
                already = pool.received()
                waited_by = {
                    "servers": self.server.pids(),
                    "postgres": postgres_pids(),
                    "subscribers": pool.pids(),
                    "poster": [os.getpid()],
                }
                async with (
                    backend_census(self.database_url) as backends,
                    cpu_waits(waited_by) as waits,
                ):
                    before = CpuWindow.take(self.server, clients)
                    load = await post_schedule(
                        http,
                        jobs_for(f"{name}-m", rooms, int(rate * seconds)),
                        rate,
                        args.max_inflight,
                        budget=seconds * 1.5 + 5,
                    )
                    after = CpuWindow.take(self.server, clients)
                figures["pg_backends"] = dict(backends)
                figures["cpu_waits"] = waits.by_second(load.began, math.ceil(seconds))
                figures["posting"] = (load.began, load.ended)
                ok_load = sum(r.error is None for r in load.results)
                figures["drain_seconds"] = await wait_received(
                    pool, already + 2 * ok_load, args.drain_seconds
                )
            figures["cpu"] = after.percent_since(before)
            during = [p for p in self.server.gc_pauses() if before.wall <= p.at <= after.wall]
            full = [p.seconds for p in during if p.generation == 2]
            figures["gc_during_load"] = {
                "full_collections": len(full),
                "longest_full_ms": 1000 * max(full, default=0.0),
                "longest_ms": 1000 * max((p.seconds for p in during), default=0.0),
                "slow_collections": len(during),
                "paused_ms": 1000 * sum(p.seconds for p in during),
            }
            if measure_memory:
                self.note_rss("after load")
            await asyncio.sleep(0.5)
            figures["server_established_end"] = self.server.established() - connections_before
            report = await pool.stop()
            figures.update(
                open_at_end=report.open_at_end,
                live_at_end=report.live_at_end,
                other_events=report.other_events,
                closed_by_server=report.closed_by_server,
                protocol_errors=report.protocol_errors,
            )
            figures["ended"] = len(report.ended)
            figures["probe"] = delivery(probe, report.arrivals, by_index, f"{name}-p:")
            figures["load"] = delivery(load, report.arrivals, by_index, f"{name}-m:", report.ended)
            figures["client_stalls"] = [
                (round(at - load.began, 3), round(took, 3))
                for at, took in sorted(report.stalls)
                if load.began - 1 <= at <= load.ended + 1
            ]
            await asyncio.sleep(1.0)
            figures["server_established_after_close"] = (
                self.server.established() - connections_before
            )
            if measure_memory:
                self.note_rss("after subscriptions closed")
                before_subs = self.rss["before subscriptions"]
                per = 1024 * max(1, opened)
                figures["kib_per_subscription_idle"] = (held - before_subs) / per
                figures["kib_per_subscription_after_event"] = (
                    self.rss["after one event per subscription"] - before_subs
                ) / per
                figures["kib_per_subscription_after_load"] = (
                    self.rss["after load"] - before_subs
                ) / per
        finally:
            pool.kill()
        return figures


# --- output ----------------------------------------------------------------------------------


def print_phase(name: str, figures: dict[str, Any], args: argparse.Namespace) -> None:
    load = figures["load"]
    probe = figures["probe"]
    cpu = figures["cpu"]
    print(f"\n== {name}: {figures['subscriptions']} subscriptions over {figures['rooms']} rooms")
    print(
        f"  held at the end: {figures['live_at_end']}/{figures['subscriptions']} live "
        f"subscriptions on {figures['open_at_end']} open sockets "
        f"(server-side established delta {figures['server_established_end']}, after close "
        f"{figures['server_established_after_close']})"
    )
    print(
        f"  probe (one message per room): {probe['events_received']}/{probe['events_expected']} "
        f"events; {probe['subscriptions_delivering']} subscriptions delivered"
    )
    print(
        f"  messages: {load['sent']} sent, {load['ok']} ok at target {figures['rate']:.0f}/s; "
        f"achieved send rate {load['send_rate']:.1f}/s, completion rate "
        f"{load['completion_rate']:.1f}/s"
        + (f"; errors {load['post_errors']}" if load["post_errors"] else "")
    )
    print(
        f"  events: expected {load['events_expected']} ({load['events_expected_live']} to "
        f"subscriptions still live), received {load['events_received']}, "
        f"duplicates {load['duplicates']}, misrouted {load['misrouted']}, "
        f"negative latencies clamped {load['negative_latencies']}"
    )
    print(
        f"  latency postMessage-return -> event (ms): p50 {ms(load['latency_p50'])} "
        f"p90 {ms(load['latency_p90'])} p99 {ms(load['latency_p99'])} "
        f"max {ms(load['latency_max'])}"
    )
    print(
        f"  end to end, postMessage sent -> event (ms): p50 {ms(load['e2e_p50'])} "
        f"p99 {ms(load['e2e_p99'])} max {ms(load['e2e_max'])}"
    )
    print(
        f"  postMessage round trip (ms): p50 {ms(load['rtt_p50'])} p99 {ms(load['rtt_p99'])} "
        f"max {ms(load['rtt_max'])}; over {SLOW_ROUND_TRIP * 1000:.0f} ms, by second of the "
        f"posting (second: count): {load['slow_by_second']}"
    )
    print(
        f"  events over {SLOW_ROUND_TRIP * 1000:.0f} ms after their post's return, by second "
        f"of the posting: {load['late_events_by_second']}; by seat: "
        f"{load['late_events_by_seat']}"
    )
    print(
        f"  CPU during posting ({cpu['seconds']:.1f}s): server {cpu['server']:.0f}%, "
        f"bench clients {cpu['clients']:.0f}% (per process {cpu['clients_each']}), "
        f"postgres+redis {cpu['postgres_redis']:.0f}% (processes alive at both ends), "
        f"machine {cpu['machine']:.0f}% of {100 * (os.cpu_count() or 1)}%, of which beyond "
        f"the server and the clients {cpu['machine'] - cpu['server'] - cpu['clients']:.0f}% "
        "(PostgreSQL's backends that came and went included)"
    )
    print_waits(
        figures.get("cpu_waits") or [], load["slow_by_second"], load["late_events_by_second"]
    )
    stalls = figures.get("client_stalls") or []
    print(
        f"  the subscriber processes' own pauses over {CLIENT_STALL * 1000:.0f} ms during the "
        "posting (seconds into it, ms): "
        + (", ".join(f"{at:.1f} s {took * 1000:.0f}" for at, took in stalls) or "none")
    )
    backends = figures.get("pg_backends")
    if backends:
        print(
            f"  PostgreSQL backends during posting: {backends.get('distinct', 0)} distinct, "
            f"{backends['at_start']} at its start (more than at its start: connections were "
            "opened during the posting)"
        )
    idle = figures.get("cpu_idle")
    if idle:
        print(
            f"  CPU held idle ({idle['seconds']:.1f}s, nothing posted): server "
            f"{idle['server']:.1f}%, postgres+redis {idle['postgres_redis']:.1f}%"
        )
    if load["ok"]:
        per_post = cpu["server"] / 100 * cpu["seconds"] / load["ok"] * 1000
        print(
            f"  server CPU per delivered postMessage (with its 2 events): {per_post:.1f} ms "
            f"-> at most ~{1000 / per_post:.0f} msg/s on one core"
        )
        if idle:
            beyond = (cpu["server"] - idle["server"]) / 100 * cpu["seconds"] / load["ok"] * 1000
            print(f"    of which beyond the idle hold's own CPU: {beyond:.1f} ms")
    print(
        f"  poster: behind its timetable p50 {ms(load['slip_p50'])} / p99 {ms(load['slip_p99'])}"
        f" ms, of which its own loop's lateness p99 {ms(load['overshoot_p99'])} ms and waits "
        f"for one of {args.max_inflight} in-flight slots p99 {ms(load['gate_wait_p99'])} ms"
    )
    gc_load = figures.get("gc_during_load")
    if gc_load and not args.no_gc_log:
        print(
            f"  server GC during posting: {gc_load['full_collections']} full collections "
            f"(longest {gc_load['longest_full_ms']:.0f} ms), {gc_load['slow_collections']} "
            f"collections >= 20 ms or full (longest {gc_load.get('longest_ms', 0.0):.0f} ms), "
            f"{gc_load['paused_ms']:.0f} ms paused in all"
        )
    if "kib_per_subscription_idle" in figures:
        print(
            f"  server memory per subscription: {figures['kib_per_subscription_idle']:.1f} KiB "
            f"held idle, {figures['kib_per_subscription_after_event']:.1f} KiB after one event "
            f"each, {figures['kib_per_subscription_after_load']:.1f} KiB after the load"
        )
    if figures.get("other_events"):
        print(f"  pane events other than messages (ignored): {figures['other_events']}")
    if figures["closed_by_server"] or figures["protocol_errors"]:
        print(f"  closed by server: {figures['closed_by_server']}")
        print(f"  protocol errors: {figures['protocol_errors']}")


def print_waits(
    rows: Sequence[dict[str, float]],
    slow: Sequence[tuple[int, int]],
    late: Sequence[tuple[int, int]] = (),
) -> None:
    """Each slow second's waits for a CPU (``bench/_waits.py``) beside the other seconds'
    median: a stall whose server processes waited for a core is the machine's contention; one
    whose processes did not wait is the code, or something it waited on."""
    if not rows:
        return
    # a second with more than five posts over a slow round trip, or events that late
    slow_seconds = {second for second, count in [*slow, *late] if count > 5}

    def line(row: dict[str, float]) -> str:
        pressure, busy = row.get("pressure_ms"), row.get("machine_busy_ms")
        at_once = row.get("postgres_at_once")
        return (
            f"servers ran {row['servers_ran_ms']:.0f} waited {row['servers_waited_ms']:.0f}, "
            f"PostgreSQL ran {row['postgres_ran_ms']:.0f} waited {row['postgres_waited_ms']:.0f}"
            + (f" ({at_once:.0f} processes busy at once at most)" if at_once is not None else "")
            + f", subscribers ran {row['subscribers_ran_ms']:.0f} "
            f"waited {row['subscribers_waited_ms']:.0f}, poster ran {row['poster_ran_ms']:.0f} "
            f"waited {row['poster_waited_ms']:.0f}"
            + (f", some task waiting {pressure:.0f}" if pressure is not None else "")
            + (f", machine busy {busy:.0f} (all CPUs)" if busy is not None else "")
        )

    others = [row for row in rows if int(row["second"]) not in slow_seconds]
    if others:
        median = {
            key: statistics.median(row[key] for row in others)
            for key in others[0]
            if all(key in row for row in others)
        }
        quiet = f"median of {len(others)} seconds without a stall"
        print(f"  CPU ms a second ({quiet}): {line(median)}")
    for row in rows:
        if int(row["second"]) in slow_seconds:
            print(f"    stalled second {int(row['second'])}: {line(row)}")


def bottlenecks(figures: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """Say who limited the run, from what was measured."""
    cpus = os.cpu_count() or 1
    load, cpu = figures["load"], figures["cpu"]
    found = []
    if cpu["server"] >= 85:
        found.append(
            f"server CPU-bound: {cpu['server']:.0f}% of one core (one Python process, one event "
            "loop, can use one core)"
        )
    if any(each >= 85 for each in cpu["clients_each"]) or load["overshoot_p99"] > 0.02:
        found.append(
            "bench client limited: a client process near a full core or the poster's loop "
            f"> 20 ms late (per-process CPU {cpu['clients_each']}, lateness p99 "
            f"{ms(load['overshoot_p99'])} ms)"
        )
    if cpu["machine"] >= 90 * cpus:
        found.append(
            f"machine saturated: {cpu['machine']:.0f}% of {100 * cpus}% busy; server, bench "
            "clients and the stores share the cores"
        )
    if load["gate_wait_p99"] > 0.01 or load["completion_rate"] < 0.95 * figures["rate"]:
        found.append(
            f"server throughput below the offered rate: completed {load['completion_rate']:.0f}"
            f"/s of {figures['rate']:.0f}/s; sends waited for one of {args.max_inflight} "
            "in-flight slots"
        )
    return found


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    raise_nofile_limit(args.subscriptions + 4096)
    data_dir = Path(tempfile.mkdtemp(prefix="dealroom-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALROOM_")}
    # DEALROOM_DEMO=0: the first-run demo seed would add an account and startup work.
    env.update(DEALROOM_DATA_DIR=str(data_dir), DEALROOM_LOG_FORMAT="console", DEALROOM_DEMO="0")
    env.update(UNTHROTTLED_ENV)
    # No access log, as floor.py's servers and its floor apps (the yardstick this run's rate is set
    # from): uvicorn's line per post is about 1.3 % of the servers' CPU. --server-env
    # DEALROOM_ACCESS_LOG=true puts it back.
    env["DEALROOM_ACCESS_LOG"] = "false"
    # Agent workers off by default, as bench/floor.py's servers: what is measured is the
    # message path (post, publish, fan-out), not the turns each guest line queues
    # (bench/turns.py measures those).
    env["DEALROOM_WORKERS"] = str(args.agent_workers)
    for setting in args.server_env:
        name, _, value = setting.partition("=")
        env[name] = value
    rooms = max(1, args.subscriptions // 2)
    # Keep the server's per-pane rate limit out of the way only if this run would hit it.
    per_pane_per_minute = math.ceil(args.rate / rooms * 60) + 4
    if per_pane_per_minute > 50:
        env["DEALROOM_POSTS_PER_MINUTE"] = str(per_pane_per_minute * 2)
    database_url: str | None = None
    server: ServerProcess | None = None
    result: dict[str, Any] = {"args": vars(args), "machine": machine_summary()}
    stand_in = contextlib.AsyncExitStack()
    try:
        if args.backend == "redis":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench")
            env.update(DEALROOM_DATABASE_URL=database_url, DEALROOM_REDIS_URL=args.redis_url)
            migrate(env)
            result["statistics"] = await stand_in.enter_async_context(
                autovacuum_stand_in(
                    database_url,
                    every=args.analyze_every,
                    whole_database=args.analyze_whole_database,
                )
            )
        server = ServerProcess(
            env=env,
            port=free_port(),
            log_dir=data_dir,
            profile=args.server_profile,
            gc_log=not args.no_gc_log,
            # embedded: one process (the in-process broker); Redis: serve's default unless set
            processes=args.processes or (1 if args.backend == "embedded" else None),
        )
        server.start()
        result["other_pytest_at_start"] = other_test_runs()
        print(
            f"server pids {server.pids()} on {server.base_url} "
            f"({args.backend}); logs in {data_dir}",
            flush=True,
        )
        run = Run(args, server, database_url)
        run.note_rss("at start")
        await run.setup()
        run.note_rss("after setup")

        baseline_rooms = run.rooms[: BASELINE_SUBSCRIPTIONS // 2]
        if args.baseline_seconds > 0:
            print(
                f"baseline: {len(baseline_rooms) * 2} subscriptions, {BASELINE_RATE:.0f} msg/s",
                flush=True,
            )
            result["baseline"] = await run.phase(
                "baseline", baseline_rooms, BASELINE_RATE, args.baseline_seconds, False
            )
        print(f"main: {len(run.rooms) * 2} subscriptions, {args.rate:.0f} msg/s", flush=True)
        result["main"] = await run.phase("main", run.rooms, args.rate, args.seconds, True)
        result["setup_seconds"] = run.figures["setup_seconds"]
        result["rss"] = run.rss
        result["other_pytest_at_end"] = other_test_runs()
    finally:
        if server is not None:
            result["server_exit"] = server.stop()
            result["server_problems"] = server.problems()
            result["gc_pauses"] = [
                (p.at, p.generation, p.seconds)
                for p in server.gc_pauses()
                if p.at >= server.serving_since  # not start-up's, before any request
            ]
            result["server_alive_until_stop"] = result["server_exit"] in (0, -signal.SIGTERM)
        await stand_in.aclose()
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        if not args.keep_logs:
            remove_tree(data_dir)
    return result


def report(result: dict[str, Any], args: argparse.Namespace) -> None:
    print("\n" + "\n".join(result["machine"]))
    print(
        f"backend {args.backend}; command: {' '.join(sys.argv)}; "
        f"pytest processes at start/end: {result.get('other_pytest_at_start')}/"
        f"{result.get('other_pytest_at_end')}"
    )
    statistics = result.get("statistics")
    if statistics is not None:
        print(
            f"PostgreSQL autovacuum {statistics['autovacuum']}; "
            f"ANALYZE run {statistics['analyzed']} times by the benchmark in its stead "
            f"(every {args.analyze_every:g} s, each of {statistics['takes']})"
        )
    if "baseline" in result:
        print_phase("baseline", result["baseline"], args)
    main = result["main"]
    print_phase("main", main, args)
    if statistics is not None and "posting" in main:
        began, ended = main["posting"]
        during = [
            f"{at - began:.1f} s ({1000 * took:.0f} ms, {1000 * cpu:.0f} ms CPU: "
            f"{' '.join(table.removeprefix('public.') for table in tables) or 'all'})"
            for at, took, cpu, tables in statistics["runs"]
            if began - took <= at <= ended
        ]
        print(f"  the benchmark's ANALYZE during the posting, from its start: {during}")
    base = result.get("baseline", {}).get("load")
    if base:
        load = main["load"]

        def ratio(key: str) -> str:
            low, high = base[key], load[key]
            if math.isnan(low) or low < 0.0005:  # too close to 0 for a ratio
                return f"{ms(high)} vs {ms(low)} ms"
            return f"{high / low:.1f}x ({ms(high)} vs {ms(low)} ms)"

        print(
            f"\n  main / baseline: return->event p50 {ratio('latency_p50')}, p99 "
            f"{ratio('latency_p99')}; send->event p99 {ratio('e2e_p99')}; round trip p99 "
            f"{ratio('rtt_p99')}"
        )
    found = bottlenecks(main, args)
    print("\n  bottleneck: " + ("; ".join(found) if found else "none detected"))
    pauses = result.get("gc_pauses", [])
    if pauses:
        full = [p for p in pauses if p[1] == 2]
        print(
            f"  server GC over the whole run (once serving): {len(full)} full collections, "
            f"longest {1000 * max((p[2] for p in full), default=0.0):.0f} ms; longest pause "
            f"of any generation {1000 * max(p[2] for p in pauses):.0f} ms, "
            f"{sum(p[2] >= 0.05 for p in pauses)} over 50 ms; every socket waits meanwhile"
        )
    count, lines = result.get("server_problems", (0, []))
    print(f"  server stderr: {count} lines mention error/exception/warning")
    for line in lines:
        print(f"    {line}")
    load = main["load"]
    # The target: 75% of the Core floor's throughput on this machine, about 375 msg/s on 2 cores
    at_rate = load["completion_rate"] >= 0.95 * 375 and args.rate >= 375
    gc_load = main.get("gc_during_load") or {}
    targets = [
        (
            "5,000 subscriptions held",
            main["live_at_end"] >= 5000,
            f"({main['live_at_end']} live on {main['open_at_end']} open sockets)",
        ),
        (
            "p99 send -> event <= 100 ms at 375 msg/s",
            at_rate and load["e2e_p99"] <= 0.1,
            f"(send->event p99 {ms(load['e2e_p99'])} ms, return->event "
            f"{ms(load['latency_p99'])} ms, at {load['completion_rate']:.0f} msg/s completed)",
        ),
        (
            "no GC pause over 50 ms while posting",
            bool(gc_load) and gc_load.get("longest_ms", 0.0) <= 50,
            f"(longest {gc_load.get('longest_ms', 0.0):.0f} ms)" if gc_load else "(not logged)",
        ),
        (
            "<= 48 KiB server memory per subscription",
            main["kib_per_subscription_idle"] <= 48,
            f"({main['kib_per_subscription_idle']:.1f} KiB held idle)",
        ),
    ]
    for label, met, detail in targets:
        print(f"  target {label}: {'met' if met else 'NOT met'} {detail}".rstrip())


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("embedded", "redis"), default="embedded")
    parser.add_argument("--subscriptions", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=500.0, help="messages/s aggregate")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--baseline-seconds", type=float, default=10.0, help="0 skips it")
    parser.add_argument("--sub-procs", type=int, default=1, help="subscriber processes")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the server (repeatable), e.g. DEALROOM_GC_YOUNG_THRESHOLD=700",
    )
    parser.add_argument(
        "--agent-workers",
        type=int,
        default=0,
        help="DEALROOM_WORKERS per server process (default 0: the message path alone)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        help="dealroom serve --processes N (default: serve's own, one per core with Redis)",
    )
    parser.add_argument(
        "--open-rate",
        type=float,
        default=0.0,
        help="subscriptions opened per second (0: as fast as 96 concurrent handshakes go)",
    )
    parser.add_argument("--max-inflight", type=int, default=256, help="postMessage in flight")
    parser.add_argument("--probe-rate", type=float, default=250.0)
    parser.add_argument("--drain-seconds", type=float, default=30.0)
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=10.0,
        help="server CPU measured this long with every subscription held and nothing posted",
    )
    parser.add_argument("--setup-concurrency", type=int, default=16)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    parser.add_argument(
        "--warmup-seconds",
        type=float,
        default=0.0,
        help="post at --rate this long before the measured posting, unmeasured (default 0: "
        "the posting starts cold, after the idle hold)",
    )
    parser.add_argument(
        "--analyze-every",
        type=float,
        default=10.0,
        help="seconds between the benchmark's visits, each an ANALYZE of the tables changed "
        "enough, standing in for autovacuum where it is off (default 10; autovacuum visits a "
        "database every autovacuum_naptime, 60 s by default)",
    )
    parser.add_argument(
        "--analyze-whole-database",
        action="store_true",
        help="each of the benchmark's ANALYZEs takes the whole database at full speed, system "
        "catalogs included (as until 2026-12-04), in place of the tables autovacuum would take",
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the server's logs")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--no-gc-log",
        action="store_true",
        help="run dealroom serve directly (default: through a wrapper that logs GC pauses)",
    )
    parser.add_argument(
        "--server-profile",
        type=Path,
        help="run the server under cProfile (slower!) and write its stats here",
    )
    args = parser.parse_args(argv)
    if args.subscriptions < 2 or args.rate <= 0 or args.seconds <= 0:
        parser.error("need --subscriptions >= 2, --rate > 0, --seconds > 0")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prepare_run(args.wait_idle)
    result = asyncio.run(main_async(args))
    report(result, args)
    if args.server_profile and args.server_profile.exists():
        print("\n" + "\n".join(profile_summary(args.server_profile)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
