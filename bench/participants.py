"""Rooms of many participants: does a turn, and a published event, cost more as people join?

A room holds the host, the visitor who opened it and any number of teammates (``visitor_2``,
``host_2`` …), each in a pane of their own (seated as rows, as an accepted invitation leaves
them). A visitor-side turn touches its own pane and, when its agent consults, the host's; the
goal is a cost linear in the panes a turn touches, so a visitor's turn should cost the same
statements with 2, 3 or 5 participants.

Two measurements on each backend (SQLite in a temporary file with the in-process broker;
PostgreSQL in a throwaway database with Redis):

(1) a turn: in rooms of 2 (host, visitor), 3 (+ visitor_2) and 5 (+ visitor_3, host_2)
    participants, a visitor-side participant posts over HTTP (in-process uvicorn, workers=0),
    then ``runner.run_once()`` is called one run at a time until none is due, recording per
    run its agent, its pane, SQL statements and this process's CPU. Two models: the
    zero-latency one of bench/turns.py (a reply, no sends) and the offline engine (real sends
    and rulings, so the turn cascades visitor pane -> host pane -> back). The same script of
    messages in every room; statements that appear more often at N than at 2 are listed.
(2) fan-out: every participant follows its own pane (``follow_pane``) and the host follows
    every pane; an offer's stage change is recorded (``record_stage``) and a message posted,
    ~200 times each: publishes and payload decodes per event, and the time from the publish
    to the last subscriber having it.

    .venv/bin/python bench/participants.py [--backend sqlite|postgres|both] [--quick]

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    ms,
    open_room,
    percentile,
    prepare_run,
    remove_tree,
    sign_up,
)
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from turns import (
    Backend,
    Room,
    SqlProbe,
    ZeroClient,
    is_query,
    outstanding,
    post,
    settings_for,
    shape,
)

from dealroom.agents import offer_gen
from dealroom.agents.arvist import ArvistOutput
from dealroom.agents.models.base import AgentName, ModelClient, ModelRequest
from dealroom.agents.models.offline import OfflineClient
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Offer, Participant
from dealroom.persistence.models import Room as RoomRow
from dealroom.persistence.repositories import RoomRepository
from dealroom.realtime import Broker, create_broker
from dealroom.server import BackgroundServer, start_in_background
from dealroom.services.live import events as live_events
from dealroom.services.offers.draw import draw
from dealroom.services.offers.events import record_stage
from dealroom.services.rooms.messages import follow_pane
from dealroom.services.turns.context import RunSnapshot

SIZES = (2, 3, 5)
MEMBERS = {2: (), 3: ("visitor_2",), 5: ("visitor_2", "visitor_3", "host_2")}
"""The teammates seated beside the host and the visitor, by room size."""
RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, "
    "and I never work with alcohol brands."
)
SCRIPT = (
    "Hi! We're Brightwave and we'd love a sponsored post, live mid-March.",
    "We can pay $5,000 for a sponsored post.",
    "Could you do $6,500?",
    "Could we do $7,700 for the sponsored post on 15 March 2027?",
)
HOME = "query { me { homeRoom { id } } }"
ME = "query { me { id } }"
HANDLES = iter(range(1, 1 << 30))


class Zero(ZeroClient):
    """bench/turns.py's zero-latency model, which also curates (no durable changes): the
    host's Arvist run would otherwise fail and come back, due, in the middle of a turn."""

    def _text(self, request: ModelRequest) -> str:
        if request.output is ArvistOutput:
            self.calls[request.agent.value] += 1
            return ArvistOutput().model_dump_json()
        return super()._text(request)


def quiet_settings(backend: Backend) -> Settings:
    """No workers of the app's own, and no webhook or notification delivery loops: their
    statements, on their own clock, would land in whichever run is being counted."""
    return settings_for(backend, 0).model_copy(update={"webhook_workers": 0, "notify_workers": 0})


# --- (1) a turn, run by run ------------------------------------------------------------------


@dataclass
class Run:
    agent: str
    pane: str
    statements: list[str]
    cpu: float
    failed: bool = False

    @property
    def queries(self) -> int:
        return sum(map(is_query, self.statements))

    @property
    def label(self) -> str:
        return f"{self.agent}@{self.pane}{' (failed)' if self.failed else ''}"


