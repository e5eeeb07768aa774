"""Token benchmark: input tokens per agent call against turn number over a 200-turn deal
room, and what one exchange costs at Gemini list prices.

Targets (issue): turn 200 costs <= 1.3x turn 10; an exchange costs <= $0.02 (the seed measured
$0.15-0.20); the stable part of each prompt goes first so that implicit prompt caching can
apply.

Method. The real turn pipeline on the offline engine: a host signs up and tells their agent
their rules in the home room; a guest opens the host's deal room and posts a deterministic
scripted conversation (proposals with amounts, questions, small talk) over GraphQL
(``postMessage``, in-process uvicorn). After each message every queued run is executed with
``runner.run_once()`` in a fixed order: the persona of the message, then its Distil run, then
the deliveries the persona's sends caused (the host pane's ruling, the visitor pane's answer).
That order is what two concurrent workers give when the model takes seconds; the Distil
handler is wrapped so that it runs after its message's persona. Time is a manual clock moved
45 s between messages, and past ``session_pause_minutes`` between sittings.

Token counts are the offline engine's estimate, about four characters a token of the request
text (system instruction + prompt): what the ledger (``model_calls``) records; the script
checks its own sums against the ledger. An exchange is every call one visitor message causes:
its persona and Distil calls, any context-filter calls, and the deliveries. Cost is
``pricing.price`` with gemini-2.5-flash for persona and Distil and gemini-2.5-flash-lite for
the filter, on the estimated input and output tokens, in four readings: no caching; the system
instruction billed as cached on every call; the same only where the request reaches the
implicit-caching minimum; and an upper bound where everything a call shares as a prefix with
the previous call of the same agent in the same pane is billed as cached.

Not in the estimate: thinking tokens (gemini-2.5-flash thinks by default and bills thinking
as output; the Gemini client sets no thinking budget) and the response schema sent with each
call. Both are printed as separate figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
from _client import (
    DEFAULT_PG_URL,
    DEFAULT_REDIS_URL,
    UNTHROTTLED,
    create_pg_database,
    drop_pg_database,
    gql,
    http_client,
    machine_summary,
    open_room,
    post_body,
    remove_tree,
    sign_up,
)
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.agents import context_filter, distil, persona
from dealroom.agents.models.base import (
    AgentName,
    Chunk,
    Generation,
    ModelRequest,
    Usage,
    estimate_tokens,
)
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.pricing import price
from dealroom.agents.render import document
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.jobs.distil import DistilTurn
from dealroom.jobs.persona import PersonaTurn
from dealroom.jobs.runner import TurnRunner
from dealroom.persistence.db import Db
from dealroom.persistence.engine import create_engine, create_sessionmaker
from dealroom.persistence.migrate import upgrade
from dealroom.persistence.models import Dispatch, ModelCall
from dealroom.realtime import create_broker
from dealroom.server import BackgroundServer, start_in_background
from dealroom.services.turns.context import RunSnapshot

HOST_HANDLE = "tokenbenchhost"
RULES = (
    "My fee for a sponsored post is $8,000, never below $6,000, and I never work with "
    "alcohol brands. Stories are $1,500 each. I need two weeks' notice for any shoot."
)
MODELS = {
    AgentName.PERSONA.value: "gemini-2.5-flash",
    AgentName.DISTIL.value: "gemini-2.5-flash",
    AgentName.CONTEXT_FILTER.value: "gemini-2.5-flash-lite",
}
CACHE_MINIMUM = {"gemini-2.5-flash": 2048, "gemini-2.5-flash-lite": 2048}
"""Implicit caching's minimum input tokens, from ai.google.dev/gemini-api/docs/caching (page
updated 2026-10-13: 2,048 for 2.5 Flash; earlier versions of the page said 1,024). 2.5
Flash-Lite is not listed there; the same minimum is assumed."""
SYSTEMS = {
    AgentName.PERSONA.value: persona.SYSTEM,
    AgentName.DISTIL.value: distil.SYSTEM,
    AgentName.CONTEXT_FILTER.value: context_filter.PROMPT,
}
MESSAGE_GAP = timedelta(seconds=45)
REPORT_TURNS = (1, 10, 50, 100, 150, 200)


# --- the clock and the recording model ----------------------------------------------------


class BenchClock:
    """Advances a millisecond on every read (strict write order) and jumps on ``advance``
    (the same contract as tests/support/clock.py; bench scripts do not import tests)."""

    def __init__(self) -> None:
        self._now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        self._now += timedelta(milliseconds=1)
        return self._now

    def advance(self, delta: timedelta) -> None:
        self._now += delta


@dataclass
class Call:
    """One model call as the model would receive it."""

    turn: int
    agent: str
    pane: str
    room_kind: str
    trigger: str
    input_tokens: int
    output_tokens: int
    system_tokens: int
    prompt_tokens: int
    prefix_tokens: int
    """Tokens of the longest prefix shared with the previous call of this agent in this pane."""
    session_lines: int
    sections: dict[str, int]
    """Estimated tokens of the prompt's variable parts (memory, deliveries, session, plan)."""
    memory_branches: dict[str, int]
    """Estimated tokens of each top-level branch of the memory the call saw."""


