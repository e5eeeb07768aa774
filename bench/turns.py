"""Agent-turn orchestration benchmark: with a zero-latency model, how long does the pipeline
itself take per run, and how many turns per second does one process complete?

Targets (issue): per-turn orchestration overhead p50 <= 15 ms, >= 100 turns/s on 2 cores.

The model is :class:`ZeroClient`: it answers every request at once with a fixed valid output
for the request's schema (persona: a short reply, no sends, no goal rulings, a plan; Distil:
one ``set`` change under the pane's own branch; context filter: no paths), streamed in a few
chunks, with usage estimated like the offline engine. No rules, no network, no sleep: what is
measured is the turn pipeline (claim, context load, prompt rendering, ledger, apply, publish)
and the database.

Three measurements on each backend (SQLite in a temporary file with the in-process broker;
PostgreSQL in a throwaway database with Redis):

(a) per run: visitors post over HTTP (in-process uvicorn, workers=0 so nothing runs on its
    own), then ``runner.run_once()`` is called one run at a time and timed: wall time, the
    part spent claiming, SQL statements and transactions (a ``before_cursor_execute`` and a
    ``begin`` listener on the engine). A turn = the persona run + the Distil run of one
    posted message.
(b) throughput: N rooms x M messages. "drain": all messages posted first (workers idle), then
    a runner with ``--workers`` workers started and timed until no run is outstanding. "live":
    a second app with ``--workers`` workers (the real wiring) while N guests post over HTTP
    concurrently into the same process; timed from the first post until every run is done.
(c) baselines in the same run: an empty unit of work (``SELECT 1`` in its own transaction),
    a claim that finds nothing, and ``postMessage`` over HTTP; ratios are printed.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import itertools
import json
import secrets
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    UNTHROTTLED,
    autovacuum_stand_in,
    create_pg_database,
    drop_pg_database,
    http_client,
    machine_summary,
    open_room,
    other_test_runs,
    percentile,
    post_body,
    prepare_run,
    profile_summary,
    remove_tree,
    sign_up,
    visitor_address,
    wait_until_no_tests,
)
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from dealroom.agents.context_filter import FilterOutput
from dealroom.agents.distil import Change, DistilOutput
from dealroom.agents.models.base import (
    AgentName,
    Chunk,
    Generation,
    ModelRequest,
    Usage,
    estimate_tokens,
    parse_output,
)
from dealroom.agents.persona import PersonaOutput
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.domain.seats import RoomKind
from dealroom.jobs.distil import DistilTurn
from dealroom.jobs.handler import Handler
from dealroom.jobs.persona import PersonaTurn
from dealroom.jobs.runner import TurnRunner
from dealroom.jobs.wiring import create_runner
from dealroom.persistence import raw_lane
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.runs import RunRepository
from dealroom.realtime import Broker, create_broker
from dealroom.server import BackgroundServer, start_in_background
from dealroom.services.clock import SystemClock
from dealroom.services.turns.context import RunSnapshot, TurnContext
from dealroom.services.turns.ledger import CallSite

HOST_HANDLE = "turnbenchhost"
STREAM_CHUNKS = 4
"""The zero-latency stream splits its JSON in this many chunks (a real stream has several)."""


# --- the zero-latency model -------------------------------------------------------------------


class ZeroClient:
    """A ``ModelClient`` that answers instantly with a fixed valid output per schema."""

    engine: str = "bench-zero"

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self._filter = FilterOutput(paths=[]).model_dump_json()

    def _text(self, request: ModelRequest) -> str:
        self.calls[request.agent.value] += 1
        count = self.calls.total()
        if request.output is PersonaOutput:
            # A new plan each turn, as a model's would be: the room's memory row is rewritten.
            return PersonaOutput(
                reply="Thanks, noted. Which date works best for you?",
                plan=f"ask for the date; then confirm the deliverable (call {count})",
            ).model_dump_json()
        if request.output is DistilOutput:
            # One change a call, under the pane's own branch (writable in both room kinds),
            # with a new value each time so the room's memory row really changes.
            pane = str(request.context.get("pane") or "host")
            change = Change(op="set", path=f"{pane}.bench_note", value=f"note {count}")
            return DistilOutput(changes=[change]).model_dump_json()
        if request.output is FilterOutput:
            return self._filter
        raise ValueError(f"no fixed output for {request.output.__name__}")

    @staticmethod
    def _usage(request: ModelRequest, text: str) -> Usage:
        return Usage(estimate_tokens(request.text), estimate_tokens(text), 0)

    async def generate(self, request: ModelRequest) -> Generation:
        text = self._text(request)
        return Generation(
            output=parse_output(request, text),
            text=text,
            usage=self._usage(request, text),
            model=request.model,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        text = self._text(request)
        size = -(-len(text) // STREAM_CHUNKS)
        for start in range(0, len(text), size):
            yield Chunk(text[start : start + size])
        yield Chunk("", usage=self._usage(request, text))

    async def close(self) -> None:
        return None


# --- counting SQL ------------------------------------------------------------------------------


@dataclass
class SqlProbe:
    """Every statement and transaction the engine starts while ``recording``."""

    engine: AsyncEngine
    statements: list[str] = field(default_factory=list)
    lanes: list[bool] = field(default_factory=list)
    """For each statement: whether it ran on the raw lane (no cursor)."""
    transactions: int = 0
    recording: bool = False

    def _statement(self, _conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        if self.recording:
            self.statements.append(" ".join(statement.split()))
            self.lanes.append(cursor is None)

    def _begin(self, _conn: Any) -> None:
        if self.recording:
            self.transactions += 1

    def __enter__(self) -> SqlProbe:
        event.listen(self.engine.sync_engine, "before_cursor_execute", self._statement)
        event.listen(self.engine.sync_engine, "begin", self._begin)
        return self

    def __exit__(self, *_exc: object) -> None:
        event.remove(self.engine.sync_engine, "before_cursor_execute", self._statement)
        event.remove(self.engine.sync_engine, "begin", self._begin)

    def start(self) -> None:
        self.statements = []
        self.lanes = []
        self.transactions = 0
        self.recording = True

    def stop(self) -> None:
        self.recording = False


def is_query(statement: str) -> bool:
    """Not transaction control (SQLite's BEGIN IMMEDIATE is the only one the listener sees)."""
    return not statement.upper().startswith(("BEGIN", "PRAGMA", "COMMIT", "ROLLBACK"))


def is_claim_scan(statement: str) -> bool:
    """The claim's scan for a due run: one per claim attempt (the ``SKIP LOCKED`` candidate
    with its pane's lock on PostgreSQL, the claim's ``UPDATE … RETURNING`` itself on
    SQLite)."""
    return (
        statement.startswith(("WITH candidate_oldest_queued AS ", "UPDATE agent_runs SET status="))
        and "not_before <=" in statement
        and "LIMIT" in statement
    )


def shape(statement: str) -> str:
    """A statement with its column list folded, for a readable summary."""
    upper = statement.upper()
    if upper.startswith("SELECT") and " FROM " in upper:
        head, rest = statement.split(" FROM ", 1)
        columns = head.count(",") + 1
        return f"SELECT <{columns} cols> FROM {rest}"
    return statement


# --- one run at a time -----------------------------------------------------------------------


@dataclass
class RunFigure:
    agent: str
    message_id: uuid.UUID | None
    seconds: float
    cpu_seconds: float
    """This process's CPU over the run (``time.process_time``): steadier than the wall time
    on a busy machine, and what A/B pairs compare."""
    statements: int
    queries: int
    transactions: int
    segments: dict[str, float]
    """Seconds per phase of the run (claim, load, render, ...), see ``Probe.mark``."""
    segment_statements: dict[str, int]
    sample: list[str]
    sample_lanes: list[bool] = field(default_factory=list)
    lane: bool = True
    """Whether the raw lane was on (``--lane-ab``)."""

    @property
    def claim_statements(self) -> int:
        return self.segment_statements.get("claim", 0)


@dataclass
class Probe:
    """Marks the phases of the run inside ``run_once``: each mark names the phase that
    starts there; a phase ends at the next mark."""

    sql: SqlProbe
    agent: str = ""
    message_id: uuid.UUID | None = None
    marks: list[tuple[str, float, int]] = field(default_factory=list)

    def reset(self) -> None:
        self.agent, self.message_id, self.marks = "", None, []

    def mark(self, phase: str) -> None:
        self.marks.append((phase, time.perf_counter(), len(self.sql.statements)))

    def segments(self) -> tuple[dict[str, float], dict[str, int]]:
        seconds: dict[str, float] = {}
        statements: dict[str, int] = {}
        pairs = zip(self.marks, self.marks[1:], strict=False)
        for (phase, at, index), (_next, until, end) in pairs:
            seconds[phase] = seconds.get(phase, 0.0) + until - at
            statements[phase] = statements.get(phase, 0) + end - index
        return seconds, statements

    def wrap(self, handler: Handler, first_phase: str) -> Handler:
        async def run(snapshot: RunSnapshot) -> None:
            self.agent = snapshot.agent
            self.message_id = snapshot.trigger_message_id
            self.mark(first_phase)
            await handler(snapshot)

        return run


class TimedPersonaTurn(PersonaTurn):
    """The persona handler as shipped, with phase marks around its steps."""

    def __init__(self, runner: TurnRunner, probe: Probe) -> None:
        super().__init__(runner.deps)
        self.probe = probe

    async def request(self, run: RunSnapshot, ctx: TurnContext, site: CallSite) -> ModelRequest:
        self.probe.mark("render (+filter)")
        try:
            return await super().request(run, ctx, site)
        finally:
            self.probe.mark("model stream + publish")

    async def _apply(
        self,
        run: RunSnapshot,
        ctx: TurnContext,
        output: PersonaOutput,
        message_id: uuid.UUID,
        site: CallSite,
    ) -> None:
        self.probe.mark("apply (+publish)")
        try:
            await super()._apply(run, ctx, output, message_id, site)
        finally:
            self.probe.mark("after")


class TimedDistilTurn(DistilTurn):
    """The Distil handler as shipped, with phase marks around its steps."""

    def __init__(self, runner: TurnRunner, probe: Probe) -> None:
        super().__init__(runner.deps)
        self.probe = probe

    async def _take(self, run: RunSnapshot) -> tuple[int, TurnContext | None] | None:
        try:
            return await super()._take(run)
        finally:
            self.probe.mark("render + model")

    async def _apply(
        self,
        run: RunSnapshot,
        token: int,
        pane: str,
        kind: RoomKind,
        output: DistilOutput,
        site: CallSite,
        **options: Any,
    ) -> None:
        self.probe.mark("apply")
        try:
            await super()._apply(run, token, pane, kind, output, site, **options)
        finally:
            self.probe.mark("between")


PHASES = {
    "persona": ["claim", "load", "render (+filter)", "model stream + publish", "apply (+publish)"],
    "distil": ["claim", "lease + load", "render + model", "apply"],
}


async def timed_run_once(
    runner: TurnRunner, probe: Probe, profiler: cProfile.Profile | None = None
) -> RunFigure:
    probe.reset()
    probe.sql.start()
    if profiler is not None:
        profiler.enable()
    started, cpu = time.perf_counter(), time.process_time()
    probe.mark("claim")
    ran = await runner.run_once()
    probe.mark("end")
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    if profiler is not None:
        profiler.disable()
    probe.sql.stop()
    statements = list(probe.sql.statements)
    seconds, counts = probe.segments()
    return RunFigure(
        agent=probe.agent if ran else "(none due)",
        message_id=probe.message_id,
        seconds=took,
        cpu_seconds=cpu,
        statements=len(statements),
        queries=sum(map(is_query, statements)),
        transactions=probe.sql.transactions,
        segments=seconds,
        segment_statements=counts,
        sample=statements,
        sample_lanes=list(probe.sql.lanes),
    )


# --- HTTP helpers -----------------------------------------------------------------------------


@dataclass
class Room:
    room_id: str
    headers: dict[str, str]


VISITORS = itertools.count()
"""Each guest's client address (``visitor_address``), distinct across the run's phases."""


async def open_rooms(http: httpx.AsyncClient, count: int) -> list[Room]:
    found = []
    for _ in range(count):
        address = visitor_address(next(VISITORS))
        room_id, guest_key = await open_room(http, HOST_HANDLE, {"X-Forwarded-For": address})
        assert guest_key is not None
        found.append(Room(room_id, {"X-Guest-Key": guest_key}))
    return found


async def post(http: httpx.AsyncClient, room: Room, body: str) -> float:
    """postMessage as the room's guest; returns the round trip in seconds. A request that
    fails in transport (a keep-alive connection the server closed as it was reused) is sent
    again with the same clientMessageId, which the server deduplicates."""
    content = post_body(room.room_id, body, secrets.token_hex(8))
    headers = {"Content-Type": "application/json", **room.headers}
    for attempt in range(3):
        started = time.perf_counter()
        try:
            response = await http.post("/graphql", content=content, headers=headers)
        except httpx.TransportError:
            if attempt == 2:
                raise
            continue
        took = time.perf_counter() - started
        payload = response.json()
        if response.status_code != 200 or payload.get("errors"):
            raise RuntimeError(f"postMessage failed: {response.status_code} {payload}")
        return took
    raise AssertionError("unreachable")


def message_text(room: int, n: int) -> str:
    topics = (
        "Hi! We are planning a spring campaign and would love to work with you.",
        "Could you tell me what a sponsored post usually includes?",
        "Our audience is mostly runners in their twenties and thirties.",
        "Would a date in the second half of March work for you?",
        "Do you also do stories, or only feed posts?",
        "Great, thanks. What else do you need from us to move forward?",
    )
    return f"{topics[n % len(topics)]} (room {room}, message {n})"


async def outstanding(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    db = Db(sessionmaker)
    try:
        return await RunRepository(db).outstanding(SystemClock().now())
    finally:
        await db.close()


async def wait_all_done(
    sessionmaker: async_sessionmaker[AsyncSession], timeout: float, poll: float = 0.05
) -> float:
    """Poll until no run is running or due; returns the monotonic time it was seen so."""
    deadline = time.monotonic() + timeout
    while True:
        if await outstanding(sessionmaker) == 0:
            return time.monotonic()
        if time.monotonic() > deadline:
            raise TimeoutError(f"runs still outstanding after {timeout:.0f}s")
        await asyncio.sleep(poll)


# --- the phases -------------------------------------------------------------------------------


@dataclass
class Backend:
    name: str
    url: str
    redis_url: str | None
    folder: Path


def settings_for(backend: Backend, workers: int) -> Settings:
    return Settings(
        database_url=backend.url,
        redis_url=backend.redis_url,
        data_dir=backend.folder,
        debug=False,
        access_log=False,
        model_engine="offline",
        workers=workers,
        posts_per_minute=100_000,  # the bench posts faster than a person; not what is measured
    ).model_copy(update=UNTHROTTLED)


async def serve(
    backend: Backend, engine: AsyncEngine, broker: Broker, workers: int
) -> tuple[Any, BackgroundServer]:
    app = create_app(
        settings_for(backend, workers), engine=engine, broker=broker, model=ZeroClient()
    )
    return app, await start_in_background(app)


async def per_run_phase(
    app: Any,
    http: httpx.AsyncClient,
    engine: AsyncEngine,
    rooms: int,
    messages: int,
    profiler: cProfile.Profile | None = None,
    lane_ab: bool = False,
) -> dict[str, Any]:
    """(a): post a round of messages (one per room), then run every queued run one by one.
    ``lane_ab``: odd rounds run with the raw lane off, so the two are compared in one
    process, interleaved (the VM's speed drifts between runs minutes apart)."""
    runner: TurnRunner = app.state.dealroom.runner
    with SqlProbe(engine) as sql:
        probe = Probe(sql)
        runner.register(AgentName.PERSONA, probe.wrap(TimedPersonaTurn(runner, probe), "load"))
        runner.register(
            AgentName.DISTIL, probe.wrap(TimedDistilTurn(runner, probe), "lease + load")
        )
        opened = await open_rooms(http, rooms)
        posts: list[float] = []
        figures: list[RunFigure] = []
        empty: list[RunFigure] = []
        for n in range(messages):
            for index, room in enumerate(opened):
                posts.append(await post(http, room, message_text(index, n)))
            raw_lane.enabled = not (lane_ab and n % 2)
            while True:
                figure = await timed_run_once(runner, probe, profiler)
                if figure.agent == "(none due)":
                    empty.append(figure)
                    break
                figure.lane = raw_lane.enabled
                figures.append(figure)
        raw_lane.enabled = True
        # A few more empty claims for a steadier baseline.
        for _ in range(30):
            empty.append(await timed_run_once(runner, probe))
    return {"posts": posts, "runs": figures, "empty": empty}


async def empty_units(sessionmaker: async_sessionmaker[AsyncSession], count: int) -> list[float]:
    """(c): an empty unit of work: SELECT 1 in its own transaction, committed and closed."""
    took = []
    for _ in range(count):
        started = time.perf_counter()
        db = Db(sessionmaker)
        try:
            await db.execute(text("SELECT 1"))
            await db.commit()
        finally:
            await db.close()
        took.append(time.perf_counter() - started)
    return took


@dataclass
class Throughput:
    mode: str
    rooms: int
    messages: int
    workers: int
    seconds: float
    post_seconds: float
    statements: int
    transactions: int
    claims: int
    runs: int
    cpu_seconds: float
    machine_cpu: float

    @property
    def turns(self) -> int:
        return self.rooms * self.messages

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds


async def post_all(http: httpx.AsyncClient, rooms: list[Room], messages: int) -> list[float]:
    """Every room's guest posts its messages one after another; rooms run concurrently."""

    async def one(index: int, room: Room) -> list[float]:
        return [await post(http, room, message_text(index, n)) for n in range(messages)]

    results = await asyncio.gather(*(one(i, r) for i, r in enumerate(rooms)))
    return [t for room in results for t in room]


async def drain_phase(
    backend: Backend,
    http: httpx.AsyncClient,
    engine: AsyncEngine,
    broker: Broker,
    rooms: int,
    messages: int,
    workers: int,
    timeout: float,
) -> Throughput:
    """(b) drain: queue every turn first (the serving app has no workers), then time a runner
    with ``workers`` workers until nothing is outstanding."""
    sessionmaker = create_sessionmaker(engine)
    opened = await open_rooms(http, rooms)
    # Round-robin arrival, as many visitors talking at once would queue them.
    post_started = time.monotonic()
    for n in range(messages):
        await asyncio.gather(*(post(http, r, message_text(i, n)) for i, r in enumerate(opened)))
    post_seconds = time.monotonic() - post_started
    runner = create_runner(
        settings_for(backend, workers), sessionmaker, broker, SystemClock(), ZeroClient()
    )
    process = psutil.Process()
    with SqlProbe(engine) as sql:
        sql.start()
        cpu0 = sum(process.cpu_times()[:2])
        psutil.cpu_percent()
        started = time.monotonic()
        await runner.start()
        try:
            finished = await wait_all_done(sessionmaker, timeout)
        finally:
            await runner.close()
        sql.stop()
        machine = psutil.cpu_percent()
        cpu = sum(process.cpu_times()[:2]) - cpu0
    return Throughput(
        "drain", rooms, messages, workers, finished - started, post_seconds,
        sum(map(is_query, sql.statements)), sql.transactions,
        sum(map(is_claim_scan, sql.statements)), 2 * rooms * messages, cpu, machine,
    )  # fmt: skip


async def live_phase(
    backend: Backend,
    engine: AsyncEngine,
    broker: Broker,
    rooms: int,
    messages: int,
    workers: int,
    timeout: float,
) -> Throughput:
    """(b) live: a server whose own workers run the turns while guests post into it."""
    sessionmaker = create_sessionmaker(engine)
    _app, server = await serve(backend, engine, broker, workers)
    process = psutil.Process()
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            opened = await open_rooms(http, rooms)
            await wait_all_done(sessionmaker, timeout)
            with SqlProbe(engine) as sql:
                sql.start()
                cpu0 = sum(process.cpu_times()[:2])
                psutil.cpu_percent()
                started = time.monotonic()
                await post_all(http, opened, messages)
                posted = time.monotonic()
                finished = await wait_all_done(sessionmaker, timeout)
                sql.stop()
                machine = psutil.cpu_percent()
                cpu = sum(process.cpu_times()[:2]) - cpu0
    finally:
        await server.stop()
    return Throughput(
        "live", rooms, messages, workers, finished - started, posted - started,
        sum(map(is_query, sql.statements)), sql.transactions,
        sum(map(is_claim_scan, sql.statements)), 2 * rooms * messages, cpu, machine,
    )  # fmt: skip


async def run_backend(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-turns-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    broker: Broker | None = None
    server: BackgroundServer | None = None
    result: dict[str, Any] = {"backend": name}
    stand_in = contextlib.AsyncExitStack()
    try:
        if name == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_turns")
            backend = Backend(name, database_url, args.redis_url, folder)
            result["statistics"] = await stand_in.enter_async_context(
                autovacuum_stand_in(database_url)
            )
        else:
            url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
            backend = Backend(name, url, None, folder)
        engine = create_engine(backend.url)
        await upgrade(engine)
        broker = create_broker(backend.redis_url)
        await broker.start()
        app, server = await serve(backend, engine, broker, workers=0)
        sessionmaker = create_sessionmaker(engine)
        result["other_pytest_at_start"] = other_test_runs()
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            await sign_up(http, HOST_HANDLE, "Turn Bench Host")
            gc.collect()
            await empty_units(sessionmaker, 20)  # warm-up
            result["empty_unit"] = await empty_units(sessionmaker, args.baseline_count)
            profiler = cProfile.Profile() if args.profile else None
            result["per_run"] = await per_run_phase(
                app, http, engine, args.rooms, args.messages, profiler, args.lane_ab
            )
            if profiler is not None:
                path = Path(tempfile.mkdtemp(prefix="dealroom-bench-prof-")) / "runs.prof"
                profiler.dump_stats(str(path))
                result["profile"] = profile_summary(path, top=10)
                if args.profile_out is not None:
                    shutil.copyfile(path, args.profile_out)
                remove_tree(path.parent)
            gc.collect()
            drain = await drain_phase(
                backend, http, engine, broker, args.tp_rooms, args.tp_messages,
                args.workers, args.timeout,
            )  # fmt: skip
        await server.stop()
        server = None
        gc.collect()
        live = await live_phase(
            backend, engine, broker, args.tp_rooms, args.tp_messages, args.workers, args.timeout
        )
        result["throughput"] = [vars(drain), vars(live)]
        result["other_pytest_at_end"] = other_test_runs()
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                await server.stop()
        if broker is not None:
            with contextlib.suppress(Exception):
                await broker.close()
        if engine is not None:
            await engine.dispose()
        await stand_in.aclose()
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)
    return result


# --- report -----------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.1f}"


def p(values: Sequence[float], q: float) -> float:
    return percentile(sorted(values), q)


def spread(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return f"{low}" if low == high else f"{low}-{high}"


def turn_sums(runs: Sequence[RunFigure], *, cpu: bool = False) -> list[float]:
    """persona + Distil seconds (wall, or this process's CPU) of the same posted message."""
    by_message: dict[uuid.UUID, dict[str, float]] = {}
    for run in runs:
        if run.message_id is not None:
            by_message.setdefault(run.message_id, {})[run.agent] = (
                run.cpu_seconds if cpu else run.seconds
            )
    return [
        parts["persona"] + parts["distil"]
        for parts in by_message.values()
        if "persona" in parts and "distil" in parts
    ]


def report_backend(result: dict[str, Any], args: argparse.Namespace) -> list[str]:
    lines: list[str] = []
    name = result["backend"]
    label = "SQLite (file) + in-process broker" if name == "sqlite" else "PostgreSQL + Redis"
    per_run = result["per_run"]
    runs: list[RunFigure] = per_run["runs"]
    empty: list[RunFigure] = per_run["empty"]
    posts: list[float] = per_run["posts"]
    unit: list[float] = result["empty_unit"]
    lines.append(f"\n=== {label} ===")
    lines.append(
        f"pytest processes at start/end: {result['other_pytest_at_start']}"
        f"/{result['other_pytest_at_end']}"
    )
    stand_in = result.get("statistics")
    if stand_in is not None:
        lines.append(
            f"PostgreSQL autovacuum {stand_in['autovacuum']}; "
            f"ANALYZE run {stand_in['analyzed']} times by the benchmark in its stead, "
            f"each of {stand_in['takes']}"
        )
    lines.append(
        f"(a) per run, single process, one run_once() at a time: {args.rooms} rooms x "
        f"{args.messages} messages"
    )
    header = (
        f"{'':<26}{'n':>5}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
        f"{'statements':>12}{'w/o BEGIN':>11}{'tx':>4}"
    )
    lines.append(header)
    groups: list[tuple[str, list[RunFigure]]] = [
        ("persona run", [r for r in runs if r.agent == "persona"]),
        ("distil run", [r for r in runs if r.agent == "distil"]),
        ("claim finding nothing", empty),
    ]
    for title, group in groups:
        seconds = [r.seconds for r in group]
        lines.append(
            f"{title:<26}{len(group):>5}{ms(p(seconds, 50)):>9}{ms(p(seconds, 90)):>9}"
            f"{ms(p(seconds, 99)):>9}{ms(max(seconds)):>9}"
            f"{spread([r.statements for r in group]):>12}"
            f"{spread([r.queries for r in group]):>11}"
            f"{spread([r.transactions for r in group]):>4}"
        )
    sums = turn_sums(runs)
    lines.append(
        f"{'turn (persona + distil)':<26}{len(sums):>5}{ms(p(sums, 50)):>9}{ms(p(sums, 90)):>9}"
        f"{ms(p(sums, 99)):>9}{ms(max(sums)):>9}"
    )
    for lane in (True, False):
        some = [r for r in runs if r.lane is lane]
        if not some:
            continue
        cpu = {agent: [r.cpu_seconds for r in some if r.agent == agent] for agent in PHASES}
        wall = turn_sums(some)
        lines.append(
            f"  raw lane {'on ' if lane else 'off'}: this process's CPU per run, p50 ms: persona "
            f"{ms(p(cpu['persona'], 50))}, distil {ms(p(cpu['distil'], 50))}, turn "
            f"{ms(p(turn_sums(some, cpu=True), 50))}; turn wall p50 {ms(p(wall, 50))} ms "
            f"({len(wall)} turns)"
        )
    for (title, group), agent in zip(groups[:2], ("persona", "distil"), strict=True):
        parts = []
        for phase in PHASES[agent]:
            values = [r.segments.get(phase, 0.0) for r in group]
            counts = [r.segment_statements.get(phase, 0) for r in group]
            parts.append(f"{phase} {ms(p(values, 50))} ({statistics.median(counts):g})")
        lines.append(f"  {title} phases, p50 ms (median statements): " + "; ".join(parts))
    for line in result.get("profile", []):
        lines.append(f"  {line}")
    lines.append("(c) baselines in the same run")
    lines.append(
        f"{'empty unit of work':<26}{len(unit):>5}{ms(p(unit, 50)):>9}{ms(p(unit, 90)):>9}"
        f"{ms(p(unit, 99)):>9}{ms(max(unit)):>9}   (SELECT 1 in its own transaction)"
    )
    lines.append(
        f"{'postMessage over HTTP':<26}{len(posts):>5}{ms(p(posts, 50)):>9}{ms(p(posts, 90)):>9}"
        f"{ms(p(posts, 99)):>9}{ms(max(posts)):>9}   (in-process client, sequential)"
    )
    persona_p50 = p([r.seconds for r in groups[0][1]], 50)
    distil_p50 = p([r.seconds for r in groups[1][1]], 50)
    lines.append(
        f"ratios (p50): persona run / empty unit = {persona_p50 / p(unit, 50):.1f}x; "
        f"distil run / empty unit = {distil_p50 / p(unit, 50):.1f}x; "
        f"turn / postMessage = {p(sums, 50) / p(posts, 50):.1f}x; "
        f"empty claim / empty unit = {p([r.seconds for r in empty], 50) / p(unit, 50):.1f}x"
    )
    lines.append(
        f"(b) throughput, {args.workers} workers in this one process "
        f"(a turn = one posted message's persona + Distil runs)"
    )
    lines.append(
        f"{'mode':<8}{'turns':>7}{'seconds':>9}{'turns/s':>9}{'runs/s':>8}{'posting s':>11}"
        f"{'stmts/turn':>12}{'tx/turn':>9}{'claims/run':>12}{'proc CPU':>10}{'machine':>9}"
    )
    for data in result["throughput"]:
        t = Throughput(**data)
        lines.append(
            f"{t.mode:<8}{t.turns:>7}{t.seconds:>9.2f}{t.turns_per_second:>9.1f}"
            f"{t.runs / t.seconds:>8.1f}{t.post_seconds:>11.2f}"
            f"{t.statements / t.turns:>12.1f}{t.transactions / t.turns:>9.1f}"
            f"{t.claims / t.runs:>12.2f}{100 * t.cpu_seconds / t.seconds:>9.0f}%"
            f"{t.machine_cpu:>8.0f}%"
        )
    lines.append(
        "  (proc CPU: this process, % of one core over the timed window; machine: all CPUs, "
        "% of both cores, including PostgreSQL, Redis and anything else running)"
    )
    return lines


def statement_listing(result: dict[str, Any]) -> list[str]:
    runs: list[RunFigure] = result["per_run"]["runs"]
    lines = []
    for agent in ("persona", "distil"):
        sample = next((r for r in reversed(runs) if r.agent == agent), None)
        if sample is None:
            continue
        lines.append(
            f"\nstatements of one {agent} run ({result['backend']}, {len(sample.sample)}; "
            f"the first {sample.claim_statements} are the claim):"
        )
        lanes = sample.sample_lanes or [False] * len(sample.sample)
        for index, (statement, lane) in enumerate(zip(sample.sample, lanes, strict=True), 1):
            lines.append(f"  {index:>2}. {'lane ' if lane else ''}{shape(statement)[:150]}")
    return lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (about a minute)")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--rooms", type=int, help="(a) rooms; default 20, quick 8")
    parser.add_argument("--messages", type=int, help="(a) messages per room; default 8, quick 4")
    parser.add_argument("--tp-rooms", type=int, help="(b) rooms; default 40, quick 16")
    parser.add_argument("--tp-messages", type=int, help="(b) messages per room; default 6, quick 4")
    parser.add_argument("--workers", type=int, default=Settings().workers)
    parser.add_argument("--baseline-count", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the run_once() calls of (a), by package"
    )
    parser.add_argument(
        "--profile-out", type=Path, help="with --profile: keep the pstats file here"
    )
    parser.add_argument(
        "--lane-ab",
        action="store_true",
        help="(a): alternate the raw lane on and off by round and compare CPU per run",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    args.rooms = args.rooms or (8 if args.quick else 20)
    args.messages = args.messages or (4 if args.quick else 8)
    args.tp_rooms = args.tp_rooms or (16 if args.quick else 40)
    args.tp_messages = args.tp_messages or (4 if args.quick else 6)
    if min(args.rooms, args.messages, args.tp_rooms, args.tp_messages, args.workers) < 1:
        parser.error("sizes and --workers must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prepare_run(args.wait_idle)
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    print("\n".join(machine_summary()))
    print(f"command: {' '.join(sys.argv)}; zero-latency model ({STREAM_CHUNKS} stream chunks)")
    results = []
    for index, name in enumerate(backends):
        if index:
            still = wait_until_no_tests(args.wait_idle)
            if still:
                print(f"note: pytest processes running during this backend: {still}")
        print(f"\nrunning {name}…", flush=True)
        result = asyncio.run(run_backend(name, args))
        results.append(result)
        print("\n".join(report_backend(result, args)), flush=True)
    for result in results:
        print("\n".join(statement_listing(result)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=_json_default))


def _json_default(value: object) -> object:
    if isinstance(value, RunFigure):
        data = dict(vars(value))
        data.pop("sample")
        return data
    return str(value)


if __name__ == "__main__":
    main()