@dataclass
class Turn:
    """One posted message and every run it led to, until none was due."""

    variant: str
    size: int
    poster: str
    index: int
    round: int
    runs: list[Run]
    left: int
    """Runs still outstanding (queued for later, or failed and waiting to retry)."""

    @property
    def statements(self) -> int:
        return sum(len(r.statements) for r in self.runs)

    @property
    def cpu(self) -> float:
        return sum(r.cpu for r in self.runs)

    def role(self, pane: str) -> str:
        """A pane as the turn sees it: the poster's own, the host's, or another's."""
        return "own" if pane == self.poster else "host" if pane == "host" else "other"

    def shapes(self) -> Counter[str]:
        return Counter(
            f"{r.agent}@{self.role(r.pane)}: {shape(s)[:200]}"
            for r in self.runs
            for s in r.statements
        )


@dataclass
class Watch:
    """Which run the runner is executing: its agent and pane (every handler wrapped)."""

    panes: dict[uuid.UUID, str] = field(default_factory=dict)
    agent: str = ""
    pane: str = ""
    failed: bool = False

    def install(self, runner: TurnRunner) -> None:
        handlers = runner._handlers  # the runner keeps no hook for this; a benchmark may look
        for agent, handler in list(handlers.items()):
            handlers[agent] = self._wrap(handler)

    def _wrap(self, handler: Callable[[RunSnapshot], Any]) -> Callable[[RunSnapshot], Any]:
        async def run(snapshot: RunSnapshot) -> None:
            self.agent = snapshot.agent
            self.pane = self.panes.get(snapshot.participant_id, "?")
            try:
                await handler(snapshot)
            except Exception:
                self.failed = True
                raise

        return run


async def run_until_idle(runner: TurnRunner, watch: Watch, sql: SqlProbe) -> list[Run]:
    """Every due run, one ``run_once()`` at a time. The periodic sweeps (watches, timers,
    notifications, payment upkeep) run before, apart: whether one is due in a run depends on
    the wall clock, not on the turn, and would blur the comparison."""
    runs: list[Run] = []
    sweeps, runner._sweeps = runner._sweeps, []
    try:
        while True:
            run = await _one_run(runner, watch, sql)
            if run is None:
                return runs
            runs.append(run)
            if len(runs) > 200:
                raise RuntimeError("more than 200 runs from one message: a loop?")
    finally:
        runner._sweeps = sweeps


async def _one_run(runner: TurnRunner, watch: Watch, sql: SqlProbe) -> Run | None:
    watch.agent, watch.pane, watch.failed = "", "", False
    sql.start()
    cpu = time.process_time()
    ran = await runner.run_once()
    cpu = time.process_time() - cpu
    sql.stop()
    if not ran:
        return None
    return Run(watch.agent, watch.pane, list(sql.statements), cpu, watch.failed)


@dataclass
class Seated:
    room_id: str
    headers: dict[str, dict[str, str]]
    """Each participant key's Authorization header."""


async def account(http: httpx.AsyncClient, prefix: str) -> tuple[dict[str, str], str]:
    handle = f"{prefix}{next(HANDLES)}"
    headers = await sign_up(http, handle, f"Bench {handle}")
    return headers, str((await gql(http, ME, headers=headers))["me"]["id"])


async def seat_room(
    http: httpx.AsyncClient,
    sessionmaker: async_sessionmaker[AsyncSession],
    host: tuple[str, dict[str, str]],
    size: int,
    watch: Watch,
) -> Seated:
    """A room the host's link opened for a signed-in brand, with ``size`` participants."""
    visitor, _ = await account(http, "ptbbrand")
    room_id, _ = await open_room(http, host[0], visitor, new_conversation=True)
    headers = {"host": host[1], "visitor": visitor}
    members = []
    for key in MEMBERS[size]:
        headers[key], account_id = await account(http, "ptbmember")
        members.append(
            Participant(room_id=uuid.UUID(room_id), key=key, account_id=uuid.UUID(account_id))
        )
    db = Db(sessionmaker)
    try:
        await db.add(*members)
        await db.commit()
        rows = await db.scalars(
            select(Participant).where(Participant.room_id == uuid.UUID(room_id))
        )
        watch.panes.update({p.id: p.key for p in rows})
    finally:
        await db.close()
    return Seated(room_id, headers)


async def drain(runner: TurnRunner) -> None:
    while await runner.run_once():
        pass