@dataclass
class RecordingClient:
    """The offline engine, unchanged, with every request and its usage recorded."""

    inner: OfflineClient
    engine: str = "offline"
    turn: int = 0
    calls: list[Call] = field(default_factory=list)
    _previous: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def _record(self, request: ModelRequest, usage: Usage) -> None:
        context = request.context
        pane = str(context.get("pane", ""))
        full = request.text
        key = (request.agent.value, str(context.get("room_kind", "")), pane)
        before = self._previous.get(key, "")
        self._previous[key] = full
        shared = full[: common_prefix(before, full)]
        session = context.get("session") or []
        trigger = context.get("trigger")
        sections = {
            "memory": estimate_tokens(document(context.get("memory"))),
            "deliveries": estimate_tokens(
                document(context.get("deliveries", context.get("dispatches")))
            ),
            "session": estimate_tokens(
                "\n".join(f"{line['author']}: {line['body']}" for line in session)
            ),
            "plan": estimate_tokens(str(context.get("plan") or "")),
        }
        self.calls.append(
            Call(
                turn=self.turn,
                agent=request.agent.value,
                pane=pane,
                room_kind=str(context.get("room_kind", "")),
                trigger=str(trigger.get("kind")) if isinstance(trigger, dict) else "",
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                system_tokens=estimate_tokens(request.system),
                prompt_tokens=estimate_tokens(request.prompt),
                prefix_tokens=estimate_tokens(shared),
                session_lines=len(session),
                sections=sections,
                memory_branches={
                    str(key): estimate_tokens(document({key: value}))
                    for key, value in dict(context.get("memory") or {}).items()
                },
            )
        )

    async def generate(self, request: ModelRequest) -> Generation:
        generation = await self.inner.generate(request)
        self._record(request, generation.usage)
        return generation

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        usage = Usage()
        async for chunk in self.inner.stream(request):
            if chunk.usage is not None:
                usage = chunk.usage
            yield chunk
        self._record(request, usage)

    async def close(self) -> None:
        await self.inner.close()


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # binary search on equal slices (C-speed comparisons)
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


# --- the scripted visitor ------------------------------------------------------------------


