"""Written-offer benchmark: what written offers add to an agent turn, what the two specialist runs
cost, the offer mutations over HTTP, and approvals under contention.

Method. On each backend (SQLite in a temporary file with the in-process broker; PostgreSQL in
a throwaway database with Redis) the app is built in-process with ``workers=0`` (nothing runs
on its own) and served by uvicorn on a loopback port; the bench speaks GraphQL over HTTP like a
client app. A host signs up and tells their agent their rules in the home room ("$8,000 a
sponsored post, never below $6,000, no alcohol brands"). Guests open deal rooms and chat the
offline engine's path to a written offer: "Hi, we'd like a sponsored post on 15 March 2027,
50% upfront", "We can pay $7,000", "Yes, that works". After each round of lines (one line in
every room) every queued run is executed with ``runner.run_once()``, one run at a time, timed,
and the SQL statements and transactions it starts are counted by engine listeners
(``before_cursor_execute``, ``after_cursor_execute``, ``begin``). Before each timed run the
runner's payment-capture sweep is run untimed (``runner.sweep()``), so that no sample carries
it; the sweep is timed on its own.

(1) turn cost added by offers: in negotiating rooms with no offer (the opening line and the
    bid only) and in rooms with a live written offer (WRITTEN_AWAITING_BRAND), guests post the
    same neutral questions and each persona run (and its Distil run) is timed. The model here
    is bench/turns.py's ``ZeroClient`` (a fixed valid output per schema, no goal rulings, no
    sends), so both kinds of room get the same model output and only the pipeline differs.
    Statements that read offer tables (``offers``, ``offer_events``: the DEAL STAGE load and
    ``pane_end``) are counted and timed at the driver, and the same two reads are timed
    through ``Db`` against a ``SELECT 1`` in the same transaction. The claim's requeue of
    expired leases (every 5 s) stays in the samples, as in bench/turns.py.
(2) specialist runs: the Offer-Gen run and the agreement-draft run of every negotiated offer
    (offline engine), against the offline persona runs of the same negotiations; tokens from
    the ledger (``model_calls``), which for the offline engine are estimates of ~4 characters
    a token, priced at the configured models' list prices (``pricing.price``).
(3) mutations over HTTP, one at a time, interleaved per offer: ``{ __typename }`` (baseline),
    ``postMessage`` (baseline), ``room { stage offer { terms payment agreement } }``,
    ``approveOffer`` as the brand, then as the talent, ``payOffer`` with ``test_card_ok``.
(4) contention: K concurrent ``approveOffer`` calls on ONE offer (double clicks from both
    sides: brand and talent alternate) against K calls on K different offers (one brand
    approval each), in rounds; the outcomes (changed the offer / no-op / CONFLICT) are counted
    from the responses and the ``offer_events`` rows.

Benchmarks are not tests: nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import re
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
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
    open_room,
    other_test_runs,
    percentile,
    prepare_run,
    remove_tree,
    sign_up,
    wait_until_no_tests,
)
from sqlalchemy import event, select, text
from sqlalchemy.ext.asyncio import AsyncEngine
from turns import Backend, Room, SqlProbe, ZeroClient, is_query, post, settings_for

from dealroom.agents.models.base import AgentName, Usage, estimate_tokens
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.pricing import price
from dealroom.app import create_app
from dealroom.domain import offer_stage
from dealroom.jobs.agreement import AgreementTurn
from dealroom.jobs.distil import DistilTurn
from dealroom.jobs.handler import Handler
from dealroom.jobs.offer_gen import OfferGenTurn
from dealroom.jobs.persona import PersonaTurn
from dealroom.jobs.runner import TurnRunner
from dealroom.logging import configure as configure_logging
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import ModelCall, OfferEvent, Participant
from dealroom.persistence.offers import OfferRepository, pane_end
from dealroom.persistence.runs import RunRepository
from dealroom.realtime import Broker, create_broker
from dealroom.server import BackgroundServer, start_in_background
from dealroom.services.turns.context import RunSnapshot

HOST_HANDLE = "offerbenchhost"
RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, "
    "and I never work with alcohol brands."
)
NEGOTIATION = (
    "Hi, we'd like a sponsored post on 15 March 2027, 50% upfront",
    "We can pay $7,000",
    "Yes, that works",
)
"""The offline engine's path to a written offer (tests/support/offers.py): the host side
counters $7,500 on the bid and the visitor's agreement meets ``new-offer``."""
QUESTIONS = (
    "Could you tell me what a sponsored post usually includes?",
    "Our audience is mostly runners in their twenties and thirties.",
    "Do you also do stories, or only feed posts?",
    "What else do you need from us to move forward?",
    "Is there anything about the shoot we should prepare?",
    "Thanks, that is helpful.",
)
"""Neutral lines for (1): no proposal, the same in rooms with and without an offer."""

TYPENAME = "{ __typename }"
ROOM_READ = """
query($id: ID!) {
  room(id: $id) {
    stage
    offer {
      id stage version
      terms { deliverables fee { amount currency } dates usageRights exclusivity
              dueSlicePercent openQuestions }
      payment { currency fee duePercent due platformFee total remaining defaultSchedule }
      agreement { text version current }
    }
  }
}
"""
APPROVE = """
mutation($offerId: ID!, $version: Int) {
  approveOffer(offerId: $offerId, version: $version) { id stage version brandApprovedAt }
}
"""
PAY = """
mutation($offerId: ID!, $method: String!, $key: String!) {
  payOffer(offerId: $offerId, paymentMethod: $method, idempotencyKey: $key) {
    payment { id status total } offer { id stage }
  }
}
"""
OFFER_TABLES = re.compile(r"\b(offers|offer_events|agreements|payments|goal_events)\b")