async def turns_phase(
    backend: Backend,
    engine: AsyncEngine,
    broker: Broker,
    variant: str,
    model: ModelClient,
    rounds: int,
    sizes: Sequence[int],
    script: Sequence[str],
    warm_up: bool,
    posters_by_size: dict[int, Sequence[str]],
) -> list[Turn]:
    sessionmaker = create_sessionmaker(engine)
    app = create_app(quiet_settings(backend), engine=engine, broker=broker, model=model)
    server: BackgroundServer = await start_in_background(app)
    runner: TurnRunner = app.state.dealroom.runner
    watch = Watch()
    watch.install(runner)
    found: list[Turn] = []
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            handle = f"ptbhost{variant}{next(HANDLES)}"
            host_headers = await sign_up(http, handle, "Bench Host")
            home = (await gql(http, HOME, headers=host_headers))["me"]["homeRoom"]["id"]
            await post(http, Room(home, host_headers), RULES)
            await drain(runner)
            with SqlProbe(engine) as sql:
                # round 0 warms up (first statements compiled, caches filled): not reported
                for round_no in range(0 if warm_up else 1, rounds + 1):
                    for size in sizes:
                        posters = list(posters_by_size[size])
                        for poster in posters:
                            seated = await seat_room(
                                http, sessionmaker, (handle, host_headers), size, watch
                            )
                            room = Room(seated.room_id, seated.headers[poster])
                            for index, body in enumerate(script):
                                await runner.sweep()
                                await post(http, room, body)
                                runs = await run_until_idle(runner, watch, sql)
                                left = await outstanding(sessionmaker)
                                if round_no:
                                    found.append(
                                        Turn(variant, size, poster, index, round_no, runs, left)
                                    )
    finally:
        await server.stop()
    return found


# --- (2) fan-out ------------------------------------------------------------------------------


@dataclass
class Fanout:
    size: int
    kind: str
    streams: int
    events: int
    publishes: list[int]
    """Channel publishes per event (the offer's own channel included)."""
    calls: list[int]
    """Broker calls per event (a pipeline is one)."""
    decodes: list[int]
    deliveries: list[int]
    latencies: list[float]
    """Publish call to the last subscriber's delivery, seconds."""
    channels: str = ""
    """The last event's publishes by channel kind."""


@dataclass
class Counting:
    """Counts the broker's publishes and the payload decodes, and when the last publish of
    an event started."""

    broker: Broker
    pairs: int = 0
    calls: int = 0
    decodes: int = 0
    published_at: float = 0.0
    channels: Counter[str] = field(default_factory=Counter)
    """Publishes by the channel's kind (``pane``, ``offer``, …)."""
    _inside: bool = False
    _restore: list[Callable[[], None]] = field(default_factory=list)

    def __enter__(self) -> Counting:
        broker = self.broker
        publish, publish_many = broker.publish, broker.publish_many

        async def one(channel: str, payload: str) -> None:
            if not self._inside:  # the in-process broker's publish_many calls publish
                self.calls += 1
                self.pairs += 1
                self.channels[channel.split(":")[0]] += 1
                self.published_at = time.perf_counter()
            await publish(channel, payload)

        async def many(published: Sequence[tuple[str, str]]) -> None:
            self.calls += 1
            self.pairs += len(published)
            self.channels.update(channel.split(":")[0] for channel, _ in published)
            self.published_at = time.perf_counter()
            self._inside = True
            try:
                await publish_many(published)
            finally:
                self._inside = False

        decode = live_events.decode

        def counted(payload: str) -> Any:
            self.decodes += 1
            return decode(payload)

        setattr(broker, "publish", one)  # noqa: B010 - a benchmark's probe on the instance
        setattr(broker, "publish_many", many)  # noqa: B010
        live_events.decode = counted
        self._restore = [
            lambda: delattr(broker, "publish"),
            lambda: delattr(broker, "publish_many"),
            lambda: setattr(live_events, "decode", decode),
        ]
        return self

    def __exit__(self, *_exc: object) -> None:
        for undo in self._restore:
            undo()

    def reset(self) -> None:
        self.pairs = self.calls = self.decodes = 0
        self.channels = Counter()


