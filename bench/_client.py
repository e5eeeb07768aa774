"""Shared helpers for the benchmark scripts: GraphQL over HTTP and graphql-transport-ws, a
server subprocess, throwaway PostgreSQL databases, and small statistics.

Benchmarks are not tests: nothing here asserts on timing. Everything talks to loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import platform
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil
import uvicorn
import websockets
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine
from websockets.asyncio.client import ClientConnection

from dealroom.server import start_in_background

ROOT = Path(__file__).resolve().parent.parent
DEALROOM = ROOT / ".venv" / "bin" / "dealroom"
DEFAULT_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"

UNTHROTTLED = {
    "posts_per_minute_across_rooms": 10**9,
    "rooms_per_ip_per_hour": 10**9,
    "guest_keys_per_ip_per_hour": 10**9,
    "guest_message_cap": 10**9,  # a benchmark guest posts far more than a person would
}
"""Every benchmark client comes from one address and posts faster than a person: the throttles are
not what is measured."""
UNTHROTTLED_ENV = {f"DEALROOM_{name.upper()}": str(value) for name, value in UNTHROTTLED.items()}
TRANSPORT_WS = "graphql-transport-ws"

SIGN_UP = """
mutation($input: SignUpInput!) { signUp(input: $input) { token account { id handle } } }
"""
OPEN_ROOM = """
mutation($handle: String!, $new: Boolean! = false) {
  openVisitorRoom(handle: $handle, newConversation: $new) { guestKey room { id } }
}
"""
POST = """
mutation($input: PostMessageInput!) { postMessage(input: $input) { cursor } }
"""
PANE_EVENTS = """
subscription($roomId: ID!, $seat: Seat!) {
  paneEvents(roomId: $roomId, seat: $seat) { ... on MessageAdded { cursor message { body } } }
}
"""


class GraphQLError(Exception):
    """A response that carried ``errors``."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(json.dumps(errors)[:500])
        self.errors = errors

    @property
    def codes(self) -> list[str]:
        return [str(e.get("extensions", {}).get("code")) for e in self.errors]


# --- GraphQL over HTTP -----------------------------------------------------------------------


def http_client(base_url: str, connections: int = 32, timeout: float = 60.0) -> httpx.AsyncClient:
    """A pooled client for loopback only (never an environment proxy). It keeps no cookies:
    one pooled client speaks for many guests, so each request carries its own headers."""
    return httpx.AsyncClient(
        base_url=base_url,
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        timeout=timeout,
        trust_env=False,
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
    )


async def gql(
    http: httpx.AsyncClient,
    query: str,
    variables: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    response = await http.post(
        "/graphql", json={"query": query, "variables": variables or {}}, headers=headers or {}
    )
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:300]}")
    body: dict[str, Any] = response.json()
    if body.get("errors"):
        raise GraphQLError(body["errors"])
    data: dict[str, Any] = body["data"]
    return data


async def sign_up(http: httpx.AsyncClient, handle: str, name: str) -> dict[str, str]:
    """Returns headers that authenticate as the new account."""
    data = await gql(
        http,
        SIGN_UP,
        {
            "input": {
                "email": f"{handle}@example.com",
                "password": "correct horse battery",
                "handle": handle,
                "displayName": name,
            }
        },
    )
    return {"Authorization": f"Bearer {data['signUp']['token']}"}


async def open_room(
    http: httpx.AsyncClient,
    host_handle: str,
    headers: dict[str, str] | None = None,
    *,
    new_conversation: bool = False,
) -> tuple[str, str | None]:
    """Visit a host's link; returns (room id, guest key or None). ``new_conversation``: a
    room of its own even where the visitor already has an empty one with the host."""
    variables = {"handle": host_handle, "new": new_conversation}
    data = await gql(http, OPEN_ROOM, variables, headers)
    payload = data["openVisitorRoom"]
    return str(payload["room"]["id"]), payload["guestKey"]


def visitor_address(index: int) -> str:
    """A distinct client address per guest (the server trusts loopback's X-Forwarded-For), as
    distinct visitors have: a key's guest cap counts every key minted from its address (issue
    11), which from one address is every guest's posts."""
    return f"10.{(index >> 16) & 255}.{(index >> 8) & 255}.{index & 255}"