# --- counting and timing SQL --------------------------------------------------------------


@dataclass
class TimedSql(SqlProbe):
    """``SqlProbe`` (statements, transactions) plus each statement's time at the driver, for
    the sequential phases (concurrent statements are paired per connection)."""

    timed: list[tuple[str, float]] = field(default_factory=list)

    def _before(self, conn: Any, *_args: Any) -> None:
        conn.info["bench_started"] = time.perf_counter()

    def _after(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        started = conn.info.pop("bench_started", None)
        if self.recording and started is not None:
            self.timed.append((statement, time.perf_counter() - started))

    def __enter__(self) -> TimedSql:
        super().__enter__()
        event.listen(self.engine.sync_engine, "before_cursor_execute", self._before)
        event.listen(self.engine.sync_engine, "after_cursor_execute", self._after)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine.sync_engine, "before_cursor_execute", self._before)
        event.remove(self.engine.sync_engine, "after_cursor_execute", self._after)
        super().__exit__(*exc)

    def start(self) -> None:
        super().start()
        self.timed = []

    def queries(self) -> int:
        return sum(map(is_query, self.statements))

    def offer_part(self) -> tuple[int, float]:
        """Statements that touch the written-offer tables: their count and driver time."""
        hits = [seconds for statement, seconds in self.timed if OFFER_TABLES.search(statement)]
        return len(hits), sum(hits)


# --- one run at a time ----------------------------------------------------------------------


@dataclass
class RunFigure:
    agent: str
    room_id: uuid.UUID
    run_id: uuid.UUID
    seconds: float
    statements: int
    """Statements other than transaction control (SQLite's BEGIN IMMEDIATE, PRAGMA)."""
    transactions: int
    offer_statements: int
    offer_seconds: float
    failed: bool
    trigger: str
    """message (a posted line) or delivery (a send from the other pane); "" for specialists."""
    sample: list[str]


@dataclass
class Recorder:
    """Wraps the shipped handlers to learn which run ``run_once`` executed."""

    run: RunSnapshot | None = None
    failed: bool = False

    def reset(self) -> None:
        self.run, self.failed = None, False

    def taken(self) -> RunSnapshot | None:
        """The run the last ``run_once`` executed, if any."""
        return self.run

    def wrap(self, handler: Handler) -> Handler:
        async def run(snapshot: RunSnapshot) -> None:
            self.run = snapshot
            try:
                await handler(snapshot)
            except Exception:
                self.failed = True
                raise

        return run

    def install(self, runner: TurnRunner) -> None:
        runner.register(AgentName.PERSONA, self.wrap(PersonaTurn(runner.deps)))
        runner.register(AgentName.DISTIL, self.wrap(DistilTurn(runner.deps)))
        runner.register(AgentName.OFFER_GEN, self.wrap(OfferGenTurn(runner.deps)))
        runner.register(AgentName.AGREEMENT, self.wrap(AgreementTurn(runner.deps)))


@dataclass
class Sweep:
    seconds: float
    statements: int
    transactions: int


@dataclass
class Harness:
    backend: Backend
    engine: AsyncEngine
    runner: TurnRunner
    sql: TimedSql
    http: httpx.AsyncClient
    host: dict[str, str]
    recorder: Recorder = field(default_factory=Recorder)
    sweeps: list[Sweep] = field(default_factory=list)

    async def run_one(self) -> RunFigure | None:
        """The capture sweep first (untimed here, timed apart), then one timed run."""
        self.sql.start()
        started = time.perf_counter()
        await self.runner.sweep()
        self.sweeps.append(
            Sweep(time.perf_counter() - started, self.sql.queries(), self.sql.transactions)
        )
        self.recorder.reset()
        self.sql.start()
        started = time.perf_counter()
        ran = await self.runner.run_once()
        took = time.perf_counter() - started
        self.sql.stop()
        snapshot = self.recorder.taken()
        if not ran or snapshot is None:
            return None
        count, seconds = self.sql.offer_part()
        return RunFigure(
            agent=snapshot.agent,
            room_id=snapshot.room_id,
            run_id=snapshot.id,
            seconds=took,
            statements=self.sql.queries(),
            transactions=self.sql.transactions,
            offer_statements=count,
            offer_seconds=seconds,
            failed=self.recorder.failed,
            trigger=trigger_of(snapshot),
            sample=list(self.sql.statements),
        )

    async def drain(self, limit: int = 10_000) -> list[RunFigure]:
        figures: list[RunFigure] = []
        while len(figures) < limit:
            figure = await self.run_one()
            if figure is None:
                break
            figures.append(figure)
        return figures


def trigger_of(run: RunSnapshot) -> str:
    if run.trigger_message_id is not None:
        return "message"
    return "delivery" if run.trigger_dispatch_id is not None else ""


# --- HTTP calls -------------------------------------------------------------------------------