async def fanout_phase(
    backend: Backend, engine: AsyncEngine, broker: Broker, size: int, events: int
) -> list[Fanout]:
    sessionmaker = create_sessionmaker(engine)
    app = create_app(quiet_settings(backend), engine=engine, broker=broker, model=Zero())
    server = await start_in_background(app)
    runner: TurnRunner = app.state.dealroom.runner
    deps = runner.deps
    watch = Watch()
    tasks: list[asyncio.Task[None]] = []
    streams: list[Any] = []
    try:
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            handle = f"ptbfanhost{next(HANDLES)}"
            host_headers = await sign_up(http, handle, "Bench Host")
            seated = await seat_room(http, sessionmaker, (handle, host_headers), size, watch)
            room_id = uuid.UUID(seated.room_id)
            offer_id = await written_offer(deps, room_id)
            panes = {key: pid for pid, key in watch.panes.items()}
            # each participant its own pane; the host every pane
            follows = [(key, key) for key in panes] + [("host", k) for k in panes if k != "host"]
            arrived: dict[int, list[float]] = {}
            ready = asyncio.Event()
            opened = 0

            def started() -> None:
                nonlocal opened
                opened += 1
                if opened == len(follows):
                    ready.set()

            async def follow(stream: Any) -> None:
                async for event in stream:
                    cursor = getattr(event, "cursor", None)
                    if isinstance(
                        event, live_events.MessageAddedEvent | live_events.StageChangedEvent
                    ):
                        arrived.setdefault(int(cursor or 0), []).append(time.perf_counter())

            for _reader, key in follows:
                stream = follow_pane(
                    sessionmaker,
                    broker,
                    room_id=room_id,
                    participant_id=panes[key],
                    seat=key,
                    after=None,
                    started=started,
                )
                streams.append(stream)
                tasks.append(asyncio.create_task(follow(stream)))
            await asyncio.wait_for(ready.wait(), 30)
            await asyncio.sleep(0.2)
            results = []
            visitor_room = Room(seated.room_id, seated.headers["visitor"])
            with Counting(broker) as counting:
                for kind in ("stage change", "message"):
                    figure = Fanout(size, kind, len(follows), 0, [], [], [], [], [])
                    expected = len(follows) if kind == "stage change" else 2
                    for n in range(events):
                        counting.reset()
                        before = set(arrived)
                        if kind == "stage change":
                            await stage_change(deps, offer_id)
                        else:
                            await post(http, visitor_room, f"fan-out message {n}")
                        published = counting.published_at
                        deadline = time.monotonic() + 10
                        while True:
                            new = [c for c in arrived if c not in before]
                            if new and len(arrived[new[0]]) >= expected:
                                break
                            if time.monotonic() > deadline:
                                raise TimeoutError(f"{kind} {n}: not every subscriber had it")
                            await asyncio.sleep(0.0005)
                        await asyncio.sleep(0.002)  # let stragglers (duplicates) show
                        got = arrived[new[0]]
                        figure.events += 1
                        figure.publishes.append(counting.pairs)
                        figure.calls.append(counting.calls)
                        figure.decodes.append(counting.decodes)
                        figure.deliveries.append(len(got))
                        figure.latencies.append(max(got) - published)
                        figure.channels = " ".join(
                            f"{kind} {count}" for kind, count in sorted(counting.channels.items())
                        )
                    results.append(figure)
            return results
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for stream in streams:
            with contextlib.suppress(Exception):
                await stream.aclose()
        await server.stop()


AGREED = offer_gen.OfferGenOutput(
    deliverables=["sponsored post"],
    fee_amount="8000",
    currency="USD",
    dates=["2027-03-15"],
    usage_rights=None,
    exclusivity=None,
    due_slice_percent="50",
    open_questions=[],
)


async def written_offer(deps: Any, room_id: uuid.UUID) -> uuid.UUID:
    """The room's written offer as Offer-Gen's apply draws it (``offers.draw``)."""
    async with deps.unit() as uow:
        db = uow.db
        rooms = RoomRepository(db)
        await rooms.lock(room_id)
        room = await db.get(RoomRow, room_id)
        assert room is not None
        seats = {p.key: p for p in await rooms.participants(room_id)}
        run = RunSnapshot(
            uuid.uuid4(),
            room_id,
            seats["visitor"].id,
            AgentName.OFFER_GEN.value,
            None,
            None,
            0,
            1,
        )
        published = await draw(
            db,
            deps.clock,
            run,
            room,
            seats["host"],
            seats["visitor"],
            offer_gen.to_terms(AGREED),
            deps.clock.now(),
            band_percent=deps.settings.firewall_band_percent,
        )
        uow.publish(*published)
    db = Db(deps.sessionmaker)
    try:
        offer_id = await db.scalar(select(Offer.id).where(Offer.room_id == room_id))
    finally:
        await db.close()
    assert offer_id is not None, "no offer drawn"
    return offer_id