def post_body(room_id: str, body: str, client_message_id: str | None = None) -> bytes:
    """The JSON body of one postMessage request, pre-encoded."""
    return json.dumps(
        {
            "query": POST,
            "variables": {
                "input": {
                    "roomId": room_id,
                    "body": body,
                    "clientMessageId": client_message_id or secrets.token_hex(8),
                }
            },
        }
    ).encode()


# --- graphql-transport-ws --------------------------------------------------------------------


async def open_subscription(
    ws_url: str,
    init: dict[str, Any],
    variables: dict[str, Any],
    *,
    query: str = PANE_EVENTS,
    timeout: float = 30.0,
) -> ClientConnection:
    """Connect, authenticate in connection_init, subscribe; returns the open socket.

    No deflate (as the server), no client pings (the server pings; the client answers)."""
    ws = await websockets.connect(
        ws_url,
        subprotocols=[TRANSPORT_WS],  # type: ignore[list-item]
        compression=None,
        proxy=None,
        open_timeout=timeout,
        ping_interval=None,
        close_timeout=2,
        max_queue=None,
    )
    try:
        await ws.send(json.dumps({"type": "connection_init", "payload": init}))
        deadline = time.monotonic() + timeout
        while True:
            raw = await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.monotonic()))
            message = json.loads(raw)
            if message.get("type") == "connection_ack":
                break
            if message.get("type") == "ping":
                await ws.send('{"type":"pong"}')
                continue
            raise RuntimeError(f"unexpected before ack: {str(raw)[:200]}")
        await ws.send(
            json.dumps(
                {
                    "id": "1",
                    "type": "subscribe",
                    "payload": {"query": query, "variables": variables},
                }
            )
        )
    except BaseException:
        await ws.close()
        raise
    return ws


# --- processes, ports, limits ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def raise_nofile_limit(wanted: int) -> int:
    """Raise the soft open-files limit (children inherit it); returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(hard, max(soft, wanted)) if hard != resource.RLIM_INFINITY else max(soft, wanted)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def other_test_runs() -> list[int]:
    """pids of pytest processes on the machine (other people's suites distort the figures)."""
    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            cmdline = " ".join(proc.info["cmdline"] or [])
            if "pytest" in cmdline and proc.info["pid"] not in mine:
                found.append(int(proc.info["pid"]))
    return found


def wait_until_no_tests(max_wait: float) -> list[int]:
    """Poll (bounded) until no pytest runs; returns whatever still runs at the end."""
    deadline = time.monotonic() + max_wait
    running = other_test_runs()
    if running and max_wait > 0:
        print(f"waiting up to {max_wait:.0f}s for pytest processes {running} to finish", flush=True)
    while running and time.monotonic() < deadline:
        time.sleep(min(10.0, max(0.0, deadline - time.monotonic())))
        running = other_test_runs()
    return running


def prepare_run(wait_idle: float) -> None:
    """Wait (bounded) for test runs to end, say if some remain, and turn SIGTERM into a clean
    exit so every script's cleanup (servers, databases, temp dirs) runs."""
    still = wait_until_no_tests(wait_idle)
    if still:
        print(f"note: pytest processes running during this benchmark: {still}", flush=True)

    def terminate(_signum: int, _frame: object) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, terminate)


def code_version() -> str:
    """The commit under test and whether dealroom/ has uncommitted changes (read-only git)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "dealroom"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}" + (f" + {len(dirty)} uncommitted file(s) in dealroom/" if dirty else "")


def machine_summary() -> list[str]:
    mem = psutil.virtual_memory()
    return [
        f"machine: {os.cpu_count()} cpus, {mem.total / 2**30:.1f} GiB RAM, "
        f"{platform.system()} {platform.release()}",
        f"python: {sys.version.split()[0]} ({sys.executable})",
        f"date (UTC): {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}",
        f"code: {code_version()}",
    ]


GC_LOGGING_SERVE = """
import gc, sys, time
from dealroom.cli import main
started = [0.0, 0.0]
def log(phase, info):
    if phase == "start":
        started[0], started[1] = time.perf_counter(), time.thread_time()
        return
    pause = time.perf_counter() - started[0]
    cpu = time.thread_time() - started[1]
    if info["generation"] == 2 or pause > 0.02:
        print(f"bench-gc t={time.monotonic():.3f} gen={info['generation']} "
              f"ms={pause * 1000:.1f} cpu_ms={cpu * 1000:.1f} collected={info['collected']}",
              file=sys.stderr, flush=True)