@dataclass
class CallFigure:
    seconds: float
    statements: int
    transactions: int
    codes: list[str]
    """Error codes of the response; empty when it succeeded."""
    data: dict[str, Any] | None
    sample: list[str] = field(default_factory=list)


def body_of(query: str, variables: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"query": query, "variables": variables or {}}).encode()


async def send(
    http: httpx.AsyncClient, body: bytes, headers: dict[str, str]
) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    response = await http.post(
        "/graphql", content=body, headers={"Content-Type": "application/json", **headers}
    )
    took = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:300]}")
    payload: dict[str, Any] = response.json()
    return took, payload


def codes_of(payload: dict[str, Any]) -> list[str]:
    return [str(e.get("extensions", {}).get("code")) for e in payload.get("errors") or []]


async def timed_call(
    h: Harness,
    query: str,
    variables: dict[str, Any] | None,
    headers: dict[str, str],
) -> CallFigure:
    body = body_of(query, variables)
    h.sql.start()
    took, payload = await send(h.http, body, headers)
    h.sql.stop()
    return CallFigure(
        took,
        h.sql.queries(),
        h.sql.transactions,
        codes_of(payload),
        payload.get("data"),
        list(h.sql.statements),
    )


async def timed_post(h: Harness, room: Room, text: str) -> CallFigure:
    h.sql.start()
    took = await post(h.http, room, text)
    h.sql.stop()
    return CallFigure(took, h.sql.queries(), h.sql.transactions, [], None, list(h.sql.statements))


# --- the phases -------------------------------------------------------------------------------


@dataclass
class Deal:
    room: Room
    offer_id: str | None = None
    version: int = 0


async def open_deals(h: Harness, count: int) -> list[Deal]:
    deals = []
    for _ in range(count):
        room_id, guest_key = await open_room(h.http, HOST_HANDLE)
        assert guest_key is not None
        deals.append(Deal(Room(room_id, {"X-Guest-Key": guest_key})))
    return deals


async def negotiate(h: Harness, deals: list[Deal], lines: Sequence[str]) -> list[RunFigure]:
    """Each line posted in every room, then every queued run executed one at a time."""
    figures: list[RunFigure] = []
    for line in lines:
        for deal in deals:
            await post(h.http, deal.room, line)
        figures += await h.drain()
    return figures


async def find_offers(h: Harness, deals: list[Deal]) -> None:
    for deal in deals:
        data = await gql(h.http, ROOM_READ, {"id": deal.room.room_id}, deal.room.headers)
        offer = data["room"]["offer"]
        if offer is not None and offer["stage"] == "WRITTEN_AWAITING_BRAND":
            deal.offer_id, deal.version = str(offer["id"]), int(offer["version"])


async def turn_phase(
    h: Harness, without: list[Deal], with_offer: list[Deal], messages: int
) -> dict[str, list[RunFigure]]:
    """(1) the same neutral line in rooms with and without an offer, ZeroClient answering,
    rooms alternating so that both kinds share the machine's drift."""
    ledger = h.runner.deps.ledger
    offline, ledger.client = ledger.client, ZeroClient()
    kinds = {d.room.room_id: "no offer" for d in without}
    kinds |= {d.room.room_id: "live offer" for d in with_offer}
    order = [d for pair in zip(without, with_offer, strict=False) for d in pair]
    found: dict[str, list[RunFigure]] = {"no offer": [], "live offer": []}
    try:
        for n in range(messages):
            for deal in order:
                await post(h.http, deal.room, QUESTIONS[n % len(QUESTIONS)])
                for figure in await h.drain():
                    found[kinds[str(figure.room_id)]].append(figure)
    finally:
        ledger.client = offline
    return found


@dataclass
class ReadFigure:
    """One unit of work timing, through ``Db``, the offer reads a persona run makes, against a
    ``SELECT 1`` in the same open transaction."""

    select_one: float
    current_offer: float
    pane_end: float


async def offer_reads(h: Harness, deals: list[Deal], repeat: int) -> list[ReadFigure]:
    db = Db(h.runner.deps.sessionmaker)
    try:
        ids = [uuid.UUID(d.room.room_id) for d in deals]
        rows = await db.execute(
            select(Participant.room_id, Participant.id).where(
                Participant.room_id.in_(ids), Participant.key == "visitor"
            )
        )
        panes: list[tuple[uuid.UUID, uuid.UUID]] = [(r.room_id, r.id) for r in rows]
    finally:
        await db.close()
    figures = []
    for _ in range(repeat):
        for room_id, pane_id in panes:
            db = Db(h.runner.deps.sessionmaker)
            try:
                await db.execute(text("SELECT 1"))  # the transaction is open from here
                started = time.perf_counter()
                await db.execute(text("SELECT 1"))
                one = time.perf_counter()
                await OfferRepository(db).current(room_id)
                current = time.perf_counter()
                await pane_end(db, room_id, pane_id)
                end = time.perf_counter()
                await db.commit()
            finally:
                await db.close()
            figures.append(ReadFigure(one - started, current - one, end - current))
    return figures