async def stage_change(deps: Any, offer_id: uuid.UUID) -> None:
    """The offer's stage recorded again, as every stage change records it."""
    async with deps.unit() as uow:
        offer = await uow.db.get(Offer, offer_id)
        assert offer is not None
        uow.publish(
            *await record_stage(
                uow.db,
                offer,
                actor="host",
                now=deps.clock.now(),
                band_percent=deps.settings.firewall_band_percent,
            )
        )


# --- per backend ------------------------------------------------------------------------------


async def run_backend(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-participants-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    broker: Broker | None = None
    result: dict[str, Any] = {"backend": name, "turns": [], "fanout": []}
    try:
        if name == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_participants")
            backend = Backend(name, database_url, args.redis_url, folder)
        else:
            backend = Backend(name, f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}", None, folder)
        engine = create_engine(backend.url)
        await upgrade(engine)
        broker = create_broker(backend.redis_url)
        await broker.start()
        models: dict[str, Callable[[], ModelClient]] = {
            "zero": Zero,
            "offline": OfflineClient,
        }
        for variant in args.models:
            result["turns"] += await turns_phase(
                backend, engine, broker, variant, models[variant](), args.rounds, args.sizes,
                args.script, not args.quick, args.posters,
            )  # fmt: skip
        for size in args.fanout_sizes:
            result["fanout"] += await fanout_phase(backend, engine, broker, size, args.events)
    finally:
        if broker is not None:
            with contextlib.suppress(Exception):
                await broker.close()
        if engine is not None:
            await engine.dispose()
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)
    return result


# --- report -----------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report_turns(turns: list[Turn]) -> list[str]:
    lines: list[str] = []
    for variant in dict.fromkeys(t.variant for t in turns):
        mine = [t for t in turns if t.variant == variant]
        rounds = max(t.round for t in mine)
        smallest = min(t.size for t in mine)
        versus = f"vs N={smallest}"
        lines.append(
            f"\n(1) {variant} model: one posted message, then run_once() until none is due; "
            f"mean over the {len({t.index for t in mine})} messages of the script "
            f"(median of {rounds} round(s) each)"
        )
        lines.append(
            f"{'N':>2} {'poster':<10}{'runs':>5}{'stmts':>7}{'w/o BEGIN':>10}{versus:>7}"
            f"{'CPU ms':>7}{versus:>7}{'left':>5}  {'stmts per message':<18}"
            "statements per run by agent@pane (xruns per turn)"
        )
        base = [t for t in mine if t.size == smallest and t.poster == min(t.poster for t in mine)]
        base_stmts, base_cpu = per_turn(base, lambda t: t.statements), per_turn(base, cpu_of)
        for size in sorted({t.size for t in mine}):
            for poster in dict.fromkeys(t.poster for t in mine if t.size == size):
                group = [t for t in mine if t.size == size and t.poster == poster]
                stmts = per_turn(group, lambda t: t.statements)
                cpu = per_turn(group, cpu_of)
                by_agent: dict[str, list[int]] = {}
                for t in group:
                    for r in t.runs:
                        by_agent.setdefault(r.label, []).append(len(r.statements))
                agents = ", ".join(
                    f"{label} {median(v):g}"
                    + (f" (x{len(v) / len(group):.2g})" if len(v) != len(group) else "")
                    for label, v in by_agent.items()
                )
                messages = "/".join(
                    f"{median([t.statements for t in group if t.index == i]):g}"
                    for i in sorted({t.index for t in group})
                )
                lines.append(
                    f"{size:>2} {poster:<10}{per_turn(group, lambda t: len(t.runs)):>5.2g}"
                    f"{stmts:>7.1f}{per_turn(group, queries_of):>10.1f}{stmts / base_stmts:>7.2f}"
                    f"{ms(cpu):>7}{cpu / base_cpu:>7.2f}{max(t.left for t in group):>5}  "
                    f"{messages:<18}{agents}"
                )
        lines += shape_differences(mine)
    return lines