def visitor_line(n: int, *, proposals: bool = True) -> str:
    """The visitor's n-th message (0-based): a sitting of ten lines, varied per sitting."""
    k = n // 10
    day = 3 + (k * 3) % 25
    lines = [
        f"Hi again, Maya from Northwind Running here (chat {k + 1}). Hope your week is good!",
        f"Could you do a sponsored post for ${4000 + 250 * (k % 8):,}?",
        "What would the post include: photos, a caption, a link in bio?",
        f"How soon could you deliver? Our launch is on {day} April.",
        "Thanks, that's helpful.",
        f"Would ${5200 + 200 * (k % 6):,} work for a reel and two stories?",
        "Do you need product samples before you shoot?",
        "Our audience is mostly runners aged 25 to 40, mostly in the UK.",
        f"Can we get usage rights for {3 + k % 4} months on our own channels?",
        "Great, talk soon!",
    ]
    if not proposals:
        lines[1] = "What kind of brands do you usually work with?"
        lines[5] = f"Do you enjoy trail running too? I ran {10 + k % 12} km this morning."
    return lines[n % 10]


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    sitting: int | None
    """Messages per sitting; None for one continuous sitting."""
    proposals: bool = True


SCENARIOS = {
    "sittings": Scenario(
        "sittings",
        "10 messages per sitting, then a pause longer than session_pause_minutes",
        sitting=10,
    ),
    "continuous": Scenario(
        "continuous", "one continuous sitting of all messages, 45 s apart", sitting=None
    ),
    "chat": Scenario(
        "chat",
        "one continuous sitting with no proposals (questions and small talk only)",
        sitting=None,
        proposals=False,
    ),
}


# --- running a scenario ---------------------------------------------------------------------


def ordered_handlers(runner: TurnRunner) -> None:
    """Register the shipped handlers so that a message's Distil run starts only after its
    persona run (what concurrent workers give when the model takes seconds)."""
    persona_turn = PersonaTurn(runner.deps)
    distil_turn = DistilTurn(runner.deps)
    done: set[uuid.UUID] = set()

    async def run_persona(run: RunSnapshot) -> None:
        await persona_turn(run)
        if run.trigger_message_id is not None:
            done.add(run.trigger_message_id)

    async def run_distil(run: RunSnapshot) -> None:
        for _ in range(3):  # the persona of the same message is the only other run due
            if run.trigger_message_id is None or run.trigger_message_id in done:
                break
            if not await runner.run_once():
                break
        await distil_turn(run)

    runner.register(AgentName.PERSONA, run_persona)
    runner.register(AgentName.DISTIL, run_distil)


async def drain(runner: TurnRunner, limit: int = 100) -> int:
    count = 0
    while count < limit and await runner.run_once():
        count += 1
    return count


async def post(http: httpx.AsyncClient, room_id: str, body: str, headers: dict[str, str]) -> None:
    response = await http.post(
        "/graphql",
        content=post_body(room_id, body),
        headers={"Content-Type": "application/json", **headers},
    )
    payload = response.json()
    if response.status_code != 200 or payload.get("errors"):
        raise RuntimeError(f"postMessage failed: {response.status_code} {payload}")


@dataclass
class ScenarioResult:
    scenario: str
    turns: int
    calls: list[Call]
    seconds: float
    ledger_input_tokens: int
    recorded_input_tokens: int
    dispatches: dict[str, int]