@dataclass
class MutationFigures:
    calls: dict[str, list[CallFigure]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def add(self, name: str, figure: CallFigure, expect: str | None = None) -> None:
        self.calls.setdefault(name, []).append(figure)
        stage = _stage_in(figure.data)
        if figure.codes or (expect is not None and stage != expect):
            self.failures.append(f"{name}: {figure.codes or stage}")


def _stage_in(data: dict[str, Any] | None) -> str | None:
    if not data:
        return None
    for value in data.values():
        if isinstance(value, dict):
            if "stage" in value:
                return str(value["stage"])
            offer = value.get("offer")
            if isinstance(offer, dict) and "stage" in offer:
                return str(offer["stage"])
    return None


async def mutation_phase(h: Harness, deals: list[Deal], baseline_room: Room) -> MutationFigures:
    """(3) per offer, one call at a time: the two baselines, the read, both approvals, pay."""
    out = MutationFigures()
    for n, deal in enumerate(deals):
        assert deal.offer_id is not None
        visitor = deal.room.headers
        offer = {"offerId": deal.offer_id, "version": deal.version}
        out.add("{ __typename }", await timed_call(h, TYPENAME, None, visitor))
        out.add("postMessage", await timed_post(h, baseline_room, QUESTIONS[n % len(QUESTIONS)]))
        out.add("room read", await timed_call(h, ROOM_READ, {"id": deal.room.room_id}, visitor))
        out.add(
            "approveOffer (brand)",
            await timed_call(h, APPROVE, offer, visitor),
            "BRAND_ACKED_AWAITING_TALENT",
        )
        out.add(
            "approveOffer (talent)",
            await timed_call(h, APPROVE, offer, h.host),
            "BOOKED_AWAITING_PAYMENT",
        )
        pay = {"offerId": deal.offer_id, "method": "test_card_ok", "key": secrets.token_hex(8)}
        out.add(
            "payOffer (test_card_ok)",
            await timed_call(h, PAY, pay, visitor),
            "BOOKED_PAYMENT_HELD",
        )
    return out


@dataclass
class Burst:
    kind: str
    seconds: list[float]
    """Each call's latency."""
    wall: float
    statements: int
    transactions: int
    outcomes: dict[str, int]
    final_stages: list[str]


async def one_offer_burst(h: Harness, deal: Deal, k: int, talent_first: bool) -> Burst:
    """K approvals of one offer at once, brand and talent alternating (double clicks from
    both sides); ``talent_first`` sends a talent call first, which may reach the server
    before any brand approval."""
    assert deal.offer_id is not None
    offer = {"offerId": deal.offer_id, "version": deal.version}
    body = body_of(APPROVE, offer)
    first, second = ("talent", "brand") if talent_first else ("brand", "talent")
    seats = [first if i % 2 == 0 else second for i in range(k)]
    headers = [deal.room.headers if seat == "brand" else h.host for seat in seats]
    h.sql.start()
    started = time.perf_counter()
    results = await asyncio.gather(*(send(h.http, body, hdr) for hdr in headers))
    wall = time.perf_counter() - started
    h.sql.stop()
    changed = await approval_events(h, deal.offer_id)
    outcomes = tally(seats, [payload for _took, payload in results], changed)
    final = await gql(h.http, ROOM_READ, {"id": deal.room.room_id}, deal.room.headers)
    # The one valid end: the brand's stamp once, the booking at most once, and the stage
    # that says which of the two happened.
    booked = changed.get("host", 0) == 1
    expected = "BOOKED_AWAITING_PAYMENT" if booked else "BRAND_ACKED_AWAITING_TALENT"
    valid = changed.get("visitor", 0) == 1 and changed.get("host", 0) <= 1
    outcomes["rounds ending in an invalid state"] = int(
        not valid or final["room"]["stage"] != expected
    )
    return Burst(
        "one offer",
        [took for took, _ in results],
        wall,
        h.sql.queries(),
        h.sql.transactions,
        dict(outcomes),
        [str(final["room"]["stage"])],
    )


async def many_offers_burst(h: Harness, deals: list[Deal]) -> Burst:
    """One brand approval on each of K offers, all at once."""
    bodies = [body_of(APPROVE, {"offerId": d.offer_id, "version": d.version}) for d in deals]
    h.sql.start()
    started = time.perf_counter()
    results = await asyncio.gather(
        *(send(h.http, body, d.room.headers) for body, d in zip(bodies, deals, strict=True))
    )
    wall = time.perf_counter() - started
    h.sql.stop()
    changed: Counter[str] = Counter()
    for deal in deals:
        assert deal.offer_id is not None
        changed.update(await approval_events(h, deal.offer_id))
    outcomes = tally(["brand"] * len(deals), [payload for _took, payload in results], changed)
    stages = [str(_stage_in(payload.get("data")) or "error") for _took, payload in results]
    return Burst(
        "K offers",
        [took for took, _ in results],
        wall,
        h.sql.queries(),
        h.sql.transactions,
        dict(outcomes),
        stages,
    )


def tally(
    seats: Sequence[str], payloads: Sequence[dict[str, Any]], changed: dict[str, int]
) -> Counter[str]:
    """Outcomes per seat: changed the offer (an ``offer_events`` row by that seat), no-op (a
    success that wrote nothing: a repeated approval), or the error code."""
    outcomes: Counter[str] = Counter()
    succeeded: Counter[str] = Counter()
    for seat, payload in zip(seats, payloads, strict=True):
        codes = codes_of(payload)
        if codes:
            outcomes[f"{seat} {'/'.join(codes)}"] += 1
        else:
            succeeded[seat] += 1
    for seat, actor in (("brand", "visitor"), ("talent", "host")):
        if seat in seats:
            outcomes[f"{seat} changed the offer"] += changed.get(actor, 0)
            outcomes[f"{seat} no-op"] += succeeded[seat] - changed.get(actor, 0)
    return outcomes


async def approval_events(h: Harness, offer_id: str) -> dict[str, int]:
    """offer_events rows written by approvals (actor = the approving seat), per seat."""
    db = Db(h.runner.deps.sessionmaker)
    try:
        actors = await db.scalars(
            select(OfferEvent.actor).where(OfferEvent.offer_id == uuid.UUID(offer_id))
        )
        return dict(Counter(a for a in actors if a in ("visitor", "host")))
    finally:
        await db.close()


@dataclass
class Tokens:
    agent: str
    model: str
    input_tokens: int
    output_tokens: int


async def ledger_rows(h: Harness, run_ids: set[uuid.UUID]) -> dict[uuid.UUID, list[Tokens]]:
    db = Db(h.runner.deps.sessionmaker)
    try:
        rows = await db.scalars(select(ModelCall).where(ModelCall.ok.is_(True)))
        found: dict[uuid.UUID, list[Tokens]] = {}
        for row in rows:
            if row.run_id in run_ids:
                found.setdefault(row.run_id, []).append(
                    Tokens(row.agent, row.model, row.input_tokens, row.output_tokens)
                )
        return found
    finally:
        await db.close()


async def run_backend(name: str, args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-offers-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    broker: Broker | None = None
    server: BackgroundServer | None = None
    result: dict[str, Any] = {"backend": name, "phase_seconds": {}}
    timings: dict[str, float] = result["phase_seconds"]
    try:
        if name == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_offers")
            backend = Backend(name, database_url, args.redis_url, folder)
        else:
            backend = Backend(name, f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}", None, folder)
        engine = create_engine(backend.url)
        await upgrade(engine)
        broker = create_broker(backend.redis_url)
        await broker.start()
        settings = settings_for(backend, workers=0)
        app = create_app(settings, engine=engine, broker=broker, model=OfflineClient(delay=0.0))
        runner: TurnRunner = app.state.dealroom.runner
        server = await start_in_background(app)
        result["other_pytest_at_start"] = other_test_runs()
        result["models"] = {
            "persona": settings.persona_model,
            "distil": settings.distil_model,
            "offer_gen": settings.offer_gen_model,
            "agreement": settings.agreement_model,
        }
        async with http_client(f"http://127.0.0.1:{server.port}", connections=64) as http:
            with TimedSql(engine) as sql:
                host = await sign_up(http, HOST_HANDLE, "Dev Raman")
                h = Harness(backend, engine, runner, sql, http, host)
                h.recorder.install(runner)
                home = await gql(http, "query { me { homeRoom { id } } }", headers=host)
                await post(h.http, Room(home["me"]["homeRoom"]["id"], host), RULES)
                await h.drain()

                started = time.monotonic()
                total = args.offers + args.rounds * (1 + args.k)
                offered = await open_deals(h, total)
                bare = await open_deals(h, args.turn_rooms)
                negotiation = await negotiate(h, offered + bare, NEGOTIATION[:2])
                negotiation += await negotiate(h, offered, NEGOTIATION[2:])
                await find_offers(h, offered)
                with_offer = [d for d in offered if d.offer_id is not None]
                result["rooms_without_an_offer_after_agreement"] = len(offered) - len(with_offer)
                result["negotiation"] = negotiation
                result["outstanding_after_negotiation"] = await outstanding_runs(h)
                timings["negotiation"] = time.monotonic() - started

                gc.collect()
                started = time.monotonic()
                live = with_offer[: args.turn_rooms]
                result["turns"] = await turn_phase(h, bare, live, args.messages)
                result["reads"] = {
                    "no offer": await offer_reads(h, bare, args.messages),
                    "live offer": await offer_reads(h, live, args.messages),
                }
                timings["turn cost"] = time.monotonic() - started

                gc.collect()
                started = time.monotonic()
                sequential = with_offer[: args.offers]
                rest = with_offer[args.offers :]
                result["mutations"] = await mutation_phase(h, sequential, bare[0].room)
                timings["mutations"] = time.monotonic() - started

                gc.collect()
                started = time.monotonic()
                bursts: list[Burst] = []
                for r in range(args.rounds):
                    group = rest[r * (1 + args.k) : (r + 1) * (1 + args.k)]
                    if len(group) < 1 + args.k:
                        break
                    bursts.append(await one_offer_burst(h, group[0], args.k, r % 2 == 1))
                    bursts.append(await many_offers_burst(h, group[1:]))
                result["bursts"] = bursts
                timings["contention"] = time.monotonic() - started

                result["ledger"] = await ledger_rows(h, {f.run_id for f in negotiation})
                result["sweeps"] = h.sweeps
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
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)
    return result


async def outstanding_runs(h: Harness) -> int:
    db = Db(h.runner.deps.sessionmaker)
    try:
        return await RunRepository(db).outstanding(h.runner.deps.clock.now())
    finally:
        await db.close()


# --- report -----------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.1f}"


def p(values: Sequence[float], q: float) -> float:
    return percentile(sorted(values), q)


def spread(values: Sequence[int]) -> str:
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low}" if low == high else f"{low}-{high}"