def per_turn(turns: list[Turn], value: Callable[[Turn], float]) -> float:
    """The mean over the script's messages of each message's median over the rounds."""
    indexes = sorted({t.index for t in turns})
    return statistics.fmean(median([value(t) for t in turns if t.index == i]) for i in indexes)


def cpu_of(turn: Turn) -> float:
    return turn.cpu


def queries_of(turn: Turn) -> float:
    return sum(r.queries for r in turn.runs)


def shape_differences(turns: list[Turn]) -> list[str]:
    """Statements a turn runs more often in a bigger room than the same turn at N=2."""
    lines = []
    smallest = min(t.size for t in turns)
    base = {(t.index, t.round): t for t in turns if t.size == smallest and t.poster == "visitor"}
    for size in sorted({t.size for t in turns} - {smallest}):
        for poster in dict.fromkeys(t.poster for t in turns if t.size == size):
            extra: Counter[str] = Counter()
            fewer: Counter[str] = Counter()
            compared = 0
            for t in turns:
                if t.size != size or t.poster != poster or (t.index, t.round) not in base:
                    continue
                compared += 1
                mine, theirs = t.shapes(), base[(t.index, t.round)].shapes()
                extra += mine - theirs
                fewer += theirs - mine
            if not extra and not fewer:
                lines.append(f"  N={size} {poster}: the same statements as N={smallest}")
                continue
            lines.append(
                f"  N={size} {poster} vs N={smallest} visitor, over {compared} turns: "
                f"{extra.total()} more, {fewer.total()} fewer statements"
            )
            for text, count in extra.most_common(8):
                lines.append(f"    +{count / compared:.2g}/turn  {text[:150]}")
            for text, count in fewer.most_common(4):
                lines.append(f"    -{count / compared:.2g}/turn  {text[:150]}")
    return lines


def report_fanout(figures: list[Fanout]) -> list[str]:
    lines = [
        "\n(2) fan-out: each participant follows its own pane, the host every pane",
        f"{'N':>2} {'event':<13}{'streams':>8}{'events':>7}{'publishes':>10}{'calls':>6}"
        f"{'decodes':>8}{'delivered':>10}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}  by channel",
    ]
    for f in figures:
        lat = sorted(f.latencies)
        lines.append(
            f"{f.size:>2} {f.kind:<13}{f.streams:>8}{f.events:>7}{median(f.publishes):>10g}"
            f"{median(f.calls):>6g}{median(f.decodes):>8g}{median(f.deliveries):>10g}"
            f"{ms(percentile(lat, 50)):>8}{ms(percentile(lat, 95)):>8}{ms(lat[-1]):>8}  "
            f"{f.channels}"
        )
    lines.append(
        "  (publishes: channel messages per event, every channel counted; calls: broker calls, "
        "a pipeline is one; decodes: payloads parsed, once per payload however many follow it; "
        "time: from the publish call to the last subscriber's delivery)"
    )
    return lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: one N=3 turn on SQLite (seconds)"
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres", "pg", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=3, help="(1) rounds of rooms per size")
    parser.add_argument("--events", type=int, default=200, help="(2) events of each kind")
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    args = parser.parse_args(argv)
    args.models = ("zero", "offline")
    args.sizes = SIZES
    args.fanout_sizes = (2, 5)
    args.script = SCRIPT
    args.posters = {size: ("visitor", *MEMBERS[size][:1]) for size in SIZES}
    if args.backend == "pg":
        args.backend = "postgres"
    if args.quick:
        args.backend, args.rounds, args.sizes, args.models = "sqlite", 1, (3,), ("zero",)
        args.script, args.fanout_sizes = SCRIPT[:1], ()
        args.posters = {3: ("visitor_2",)}
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    prepare_run(args.wait_idle)
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    print("\n".join(machine_summary()))
    print(f"command: {' '.join(sys.argv)}")
    for name in backends:
        label = "SQLite (file) + in-process broker" if name == "sqlite" else "PostgreSQL + Redis"
        print(f"\n=== {label} ===", flush=True)
        result = asyncio.run(run_backend(name, args))
        print("\n".join(report_turns(result["turns"])), flush=True)
        if result["fanout"]:
            print("\n".join(report_fanout(result["fanout"])), flush=True)


if __name__ == "__main__":
    main()