async def run_scenario(
    scenario: Scenario, turns: int, backend: str, args: argparse.Namespace
) -> ScenarioResult:
    folder = Path(tempfile.mkdtemp(prefix="dealroom-bench-tokens-"))
    database_url: str | None = None
    engine: AsyncEngine | None = None
    server: BackgroundServer | None = None
    broker = create_broker(args.redis_url if backend == "postgres" else None)
    try:
        if backend == "postgres":
            database_url = await create_pg_database(args.pg_url, "dealroom_bench_tokens")
            url = database_url
        else:
            url = f"sqlite+aiosqlite:///{folder / 'bench.sqlite3'}"
        engine = create_engine(url)
        await upgrade(engine)
        await broker.start()
        settings = Settings(
            database_url=url,
            redis_url=args.redis_url if backend == "postgres" else None,
            data_dir=folder,
            debug=False,
            access_log=False,
            model_engine="offline",
            workers=0,
        ).model_copy(update=UNTHROTTLED)
        clock = BenchClock()
        client = RecordingClient(OfflineClient(delay=0.0))
        app = create_app(settings, clock=clock, engine=engine, broker=broker, model=client)
        runner: TurnRunner = app.state.dealroom.runner
        ordered_handlers(runner)
        server = await start_in_background(app)
        started = time.monotonic()
        async with http_client(f"http://127.0.0.1:{server.port}") as http:
            host = await sign_up(http, HOST_HANDLE, "Dev Raman")
            home = await gql(http, "query { me { homeRoom { id } } }", headers=host)
            await post(http, home["me"]["homeRoom"]["id"], RULES, host)
            await drain(runner)
            clock.advance(timedelta(hours=1))
            room_id, guest_key = await open_room(http, HOST_HANDLE)
            assert guest_key is not None
            visitor = {"X-Guest-Key": guest_key}
            pause = settings.session_pause + timedelta(minutes=1)
            for n in range(turns):
                new_sitting = scenario.sitting is not None and n and n % scenario.sitting == 0
                clock.advance(pause if new_sitting else MESSAGE_GAP)
                client.turn = n + 1
                await post(http, room_id, visitor_line(n, proposals=scenario.proposals), visitor)
                await drain(runner)
        seconds = time.monotonic() - started
        db = Db(create_sessionmaker(engine))
        try:
            ledger = int(await db.scalar(select(func.sum(ModelCall.input_tokens))) or 0)
            rows = await db.scalars(select(Dispatch.status))
            dispatches: dict[str, int] = {}
            for status in rows:
                dispatches[status] = dispatches.get(status, 0) + 1
        finally:
            await db.close()
        return ScenarioResult(
            scenario.name,
            turns,
            client.calls,
            seconds,
            ledger,
            sum(c.input_tokens for c in client.calls),
            dispatches,
        )
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                await server.stop()
        with contextlib.suppress(Exception):
            await broker.close()
        if engine is not None:
            await engine.dispose()
        if database_url is not None:
            with contextlib.suppress(Exception):
                await drop_pg_database(args.pg_url, database_url)
        remove_tree(folder)


# --- costs and the report --------------------------------------------------------------------


def cost(call: Call, cached: int) -> Decimal:
    model = MODELS[call.agent]
    value = price(model, Usage(call.input_tokens, call.output_tokens, cached))
    assert value is not None, model
    return value


@dataclass
class Exchange:
    turn: int
    calls: list[Call]

    def first(self, agent: str, pane: str = "visitor", trigger: str = "message") -> Call | None:
        return next(
            (
                c
                for c in self.calls
                if c.agent == agent and c.pane == pane and (trigger == "" or c.trigger == trigger)
            ),
            None,
        )

    def tokens(self, agent: str) -> int:
        return sum(c.input_tokens for c in self.calls if c.agent == agent)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.calls)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.calls)

    def cost(self, reading: str, thinking: int = 0) -> Decimal:
        """``reading`` as in READINGS; "schema+thinking" is the no-cache reading with the
        response schema counted as input and ``thinking`` tokens of output per Flash call."""
        total = Decimal(0)
        for call in self.calls:
            if reading == "schema+thinking":
                model = MODELS[call.agent]
                extra = thinking if model == "gemini-2.5-flash" else 0
                usage = Usage(
                    call.input_tokens + SCHEMA_TOKENS[call.agent],
                    call.output_tokens + extra,
                    0,
                )
                total += price(model, usage) or Decimal(0)
                continue
            minimum = CACHE_MINIMUM[MODELS[call.agent]]
            cached = {
                "none": 0,
                "system": call.system_tokens,
                "system>=min": call.system_tokens if call.input_tokens >= minimum else 0,
                "prefix": call.prefix_tokens if call.input_tokens >= minimum else 0,
            }[reading]
            total += cost(call, min(cached, call.input_tokens))
        return total