def ratio(a: float, b: float) -> str:
    return "n/a" if not b or a != a or b != b else f"{a / b:.2f}x"


def usd(value: Decimal) -> str:
    return f"${value:.4f}"


def shape(statement: str) -> str:
    """A statement with its column list folded."""
    if statement.upper().startswith("SELECT") and " FROM " in statement:
        head, rest = statement.split(" FROM ", 1)
        return f"SELECT <{head.count(',') + 1} cols> FROM {rest}"
    return statement


HEADER = (
    f"{'':<34}{'n':>5}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}{'stmts':>8}{'tx':>5}"
)


def row(title: str, seconds: Sequence[float], statements: Sequence[int], tx: Sequence[int]) -> str:
    if not seconds:
        return f"{title:<34}{0:>5}"
    return (
        f"{title:<34}{len(seconds):>5}{ms(p(seconds, 50)):>9}{ms(p(seconds, 90)):>9}"
        f"{ms(p(seconds, 99)):>9}{ms(max(seconds)):>9}{spread(statements):>8}{spread(tx):>5}"
    )


def run_row(title: str, runs: Sequence[RunFigure]) -> str:
    return row(
        title,
        [r.seconds for r in runs],
        [r.statements for r in runs],
        [r.transactions for r in runs],
    )


def call_row(title: str, calls: Sequence[CallFigure]) -> str:
    return row(
        title,
        [c.seconds for c in calls],
        [c.statements for c in calls],
        [c.transactions for c in calls],
    )