gc.callbacks.append(log)
sys.argv = ["dealroom", *sys.argv[1:]]
main()
"""
"""``dealroom serve`` with a gc callback that logs every full collection (and any slower than
20 ms) to stderr with a ``time.monotonic()`` stamp, comparable with the bench's own clock."""


@dataclass(frozen=True)
class GcPause:
    at: float
    generation: int
    seconds: float


@dataclass
class ServerProcess:
    """``dealroom serve`` in a subprocess on a loopback port, logs into ``log_dir``."""

    env: dict[str, str]
    port: int
    log_dir: Path
    profile: Path | None = None
    """Run the server under cProfile, writing its stats here when it stops."""
    gc_log: bool = False
    """Log the server's garbage-collection pauses (see ``GC_LOGGING_SERVE``)."""
    command: list[str] | None = None
    """Another server to run instead of ``dealroom serve`` (it must answer ``/health``)."""
    processes: int | None = None
    """``dealroom serve --processes N``; CPU and RSS are then the supervisor's and its
    children's together, and GC pauses come from each child's ``gc_pause`` lines."""
    proc: subprocess.Popen[bytes] | None = None
    ps: psutil.Process | None = None
    serving_since: float = 0.0
    """``time.monotonic()`` when the server first answered ``/health`` (start-up's own
    collections come before it)."""
    _files: list[Any] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/graphql"

    @property
    def stderr_path(self) -> Path:
        return self.log_dir / "server.stderr"

    def start(self, timeout: float = 60.0) -> None:
        out = (self.log_dir / "server.stdout").open("wb")
        err = self.stderr_path.open("wb")
        self._files += [out, err]
        command = [str(DEALROOM), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        if self.processes is not None:
            command += ["--processes", str(self.processes)]
        if self.command is not None:
            command = self.command
        elif self.profile is not None:
            command = [sys.executable, "-m", "cProfile", "-o", str(self.profile), *command]
        env = dict(self.env)
        if self.gc_log and self.processes == 1 and self.command is None and not self.profile:
            # one process: the wrapper logs every full collection and any young one >= 20 ms
            command = [sys.executable, "-c", GC_LOGGING_SERVE, *command[1:]]
            env["DEALROOM_GC_PAUSE_LOG_MS"] = "0"
        elif self.gc_log:
            # serve's children log their own pauses (the wrapper would see the supervisor's)
            env["DEALROOM_GC_PAUSE_LOG_MS"] = "20"
        self.proc = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # our Ctrl-C does not reach it; we stop it ourselves
        )
        self.ps = psutil.Process(self.proc.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.proc.returncode}: {self.tail_stderr()}"
                )
            try:
                if httpx.get(f"{self.base_url}/health", timeout=2, trust_env=False).is_success:
                    self.serving_since = time.monotonic()
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"server not healthy after {timeout}s: {self.tail_stderr()}")

    def _tree(self) -> list[psutil.Process]:
        """The server and its serving children (``--processes N``), not multiprocessing's
        resource tracker."""
        assert self.ps is not None
        found = [self.ps]
        with contextlib.suppress(psutil.Error):
            found += [
                child
                for child in self.ps.children()
                if "resource_tracker" not in " ".join(child.cmdline())
            ]
        return found

    def rss(self) -> int:
        total = 0
        for proc in self._tree():
            with contextlib.suppress(psutil.Error):
                total += int(proc.memory_info().rss)
        return total

    def cpu_seconds(self) -> float:
        total = 0.0
        for proc in self._tree():
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                total += float(times.user + times.system)
        return total

    def pids(self) -> list[int]:
        return [proc.pid for proc in self._tree()]

    def established(self) -> int:
        """Established TCP connections the server holds on its port (websockets + HTTP)."""
        assert self.ps is not None
        return sum(
            1
            for c in self.ps.net_connections(kind="tcp")
            if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == self.port
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after a bounded wait. Returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            # uvicorn shuts down gracefully on either, then re-raises the signal; under
            # cProfile a SIGINT (KeyboardInterrupt) still lets the stats be written.
            self.proc.send_signal(signal.SIGINT if self.profile else signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for handle in self._files:
            handle.close()
        self._files.clear()
        return self.proc.returncode

    def tail_stderr(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def gc_pauses(self) -> list[GcPause]:
        pauses = []
        with contextlib.suppress(OSError):
            for line in self.stderr_path.read_text(errors="replace").splitlines():
                if line.startswith("bench-gc "):
                    fields = dict(part.split("=", 1) for part in line.split()[1:])
                    pauses.append(
                        GcPause(float(fields["t"]), int(fields["gen"]), float(fields["ms"]) / 1000)
                    )
                elif line.startswith("gc_pause "):  # dealroom serve's own (each child's)
                    fields = dict(part.split("=", 1) for part in line.split()[1:])
                    pauses.append(
                        GcPause(
                            float(fields["at"]),
                            int(fields["generation"]),
                            float(fields["ms"]) / 1000,
                        )
                    )
        return pauses

    def problems(self) -> tuple[int, list[str]]:
        """Lines in the server's output that look like trouble (access lines and websocket
        open/close lines do not): their count and the first few."""
        found: list[str] = []
        count = 0
        for path in (self.stderr_path, self.log_dir / "server.stdout"):
            if not path.exists():
                continue
            for line in path.read_text(errors="replace").splitlines():
                lowered = line.lower()
                if any(
                    word in lowered
                    for word in ("traceback", "error", "exception", "warning", "critical")
                ):
                    count += 1
                    if len(found) < 12:
                        found.append(line[:300])
        return count, found


# --- an in-process server ---------------------------------------------------------------


async def start_uvicorn(app: Any) -> tuple[uvicorn.Server, asyncio.Task[None], int]:
    """The server exactly as `dealroom serve` configures it, on a free loopback port."""
    running = await start_in_background(app)
    return running.server, running.task, running.port


# --- PostgreSQL databases --------------------------------------------------------------------


def _dsn(sqlalchemy_url: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(sqlalchemy_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


async def create_pg_database(base_url: str, prefix: str) -> str:
    """A fresh database beside ``base_url``'s; returns its SQLAlchemy URL."""
    from sqlalchemy.engine import make_url

    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(3)}"
    conn = await asyncpg.connect(_dsn(base_url), timeout=10)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return make_url(base_url).set(database=name).render_as_string(hide_password=False)


async def drop_pg_database(base_url: str, url: str) -> None:
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    conn = await asyncpg.connect(_dsn(base_url), timeout=10)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


# The tables autovacuum would analyze now (its default threshold and scale factor);
# pg_statistic is left out, as ANALYZE always skips it
CHANGED_ENOUGH = """
SELECT format('%I.%I', s.schemaname, s.relname)
FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
WHERE c.relkind IN ('r', 'p') AND s.schemaname <> 'information_schema'
  AND s.schemaname NOT LIKE 'pg_toast%' AND s.relid <> 'pg_catalog.pg_statistic'::regclass
  AND s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
"""


def _backend_cpu(pid: int) -> float:
    """CPU seconds a PostgreSQL backend of this machine has spent (its user and system time
    from ``/proc``)."""
    try:
        return float(sum(psutil.Process(pid).cpu_times()[:2]))
    except psutil.Error:
        return 0.0


@contextlib.asynccontextmanager
async def autovacuum_stand_in(
    url: str, every: float = 10.0, *, whole_database: bool = False
) -> AsyncIterator[dict[str, Any]]:
    """While the block runs, ``ANALYZE`` the benchmark's database every ``every`` seconds if the
    server's autovacuum is off (this machine's PostgreSQL has it off). Production's autovacuum
    keeps the planner's statistics as tables grow, and each ``ANALYZE`` re-plans the statements
    servers hold prepared; without it a statement prepared while the tables were nearly empty keeps
    the plan it got then for good (the guest cap's count and the room lookup of ``openVisitorRoom``
    take 300-560 ms a call that way, against well under a millisecond with statistics).

    As autovacuum does: each visit analyzes the tables, system catalogs included, with more rows
    changed since their last ``ANALYZE`` than 50 + 10 % of their rows (the defaults of
    ``autovacuum_analyze_threshold`` and ``_scale_factor``), cost-delayed by 2 ms
    (``autovacuum_vacuum_cost_delay``); a visit with none to analyze is not counted.
    ``whole_database`` analyzes the whole database at full speed instead, the ~60 system catalogs
    included, which no production server does every 10 s (at 300 posts a second with 5,000
    subscriptions held, each such ``ANALYZE`` takes 277-389 ms against 101-212 ms for a visit of
    the changed tables, and the posts stall behind it for about a second; docs/BENCHMARKS.md).
    Yields what it did, for the report: in ``runs``, each ``ANALYZE``'s start
    (``time.monotonic()``), its seconds, the CPU seconds its backend spent in it and the tables it
    took, so a report can line its slow seconds up with them."""
    done: dict[str, Any] = {
        "autovacuum": "unknown",
        "analyzed": 0,
        "runs": [],
        "takes": "the whole database" if whole_database else "the tables changed enough",
    }

    async def start(conn: asyncpg.Connection) -> bool:
        done["autovacuum"] = await conn.fetchval("SHOW autovacuum")
        if not whole_database:
            await conn.execute("SET vacuum_cost_delay = '2ms'")  # for this connection's life
        return bool(done["autovacuum"] == "off")

    backend = 0

    async def step(conn: asyncpg.Connection) -> None:
        nonlocal backend
        backend = backend or await conn.fetchval("SELECT pg_backend_pid()")
        analyze = "ANALYZE"
        tables: list[str] = []
        if not whole_database:
            tables = [row[0] for row in await conn.fetch(CHANGED_ENOUGH)]
            if not tables:
                return
            analyze = f"ANALYZE {', '.join(tables)}"
        cpu = _backend_cpu(backend)
        began = time.monotonic()
        await conn.execute(analyze)
        took = time.monotonic() - began
        done["analyzed"] += 1
        done["runs"].append((began, took, _backend_cpu(backend) - cpu, tables))

    async with _polling(url, start, step, every):
        yield done


@contextlib.asynccontextmanager
async def backend_census(url: str | None, every: float = 0.1) -> AsyncIterator[dict[str, Any]]:
    """While the block runs, the PostgreSQL backends connected to ``url``'s database, sampled from
    ``pg_stat_activity`` every ``every`` seconds: how many were there at its start and how many
    distinct ones it saw in all (this connection left out). More distinct ones than the start's
    means backends were forked during the block: a pool that closes and reopens connections under
    load, each preparing and planning its statements anew (a pool's overflow churning shows as
    about twice as many distinct backends as at the start). ``pg_stat_database.sessions`` cannot
    show it here: it is flushed as sessions end, and the benchmark's database is dropped with its
    statistics. Yields ``{"at_start": n, "distinct": n}``; nothing on SQLite (``url`` None)."""
    found: dict[str, Any] = {}
    if url is None:
        yield found
        return
    seen: set[int] = set()
    query = (
        "SELECT pid FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )

    async def start(conn: asyncpg.Connection) -> bool:
        found["at_start"] = len(await conn.fetch(query))
        return True

    async def step(conn: asyncpg.Connection) -> None:
        seen.update(row["pid"] for row in await conn.fetch(query))
        found["distinct"] = len(seen)

    async with _polling(url, start, step, every):
        yield found


@contextlib.asynccontextmanager
async def _polling(
    url: str,
    start: Callable[[asyncpg.Connection], Awaitable[bool]],
    step: Callable[[asyncpg.Connection], Awaitable[None]],
    every: float,
) -> AsyncIterator[None]:
    """A connection of its own to ``url``'s database while the block runs: ``start`` on it
    first, then, if that said so, ``step`` every ``every`` seconds until the block ends."""
    conn = await asyncpg.connect(_dsn(url), timeout=10)
    task: asyncio.Task[None] | None = None
    try:
        if await start(conn):

            async def loop() -> None:
                while True:
                    await step(conn)
                    await asyncio.sleep(every)

            task = asyncio.create_task(loop())
        yield
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await conn.close()


def remove_tree(path: Path | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def migrate(env: dict[str, str], timeout: float = 120.0) -> None:
    """``dealroom migrate`` with the server's environment."""
    subprocess.run(
        [str(DEALROOM), "migrate"], env=env, check=True, capture_output=True, timeout=timeout
    )


# --- statistics ------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted sequence (nan when empty)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), math.ceil(p / 100 * len(sorted_values))))
    return float(sorted_values[rank - 1])


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.1f}"


def profile_summary(path: Path, top: int = 14) -> list[str]:
    """Where a cProfile'd server spent its own time (tottime), grouped by package; the
    event loop's idle wait (epoll) is shown apart from the busy total."""
    import pstats

    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    groups: dict[str, float] = {}
    idle = 0.0
    for (filename, _line, function), (_cc, _nc, tottime, *_rest) in stats.items():
        if filename == "~":
            if "select.epoll" in function:
                idle += tottime
                continue
            if "SimpleQueue" in function:
                group = "thread hand-off (aiosqlite queue, GIL)"
            elif "socket" in function:
                group = "socket send/recv"
            else:
                group = "C built-ins"
        elif "site-packages/" in filename:
            group = filename.split("site-packages/")[1].split("/")[0].removesuffix(".py")
        elif "/dealroom/" in filename:
            group = "dealroom"
        elif "/asyncio/" in filename or filename.endswith("selectors.py"):
            group = "asyncio"
        else:
            group = "stdlib/other"
        groups[group] = groups.get(group, 0.0) + tottime
    busy = sum(groups.values())
    # Under uvloop the loop's own waiting happens in compiled code that cProfile does not see.
    waiting = f", {idle:.1f}s idle in epoll" if idle > 1 else " (uvloop: idle time not seen)"
    lines = [f"profiled server: {busy:.1f}s in Python frames (own time){waiting}"]
    validate = [
        value[3]
        for (filename, _line, function), value in stats.items()
        if filename.endswith("graphql/validation/validate.py") and function == "validate"
    ]
    if validate:
        calls = max(v[1] for (f, _l, fn), v in stats.items() if fn == "validate" and "graphql" in f)
        lines.append(
            f"  graphql validate(): {max(validate):.1f}s in {calls} calls "
            f"({100 * max(validate) / max(busy, 1e-9):.0f}% of it; a cache hit skips it)"
        )
    for group, seconds in sorted(groups.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"  {group:<40} {seconds:7.2f}s {100 * seconds / max(busy, 1e-9):5.1f}%")
    return lines


# --- counting SQL -------------------------------------------------------------------------------


@dataclass
class StatementLog:
    """Every statement the engine sends while ``recording``, folded to one line (``seen``),
    and as sent with its parameters (``sent``: to replay a statement under EXPLAIN)."""

    engine: AsyncEngine
    seen: list[str] = field(default_factory=list)
    sent: list[tuple[str, Any]] = field(default_factory=list)
    recording: bool = False

    def _record(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if self.recording:
            self.seen.append(" ".join(statement.split()))
            self.sent.append((statement, parameters))

    def __enter__(self) -> StatementLog:
        event.listen(self.engine.sync_engine, "before_cursor_execute", self._record)
        return self

    def __exit__(self, *_exc: object) -> None:
        event.remove(self.engine.sync_engine, "before_cursor_execute", self._record)

    @contextlib.contextmanager
    def capture(self) -> Iterator[list[str]]:
        self.seen = []
        self.sent = []
        self.recording = True
        try:
            yield self.seen
        finally:
            self.recording = False


def queries_only(statements: Sequence[str]) -> list[str]:
    """Without transaction control and connection set-up (BEGIN, PRAGMA, COMMIT...)."""
    control = ("BEGIN", "PRAGMA", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
    return [s for s in statements if not s.upper().startswith(control)]