READINGS = ("none", "system", "system>=min", "prefix")
SCHEMA_TOKENS = {
    agent: estimate_tokens(json.dumps(output.model_json_schema()))
    for agent, output in (
        (AgentName.PERSONA.value, persona.PersonaOutput),
        (AgentName.DISTIL.value, distil.DistilOutput),
        (AgentName.CONTEXT_FILTER.value, context_filter.FilterOutput),
    )
}
"""The response schema each call sends (as pydantic emits it), estimated like the prompt."""
READING_TITLES = {
    "none": "no cache",
    "system": "system cached",
    "system>=min": "sys, if >= min",
    "prefix": "prefix (bound)",
}


def exchanges(calls: Sequence[Call]) -> list[Exchange]:
    by_turn: dict[int, list[Call]] = {}
    for call in calls:
        if call.turn > 0:
            by_turn.setdefault(call.turn, []).append(call)
    return [Exchange(turn, by_turn[turn]) for turn in sorted(by_turn)]


def usd(value: Decimal) -> str:
    return f"${value:.4f}"


def report_scenario(result: ScenarioResult, scenario: Scenario, thinking: int = 1000) -> list[str]:
    lines = [f"\n=== scenario {scenario.name}: {scenario.description} ({result.turns} turns) ==="]
    found = exchanges(result.calls)
    by_turn = {e.turn: e for e in found}
    lines.append(
        f"ran in {result.seconds:.0f}s; {len(result.calls)} model calls; dispatches "
        f"{result.dispatches}; input tokens recorded {result.recorded_input_tokens:,} vs "
        f"ledger {result.ledger_input_tokens:,}"
    )
    lines.append(
        f"{'turn':>5}{'lines':>6}{'persona in':>11}{'distil in':>10}{'filter in':>10}"
        f"{'deliv. in':>10}{'calls':>6}{'exch. in':>9}{'exch. out':>10}"
        + "".join(f"{READING_TITLES[r]:>16}" for r in READINGS)
    )
    for turn in REPORT_TURNS:
        exchange = by_turn.get(turn)
        if exchange is None:
            continue
        own = exchange.first("persona")
        delivered = sum(
            c.input_tokens
            for c in exchange.calls
            if c.agent == "persona" and c.trigger != "message"
        )
        lines.append(
            f"{turn:>5}{own.session_lines if own else 0:>6}"
            f"{own.input_tokens if own else 0:>11,}{exchange.tokens('distil'):>10,}"
            f"{exchange.tokens('context_filter'):>10,}{delivered:>10,}{len(exchange.calls):>6}"
            f"{exchange.input_tokens:>9,}{exchange.output_tokens:>10,}"
            + "".join(f"{usd(exchange.cost(r)):>16}" for r in READINGS)
        )
    if 10 in by_turn and 200 in by_turn:
        ten, last = by_turn[10], by_turn[200]
        own_ten, own_last = ten.first("persona"), last.first("persona")
        if own_ten and own_last:
            persona_ratio = own_last.input_tokens / own_ten.input_tokens
            lines.append(
                f"turn 200 / turn 10: persona input {persona_ratio:.2f}x;"
                f" distil input {last.tokens('distil') / max(1, ten.tokens('distil')):.2f}x; "
                f"exchange cost (no cache) {last.cost('none') / ten.cost('none'):.2f}x, "
                f"(system cached) {last.cost('system') / ten.cost('system'):.2f}x"
            )
    # Exchanges that carry a proposal differ from plain ones: compare like with like.
    for title, pick in (
        ("all exchanges", found),
        ("exchanges with deliveries", [e for e in found if len(e.calls) > 2]),
        ("exchanges without", [e for e in found if len(e.calls) <= 2]),
    ):
        if not pick:
            continue
        parts = []
        for reading in READINGS:
            costs = sorted(e.cost(reading) for e in pick)
            mean = sum(costs, Decimal(0)) / len(costs)
            parts.append(f"{READING_TITLES[reading]} mean {usd(mean)} max {usd(costs[-1])}")
        lines.append(f"{title} (n={len(pick)}): " + "; ".join(parts))
        heavy = sorted(e.cost("schema+thinking", thinking) for e in pick)
        lines.append(
            f"  ... no cache, schema counted as input and {thinking:,} thinking tokens per "
            f"Flash call: mean {usd(sum(heavy, Decimal(0)) / len(heavy))} max {usd(heavy[-1])}"
        )
    if found:
        worst = max(found, key=lambda e: e.cost("none"))
        listing = ", ".join(
            f"{c.agent}/{c.pane}/{c.trigger or '-'} {c.input_tokens:,}" for c in worst.calls
        )
        lines.append(
            f"most expensive exchange: turn {worst.turn}, {usd(worst.cost('none'))} no cache; "
            f"input tokens per call: {listing}"
        )
    for turn in (10, 200):
        exchange = by_turn.get(turn)
        own = exchange.first("persona") if exchange else None
        if own is None:
            continue
        sections = ", ".join(f"{k} {v:,}" for k, v in own.sections.items())
        lines.append(
            f"persona call at turn {turn}: system {own.system_tokens:,} + prompt "
            f"{own.prompt_tokens:,} tokens (of the prompt: {sections}); shares a prefix of "
            f"{own.prefix_tokens:,} tokens with the previous persona call in the pane"
        )
        branches = sorted(own.memory_branches.items(), key=lambda item: -item[1])
        lines.append("  its memory by branch: " + ", ".join(f"{k} {v:,}" for k, v in branches[:6]))
    curve = [(e.turn, e.first("persona")) for e in found if e.turn % 20 == 0 or e.turn in (1, 10)]
    lines.append(
        "persona input tokens by turn: "
        + ", ".join(f"{t}:{c.input_tokens:,}" for t, c in curve if c is not None)
    )
    return lines


