"""Token benchmark: what each agent's requests cost over a 200-turn deal room, how much of
each request repeats the previous one's prefix (what Gemini's implicit caching bills at the
cached rate), and how many model calls a burst of double texts costs.

Targets (issue): prefix reuse >= 0.9 for the persona and Distil over a 200-turn continuous
sitting; an exchange billed <= $0.003 at Gemini 2.5 Flash list prices with thinking on and
cached tokens at the cached rate, the Guard, Arvist and AccUpdate amortised in; the exchange at
turn 200 <= 1.3x the one at turn 10, in a continuous sitting and in a negotiating room.

Method. The real turn pipeline on the offline engine: a host signs up and tells their agent
their rules in the home room; a visitor (a signed-in brand, or a guest whose sends wait on the
login gate) opens the host's deal room and posts a deterministic scripted conversation over
GraphQL (``postMessage``, in-process uvicorn). After each message every due run is executed
with ``runner.run_once()`` (sweeps included: the Guard and Arvist fire when a pause makes them
due), a message's Distil after its persona. Time is a manual clock moved 45 s between
messages, and past ``session_pause_minutes`` between sittings.

Each request is priced as Gemini would receive it: the real request builder
(``GeminiClient.config``: the system instruction, the response schema and the agent's thinking
budget from the settings) and the prompt, estimated at about four characters a token. The
model of each agent is the settings' default. Billed cost: thinking tokens at the agent's
whole budget (an upper bound) billed as output; the prefix shared with the previous request of
the same agent in the same pane billed at the cached rate when the request reaches the
model's implicit-caching minimum. An exchange is every call one visitor message causes
(persona, Distil, filter, the deliveries, and any Guard, Arvist or AccUpdate run it made due).
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
from collections.abc import AsyncIterator, Callable, Sequence
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
from dealroom.agents.models.gemini import GeminiClient
from dealroom.agents.models.offline import OfflineClient
from dealroom.agents.models.pricing import price
from dealroom.agents.render import Line, dispatch_record, document, memory_view, transcript
from dealroom.app import create_app
from dealroom.config import Settings
from dealroom.domain.double_texts import DoubleText
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
DEFAULTS = Settings()
MODELS = {
    **{agent.value: DEFAULTS.model_of(agent) for agent in DEFAULTS.thinking_budgets},
    AgentName.GATE.value: DEFAULTS.persona_model,
}
"""Each agent's model, as the settings configure it (the Guard's is 2.5 Pro)."""
THINKING = {agent.value: budget for agent, budget in DEFAULTS.thinking_budgets.items()}
CACHE_MINIMUM = {
    "gemini-2.5-flash": 2048,
    "gemini-2.5-flash-lite": 2048,
    "gemini-2.5-pro": 4096,
}
"""Implicit caching's minimum input tokens, from ai.google.dev/gemini-api/docs/caching (page
updated 2026-10-13: 2,048 for 2.5 Flash, 4,096 for 2.5 Pro). 2.5 Flash-Lite is not listed
there; the same minimum as Flash is assumed."""
BUILDER = GeminiClient("bench-no-calls", thinking=DEFAULTS.thinking_budgets)
"""The real Gemini request builder; it never makes a call here."""
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
    model: str
    pane: str
    room_kind: str
    trigger: str
    input_tokens: int
    """The request as sent: system instruction, response schema and prompt."""
    output_tokens: int
    thinking_tokens: int
    """The agent's thinking budget (an upper bound of what it spends), billed as output."""
    system_tokens: int
    prompt_tokens: int
    prefix_tokens: int
    """Tokens of the longest prefix shared with the previous call of this agent in this pane."""
    session_lines: int
    sections: dict[str, int]
    """Estimated tokens of the prompt's variable parts (memory, deliveries, session, plan)."""
    memory_branches: dict[str, int]
    """Estimated tokens of each top-level branch of the memory the call saw."""

    @property
    def cached_tokens(self) -> int:
        """What implicit caching bills at the cached rate: the shared prefix, once the
        request reaches the model's minimum."""
        reaches = self.input_tokens >= CACHE_MINIMUM.get(self.model, 2048)
        return min(self.prefix_tokens, self.input_tokens) if reaches else 0

    def billed(self, *, cached: bool = True, thinking: bool = True) -> Decimal:
        usage = Usage(
            self.input_tokens,
            self.output_tokens + (self.thinking_tokens if thinking else 0),
            self.cached_tokens if cached else 0,
        )
        value = price(self.model, usage)
        assert value is not None, self.model
        return value