def cost_of(calls: Sequence[Tokens]) -> Decimal:
    return sum((price(t.model, Usage(t.input_tokens, t.output_tokens, 0)) or Decimal(0)
                for t in calls), Decimal(0))  # fmt: skip


def report_turns(result: dict[str, Any]) -> list[str]:
    turns: dict[str, list[RunFigure]] = result["turns"]
    lines = [
        "(1) turn cost added by offers: ZeroClient model (same output in both kinds of room), "
        "one run_once() at a time",
        HEADER + f"{'offer stmts':>12}{'offer ms p50':>13}",
    ]
    groups = {}
    for agent in ("persona", "distil"):
        for kind in ("no offer", "live offer"):
            runs = [r for r in turns[kind] if r.agent == agent and not r.failed]
            groups[(agent, kind)] = runs
            lines.append(
                run_row(f"{agent} run, {kind}", runs)
                + f"{spread([r.offer_statements for r in runs]):>12}"
                f"{ms(p([r.offer_seconds for r in runs], 50)):>13}"
            )
    for agent in ("persona", "distil"):
        bare, live = groups[(agent, "no offer")], groups[(agent, "live offer")]
        if not bare or not live:
            continue
        b, lv = [r.seconds for r in bare], [r.seconds for r in live]
        stmts = ratio(
            statistics.mean(r.statements for r in live),
            statistics.mean(r.statements for r in bare),
        )
        lines.append(
            f"  {agent}: live offer / no offer = p50 {ratio(p(lv, 50), p(b, 50))}, "
            f"p99 {ratio(p(lv, 99), p(b, 99))}, statements {stmts}; "
            f"statements on offer tables {spread([r.offer_statements for r in live])} of "
            f"{spread([r.statements for r in live])}, "
            f"{ms(p([r.offer_seconds for r in live], 50))} ms of {ms(p(lv, 50))} ms at p50 "
            f"({100 * p([r.offer_seconds for r in live], 50) / p(lv, 50):.1f}%, driver time only)"
        )
    reads: dict[str, list[ReadFigure]] = result["reads"]
    for kind, figures in reads.items():
        one = p([f.select_one for f in figures], 50)
        current = p([f.current_offer for f in figures], 50)
        end = p([f.pane_end for f in figures], 50)
        lines.append(
            f"  the two reads through Db in an open transaction, {kind} (n {len(figures)}), p50: "
            f"current offer {ms(current)} ms ({ratio(current, one)} a SELECT 1), pane_end "
            f"{ms(end)} ms ({ratio(end, one)}); SELECT 1 {ms(one)} ms"
        )
    vocabulary = estimate_tokens(offer_stage.vocabulary())
    block = estimate_tokens(offer_stage.deal_stage_block(offer_stage.Stage.WRITTEN_AWAITING_BRAND))
    models = result["models"]
    added = Usage(vocabulary + block, 0, 0)
    per_turn = sum(
        (price(models[agent], added) or Decimal(0) for agent in ("persona", "distil")), Decimal(0)
    )
    lines.append(
        f"  prompt text the written offers add to every persona and Distil call: the stage "
        f"vocabulary in the system instruction ~{vocabulary} tokens + the DEAL STAGE block "
        f"~{block} tokens "
        f"(estimates); a turn (persona + Distil) ~{2 * (vocabulary + block)} input tokens, "
        f"${per_turn:.5f} at list price, uncached"
    )
    failed = sum(r.failed for group in turns.values() for r in group)
    if failed:
        lines.append(f"  failed runs (excluded): {failed}")
    return lines