def report_prefix() -> list[str]:
    lines = ["\nstable prefix (system instruction, sent first) per agent:"]
    for agent, system in SYSTEMS.items():
        lines.append(
            f"  {agent:<15} {len(system):>6,} chars  ~{estimate_tokens(system):>5,} tokens  "
            f"(model {MODELS[agent]}; implicit-caching minimum {CACHE_MINIMUM[MODELS[agent]]:,})"
        )
    lines.append(
        "  response schema sent with each call (not in the estimate): "
        + ", ".join(f"{agent} ~{tokens:,} tokens" for agent, tokens in SCHEMA_TOKENS.items())
    )
    flash = price("gemini-2.5-flash", Usage(0, 1000, 0))
    lines.append(
        f"  thinking (not in the estimate): every 1,000 thinking tokens on a gemini-2.5-flash "
        f"call cost {usd(flash or Decimal(0))} at the output rate"
    )
    return lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="60 turns instead of 200")
    parser.add_argument("--turns", type=int, help="visitor messages per scenario (default 200)")
    parser.add_argument(
        "--scenario", choices=(*SCENARIOS, "all"), default="all", help="default: all three"
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument(
        "--thinking", type=int, default=1000, help="thinking tokens per Flash call (sensitivity)"
    )
    parser.add_argument("--json", type=Path, help="also write every call's figures here")
    args = parser.parse_args(argv)
    args.turns = args.turns or (60 if args.quick else 200)
    if args.turns < 1:
        parser.error("--turns must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)

    def terminate(_signum: int, _frame: object) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, terminate)
    print("\n".join(machine_summary()))
    print(
        f"command: {' '.join(sys.argv)}; backend {args.backend}; offline engine, tokens "
        f"estimated at ~4 chars/token; prices from dealroom.agents.models.pricing"
    )
    print("\n".join(report_prefix()))
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    results = []
    for name in names:
        result = asyncio.run(run_scenario(SCENARIOS[name], args.turns, args.backend, args))
        results.append(result)
        print("\n".join(report_scenario(result, SCENARIOS[name], args.thinking)), flush=True)
    if args.json:
        args.json.write_text(
            json.dumps([vars(r) | {"calls": [vars(c) for c in r.calls]} for r in results])
        )


if __name__ == "__main__":
    main()