def as_sent(request: ModelRequest) -> str:
    """The request's text in the order the model reads it: the system instruction and the
    response schema (static per agent), then the prompt."""
    config = BUILDER.config(request)
    schema = json.dumps(config.response_json_schema, sort_keys=True)
    return f"{config.system_instruction}\n{schema}\n{request.prompt}"


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
        full = as_sent(request)
        key = (request.agent.value, str(context.get("room_kind", "")), pane)
        before = self._previous.get(key, "")
        self._previous[key] = full
        shared = full[: common_prefix(before, full)]
        session = context.get("session") or []
        trigger = context.get("trigger")
        sections = {
            "memory": estimate_tokens(memory_view(context.get("memory") or {})),
            "deliveries": estimate_tokens(
                dispatch_record(context.get("deliveries", context.get("dispatches")) or [])
            ),
            "session": estimate_tokens(
                transcript(
                    [Line(**line) for line in session],
                    participant=str((context.get("speaking_with") or {}).get("name", "")),
                    agent="you" if request.agent is AgentName.PERSONA else "agent",
                )
            ),
            "plan": estimate_tokens(str(context.get("plan") or "")),
        }
        agent = request.agent.value
        budget = THINKING.get(agent) or 0
        self.calls.append(
            Call(
                turn=self.turn,
                agent=agent,
                model=MODELS.get(agent, DEFAULTS.persona_model),
                pane=pane,
                room_kind=str(context.get("room_kind", "")),
                trigger=str(trigger.get("kind")) if isinstance(trigger, dict) else "",
                input_tokens=estimate_tokens(full),
                output_tokens=usage.output_tokens,
                thinking_tokens=max(budget, 0),
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
    guest: bool = False
    """The visitor is a guest (every send waits on the login gate) instead of a signed-in brand."""
    burst: int = 0
    """Messages posted back to back before the agents run (double texts); 0: one at a time."""
    double_text: DoubleText = DoubleText.COALESCE


SCENARIOS = {
    "continuous": Scenario(
        "continuous",
        "a signed-in brand negotiating in one continuous sitting, 45 s between messages",
        sitting=None,
    ),
    "sittings": Scenario(
        "sittings",
        "a signed-in brand negotiating, 10 messages a sitting, then a pause (the Guard, "
        "Arvist and AccUpdate run in the pauses)",
        sitting=10,
    ),
    "chat": Scenario(
        "chat",
        "a signed-in brand in one continuous sitting with no proposals (questions, small talk)",
        sitting=None,
        proposals=False,
    ),
    "guest": Scenario(
        "guest",
        "a guest in one continuous sitting (its sends wait on the login gate)",
        sitting=None,
        guest=True,
    ),
    "burst": Scenario(
        "burst",
        "a signed-in brand posting bursts of 5 messages before the agents run "
        "(DEALROOM_DOUBLE_TEXT=coalesce)",
        sitting=10,
        burst=5,
    ),
    "burst-enqueue": Scenario(
        "burst-enqueue",
        "the same bursts with DEALROOM_DOUBLE_TEXT=enqueue (one run per message: before)",
        sitting=10,
        burst=5,
        double_text=DoubleText.ENQUEUE,
    ),
}
CORE = ("continuous", "sittings", "guest", "burst", "burst-enqueue")
"""What ``--scenario all`` runs (``chat`` on request)."""


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
        ).model_copy(update={**UNTHROTTLED, "double_text": scenario.double_text})
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
            if scenario.guest:
                room_id, guest_key = await open_room(http, HOST_HANDLE)
                assert guest_key is not None
                visitor = {"X-Guest-Key": guest_key}
            else:
                visitor = await sign_up(http, "tokenbenchbrand", "Northwind Running")
                room_id, _ = await open_room(http, HOST_HANDLE, visitor)
            pause = settings.session_pause + timedelta(minutes=1)
            step = max(scenario.burst, 1)
            for n in range(turns):
                new_sitting = scenario.sitting is not None and n and n % scenario.sitting == 0
                clock.advance(pause if new_sitting else MESSAGE_GAP / step)
                client.turn = n // step + 1  # a burst is one exchange
                await post(http, room_id, visitor_line(n, proposals=scenario.proposals), visitor)
                if (n + 1) % step == 0 or n == turns - 1:
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

    def billed(self, *, cached: bool = True, thinking: bool = True) -> Decimal:
        return sum((c.billed(cached=cached, thinking=thinking) for c in self.calls), Decimal(0))


def exchanges(calls: Sequence[Call]) -> list[Exchange]:
    by_turn: dict[int, list[Call]] = {}
    for call in calls:
        if call.turn > 0:
            by_turn.setdefault(call.turn, []).append(call)
    return [Exchange(turn, by_turn[turn]) for turn in sorted(by_turn)]


def usd(value: Decimal) -> str:
    return f"${value:.4f}"


def prefix_reuse(
    calls: Sequence[Call], by: Callable[[Call], str] = lambda call: call.agent
) -> dict[str, tuple[float, int, float]]:
    """Per agent (or per ``by``): the mean share of each request's tokens that equals the
    previous request's prefix (same agent, same pane), over every request but the first of
    each pane; how many requests that is; and the same share weighted by tokens (long requests
    late in a sitting count for more; the bill's cached tokens are this prefix only where the
    request reaches the caching minimum)."""
    shares: dict[str, list[tuple[int, int]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for call in calls:
        key = (call.agent, call.room_kind, call.pane)
        if key in seen and call.input_tokens:
            shares.setdefault(by(call), []).append((call.prefix_tokens, call.input_tokens))
        seen.add(key)
    return {
        name: (
            sum(p / n for p, n in v) / len(v),
            len(v),
            sum(p for p, _ in v) / sum(n for _, n in v),
        )
        for name, v in sorted(shares.items())
    }


def window(found: Sequence[Exchange], first: int, last: int) -> Decimal:
    """Mean billed cost of the exchanges from turn ``first`` to ``last``."""
    pick = [e.billed() for e in found if first <= e.turn <= last]
    return sum(pick, Decimal(0)) / len(pick) if pick else Decimal(0)


def report_scenario(result: ScenarioResult, scenario: Scenario) -> list[str]:
    lines = [f"\n=== scenario {scenario.name}: {scenario.description} ({result.turns} turns) ==="]
    found = exchanges(result.calls)
    by_turn = {e.turn: e for e in found}
    lines.append(
        f"ran in {result.seconds:.0f}s; {len(result.calls)} model calls; dispatches "
        f"{result.dispatches}; input tokens as sent {result.recorded_input_tokens:,} "
        f"(the ledger's offline estimate, without the schema: {result.ledger_input_tokens:,})"
    )
    agents = sorted({c.agent for c in result.calls})
    lines.append(
        "calls per agent: "
        + ", ".join(f"{a} {sum(1 for c in result.calls if c.agent == a)}" for a in agents)
    )
    reuse = prefix_reuse(result.calls)
    lines.append(
        "prefix reuse (share of each request equal to the previous one's prefix; mean per "
        "request, and weighted by tokens): "
        + ", ".join(
            f"{agent} {share:.3f}/{weighted:.3f} (n={n})"
            for agent, (share, n, weighted) in reuse.items()
        )
    )
    panes = prefix_reuse(
        [c for c in result.calls if c.agent == "persona"],
        by=lambda call: f"{call.room_kind} {call.pane}",
    )
    lines.append(
        "persona prefix reuse by room kind and pane: "
        + ", ".join(
            f"{pane} {share:.3f}/{weighted:.3f} (n={n})"
            for pane, (share, n, weighted) in panes.items()
        )
    )
    if scenario.burst:
        per_burst = len(result.calls) / max(1, len(found))
        persona_calls = sum(1 for c in result.calls if c.agent == "persona" and c.pane == "visitor")
        lines.append(
            f"model calls per burst of {scenario.burst}: {per_burst:.1f} "
            f"(visitor-pane persona calls {persona_calls} for {len(found)} bursts)"
        )
    lines.append(
        f"{'turn':>5}{'lines':>6}{'persona in':>11}{'cached':>8}{'distil in':>10}{'calls':>6}"
        f"{'exch. in':>9}{'billed':>10}{'no cache':>10}{'no think':>10}"
    )
    for turn in REPORT_TURNS:
        exchange = by_turn.get(turn)
        if exchange is None:
            continue
        own = exchange.first("persona")
        lines.append(
            f"{turn:>5}{own.session_lines if own else 0:>6}"
            f"{own.input_tokens if own else 0:>11,}{own.cached_tokens if own else 0:>8,}"
            f"{exchange.tokens('distil'):>10,}{len(exchange.calls):>6}"
            f"{exchange.input_tokens:>9,}{usd(exchange.billed()):>10}"
            f"{usd(exchange.billed(cached=False)):>10}{usd(exchange.billed(thinking=False)):>10}"
        )
    if found:
        total = sum((e.billed() for e in found), Decimal(0))
        lines.append(
            f"billed per exchange (thinking on at each agent's budget, cached prefix at the "
            f"cached rate, every agent amortised in): mean {usd(total / len(found))}, max "
            f"{usd(max(e.billed() for e in found))}; without caching mean "
            f"{usd(sum((e.billed(cached=False) for e in found), Decimal(0)) / len(found))}"
        )
    if 10 in by_turn and 200 in by_turn:
        ten, last = by_turn[10], by_turn[200]
        early, late = window(found, 1, 20), window(found, 181, 200)
        lines.append(
            f"turn 200 / turn 10: billed {last.billed() / ten.billed():.2f}x; input tokens "
            f"{last.input_tokens / max(1, ten.input_tokens):.2f}x; mean of turns 181-200 / "
            f"1-20: {late / early:.2f}x"
        )
    for turn in (10, 200):
        exchange = by_turn.get(turn)
        own = exchange.first("persona") if exchange else None
        if own is None:
            continue
        sections = ", ".join(f"{k} {v:,}" for k, v in own.sections.items())
        lines.append(
            f"persona call at turn {turn}: {own.input_tokens:,} tokens as sent (system "
            f"{own.system_tokens:,}, prompt {own.prompt_tokens:,}: {sections}); shares a prefix "
            f"of {own.prefix_tokens:,} with the previous persona call in the pane"
        )
    return lines


def report_prefix() -> list[str]:
    lines = ["\nper agent: model, thinking budget, system instruction (sent first):"]
    for agent, system in SYSTEMS.items():
        model = MODELS[agent]
        lines.append(
            f"  {agent:<15} {model:<22} thinking {THINKING.get(agent)!s:>5}  system "
            f"~{estimate_tokens(system):>5,} tokens  (implicit-caching minimum "
            f"{CACHE_MINIMUM[model]:,})"
        )
    return lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 10 turns of every scenario"
    )
    parser.add_argument("--turns", type=int, help="visitor messages per scenario (default 200)")
    parser.add_argument(
        "--scenario",
        choices=(*SCENARIOS, "all"),
        default="all",
        help=f"default: all ({', '.join(CORE)})",
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--json", type=Path, help="also write every call's figures here")
    args = parser.parse_args(argv)
    args.turns = args.turns or (10 if args.quick else 200)
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
        f"command: {' '.join(sys.argv)}; backend {args.backend}; offline engine, requests as "
        f"the Gemini request builder sends them, ~4 chars/token; prices from "
        f"dealroom.agents.models.pricing"
    )
    print("\n".join(report_prefix()))
    names = list(CORE) if args.scenario == "all" else [args.scenario]
    results = []
    for name in names:
        result = asyncio.run(run_scenario(SCENARIOS[name], args.turns, args.backend, args))
        results.append(result)
        print("\n".join(report_scenario(result, SCENARIOS[name])), flush=True)
    if args.json:
        args.json.write_text(
            json.dumps([vars(r) | {"calls": [vars(c) for c in r.calls]} for r in results])
        )


if __name__ == "__main__":
    main()