def report_specialists(result: dict[str, Any]) -> list[str]:
    runs: list[RunFigure] = [r for r in result["negotiation"] if not r.failed]
    ledger: dict[uuid.UUID, list[Tokens]] = result["ledger"]
    models = result["models"]
    lines = [
        "(2) specialist runs, offline engine, one run_once() at a time (the negotiation's "
        "persona and Distil runs as the baseline)",
        HEADER + f"{'offer stmts':>12}{'in tokens':>10}{'out tokens':>11}",
    ]
    groups = {
        "persona run (visitor's line)": [
            r for r in runs if r.agent == "persona" and r.trigger == "message"
        ],
        "persona run (a delivery)": [
            r for r in runs if r.agent == "persona" and r.trigger == "delivery"
        ],
        "distil run": [r for r in runs if r.agent == "distil"],
        "offer_gen run": [r for r in runs if r.agent == "offer_gen"],
        "agreement run": [r for r in runs if r.agent == "agreement"],
    }
    for title, group in groups.items():
        calls = [ledger.get(r.run_id, []) for r in group]
        ins = [sum(t.input_tokens for t in c) for c in calls]
        outs = [sum(t.output_tokens for t in c) for c in calls]
        lines.append(
            run_row(title, group) + f"{spread([r.offer_statements for r in group]):>12}"
            f"{statistics.median(ins) if ins else 0:>10,.0f}"
            f"{statistics.median(outs) if outs else 0:>11,.0f}"
        )
    base = p([r.seconds for r in groups["persona run (visitor's line)"]], 50)
    for name in ("offer_gen run", "agreement run"):
        group = groups[name]
        lines.append(
            f"  {name} / persona run (visitor's line), p50: "
            f"{ratio(p([r.seconds for r in group], 50), base)}"
        )
    gen = [ledger.get(r.run_id, []) for r in groups["offer_gen run"]]
    agr = [ledger.get(r.run_id, []) for r in groups["agreement run"]]
    if gen and agr:
        gen_cost = statistics.median(cost_of(c) for c in gen)
        agr_cost = statistics.median(cost_of(c) for c in agr)
        by_room: dict[uuid.UUID, list[Tokens]] = {}
        for r in runs:
            by_room.setdefault(r.room_id, []).extend(ledger.get(r.run_id, []))
        offer_rooms = {r.room_id for r in groups["offer_gen run"]}
        whole = [cost_of(by_room[room]) for room in offer_rooms]
        whole_tokens = [sum(t.input_tokens for t in by_room[room]) for room in offer_rooms]
        lines.append(
            f"  estimated price per offer (median; offline tokens are estimates at ~4 chars a "
            f"token; no thinking, no schema): Offer-Gen {usd(gen_cost)} ({models['offer_gen']}), "
            f"agreement {usd(agr_cost)} ({models['agreement']}), together "
            f"{usd(gen_cost + agr_cost)}; the whole negotiation to the offer (3 visitor lines, "
            f"every call in the room) {usd(statistics.median(whole))}, "
            f"{statistics.median(whole_tokens):,.0f} input tokens"
        )
    sweeps: list[Sweep] = result["sweeps"]
    lines.append(
        "  payment-capture sweep (run_once runs it every 5 s per process; nothing pending): "
        f"n {len(sweeps)}, p50 {ms(p([s.seconds for s in sweeps], 50))} ms, "
        f"p99 {ms(p([s.seconds for s in sweeps], 99))} ms, "
        f"{spread([s.statements for s in sweeps])} statement(s), "
        f"{spread([s.transactions for s in sweeps])} transaction(s)"
    )
    return lines


def report_mutations(result: dict[str, Any]) -> list[str]:
    figures: MutationFigures = result["mutations"]
    calls = figures.calls
    lines = [
        "(3) over HTTP, one call at a time (in-process uvicorn, loopback), interleaved per offer",
        HEADER + f"{'/ postMessage':>15}{'/ __typename':>14}",
    ]
    post_p50 = p([c.seconds for c in calls.get("postMessage", [])], 50)
    typename_p50 = p([c.seconds for c in calls.get("{ __typename }", [])], 50)
    for name, group in calls.items():
        p50 = p([c.seconds for c in group], 50)
        lines.append(
            call_row(name, group) + f"{ratio(p50, post_p50):>15}{ratio(p50, typename_p50):>14}"
        )
    lines.append(f"  failures: {figures.failures or 'none'}")
    return lines


def report_bursts(result: dict[str, Any], args: argparse.Namespace) -> list[str]:
    bursts: list[Burst] = result["bursts"]
    calls = result["mutations"].calls
    sequential = p([c.seconds for c in calls.get("approveOffer (brand)", [])], 50)
    lines = [
        f"(4) contention: {args.k} concurrent approveOffer calls, {len(bursts) // 2} rounds",
        f"{'':<38}{'calls':>6}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'burst p50':>11}"
        f"{'stmts/call':>11}{'tx/call':>8}{'/ sequential p50':>18}",
    ]
    by_kind: dict[str, list[Burst]] = {}
    for burst in bursts:
        by_kind.setdefault(burst.kind, []).append(burst)
    titles = {
        "one offer": "ONE offer (brand, talent alternate)",
        "K offers": "K different offers (brand each)",
    }
    p50s = {}
    for kind, group in by_kind.items():
        seconds = [s for b in group for s in b.seconds]
        n = len(seconds)
        statements = sum(b.statements for b in group)
        transactions = sum(b.transactions for b in group)
        p50s[kind] = (p(seconds, 50), p(seconds, 99))
        lines.append(
            f"{titles[kind]:<38}{n:>6}{ms(p(seconds, 50)):>9}{ms(p(seconds, 99)):>9}"
            f"{ms(max(seconds)):>9}{ms(p([b.wall for b in group], 50)):>11}"
            f"{statements / n:>11.1f}{transactions / n:>8.1f}"
            f"{ratio(p(seconds, 50), sequential):>18}"
        )
    if len(p50s) == 2:
        (a50, a99), (b50, b99) = p50s["one offer"], p50s["K offers"]
        lines.append(f"  ONE offer / K offers: p50 {ratio(a50, b50)}, p99 {ratio(a99, b99)}")
    for kind, group in by_kind.items():
        outcomes: Counter[str] = Counter()
        for burst in group:
            outcomes.update(burst.outcomes)
        stages = Counter(s for b in group for s in b.final_stages)
        lines.append(
            f"  outcomes, {titles[kind]}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
            + "; "
            + ("final stage per round: " if kind == "one offer" else "stage returned: ")
            + ", ".join(f"{k} x{v}" for k, v in sorted(stages.items()))
        )
    return lines


def report_backend(result: dict[str, Any], args: argparse.Namespace) -> list[str]:
    name = result["backend"]
    label = "SQLite (file) + in-process broker" if name == "sqlite" else "PostgreSQL + Redis"
    negotiation: list[RunFigure] = result["negotiation"]
    agents = Counter(r.agent for r in negotiation)
    lines = [
        f"\n=== {label} ===",
        f"pytest processes at start/end: {result['other_pytest_at_start']}"
        f"/{result['other_pytest_at_end']}",
        "phase seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in result["phase_seconds"].items()),
        f"negotiation: {args.offers + args.rounds * (1 + args.k)} rooms to a written offer "
        f"({result['rooms_without_an_offer_after_agreement']} without one after agreement) + "
        f"{args.turn_rooms} rooms left at the bid; runs {dict(agents)}, failed "
        f"{sum(r.failed for r in negotiation)}, outstanding after "
        f"{result['outstanding_after_negotiation']}",
    ]
    lines += report_turns(result)
    lines += report_specialists(result)
    lines += report_mutations(result)
    lines += report_bursts(result, args)
    return lines


def statement_listing(result: dict[str, Any]) -> list[str]:
    lines = []
    live = [r for r in result["turns"]["live offer"] if r.agent == "persona"]
    samples: list[tuple[str, list[str]]] = []
    if live:
        samples.append(("persona run, live offer (ZeroClient)", live[-1].sample))
    for name in ("offer_gen", "agreement"):
        found = [r for r in result["negotiation"] if r.agent == name]
        if found:
            samples.append((f"{name} run", found[-1].sample))
    for name in ("room read", "approveOffer (brand)", "approveOffer (talent)",
                 "payOffer (test_card_ok)"):  # fmt: skip
        calls = result["mutations"].calls.get(name)
        if calls:
            samples.append((name, calls[-1].sample))
    for title, statements in samples:
        queries = [s for s in statements if is_query(s)]
        lines.append(f"\nstatements of one {title} ({result['backend']}, {len(queries)}):")
        for index, statement in enumerate(queries, 1):
            mark = "*" if OFFER_TABLES.search(statement) else " "
            lines.append(f" {mark}{index:>2}. {shape(statement)[:150]}")
    return lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (well under a minute)")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--offers", type=int, help="(3) offers, one call at a time; default 60")
    parser.add_argument("--turn-rooms", type=int, help="(1) rooms of each kind; default 20")
    parser.add_argument("--messages", type=int, help="(1) neutral lines per room; default 6")
    parser.add_argument("--k", type=int, help="(4) concurrent approvals per burst; default 8")
    parser.add_argument("--rounds", type=int, help="(4) bursts of each kind; default 8")
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--wait-idle", type=float, default=0.0, help="wait for pytest to end")
    parser.add_argument(
        "--statements", action="store_true", help="list the statements of one of each call"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    args.offers = args.offers or (8 if args.quick else 60)
    args.turn_rooms = args.turn_rooms or (4 if args.quick else 20)
    args.messages = args.messages or (2 if args.quick else 6)
    args.k = args.k or (4 if args.quick else 8)
    args.rounds = args.rounds or (2 if args.quick else 8)
    if min(args.offers, args.turn_rooms, args.messages, args.rounds) < 1 or args.k < 2:
        parser.error("sizes must be >= 1 and --k >= 2")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    configure_logging(level=logging.WARNING)  # info lines per approval would drown the figures
    prepare_run(args.wait_idle)
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    print("\n".join(machine_summary()))
    print(
        f"command: {' '.join(sys.argv)}; offers through the offline engine; turn cost with "
        f"bench/turns.py's ZeroClient"
    )
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
    if args.statements:
        for result in results:
            print("\n".join(statement_listing(result)))
    if args.json:
        # The ledger is keyed by run id; JSON keys must be strings.
        plain = [r | {"ledger": {str(k): v for k, v in r["ledger"].items()}} for r in results]
        args.json.write_text(json.dumps(plain, indent=1, default=_json_default))


def _json_default(value: object) -> object:
    if isinstance(value, RunFigure | CallFigure | Burst | Sweep | Tokens | MutationFigures):
        data = dict(vars(value))
        data.pop("sample", None)
        return data
    return str(value)


if __name__ == "__main__":
    main()
