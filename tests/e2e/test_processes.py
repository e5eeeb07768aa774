"""Two `dealroom serve --processes 2` instances (four processes, each with its own broker
connection and agent workers) on one PostgreSQL and one Redis deliver every event once and run
every turn once.

This test is about several processes sharing PostgreSQL, so it uses PostgreSQL on both passes
(as the broker tests use Redis): a machine without it fails the test rather than skipping it.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx
import psutil
import pytest
from sqlalchemy import func, select

from dealroom.domain.cursors import event_cursor
from dealroom.persistence.engine import create_engine
from dealroom.persistence.models import AgentRun, Message
from tests.support.backends import (
    REDIS_FOR_BROKER_TESTS,
    migrated_database,
)
from tests.support.graphql import Client, open_room, post, sign_up, subscribe, ws_init_for
from tests.support.processes import free_port, wait_healthy

ROOMS = 4
MESSAGES = """
subscription($roomId: ID!, $seat: Seat!, $after: String) {
  paneEvents(roomId: $roomId, seat: $seat, after: $after) {
    __typename
    ... on MessageAdded { cursor message { id body authorKind } }
  }
}
"""


@contextmanager
def _serve(
    url: str, port: int, log: IO[bytes], **extra_env: str
) -> Iterator[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "DEALROOM_DATABASE_URL": url,
        "DEALROOM_REDIS_URL": REDIS_FOR_BROKER_TESTS,
        "DEALROOM_PORT": str(port),
        "DEALROOM_HOST": "127.0.0.1",
        "DEALROOM_WORKERS": "2",
        "DEALROOM_MODEL_ENGINE": "offline",
        "DEALROOM_DEMO": "0",
        # four processes at once on the PostgreSQL that three more test workers share: a few
        # each at start, not the pool's six
        "DEALROOM_DATABASE_CONNECTIONS_AT_START": "3",
        **extra_env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "dealroom.cli", "serve", "--processes", "2"],
        env=env,
        stdout=log,  # the structured log too: a failure shows the servers' warnings
        stderr=log,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        process.terminate()  # the supervisor stops its children
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    async with migrated_database() as (url, _):
        yield url


@pytest.fixture
async def two_multiprocess_servers(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    ports = free_port(), free_port()
    logs = [(tmp_path / f"server-{port}.log").open("wb") for port in ports]
    with _serve(pg_url, ports[0], logs[0]) as a, _serve(pg_url, ports[1], logs[1]) as b:
        urls = f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"
        await wait_healthy(urls[0], a)
        await wait_healthy(urls[1], b)
        # each instance really is a supervisor with (at least) two serving children; the
        # third child is multiprocessing's resource tracker
        assert all(len(psutil.Process(p.pid).children()) >= 2 for p in (a, b))
        yield urls
    for log in logs:
        log.close()
        print(Path(log.name).read_text())  # noqa: ASYNC240  # teardown, once; shown on failure


async def _counts(url: str) -> tuple[int, int, int]:
    """(persona runs, persona runs done, agent messages) across the whole database."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            runs = (
                await conn.execute(
                    select(func.count()).select_from(AgentRun).where(AgentRun.agent == "persona")
                )
            ).scalar_one()
            done = (
                await conn.execute(
                    select(func.count())
                    .select_from(AgentRun)
                    .where(AgentRun.agent == "persona", AgentRun.status == "done")
                )
            ).scalar_one()
            replies = (
                await conn.execute(
                    # a run's reply (the welcome each room opens with is no run's)
                    select(func.count())
                    .select_from(Message)
                    .where(Message.author_kind == "agent", Message.client_message_id.like("run:%"))
                )
            ).scalar_one()
    finally:
        await engine.dispose()
    return int(runs), int(done), int(replies)


async def test_two_multiprocess_servers_deliver_every_event_once_and_run_every_turn_once(
    two_multiprocess_servers: tuple[str, str], pg_url: str
) -> None:
    url_a, url_b = two_multiprocess_servers
    ws_a = url_a.replace("http", "ws") + "/graphql"
    async with httpx.AsyncClient(base_url=url_a, timeout=30) as http_a:
        host = Client(http_a)
        await sign_up(host, "manyproc", "Many Proc")
        guests: list[tuple[Client, str, httpx.AsyncClient]] = []
        for _ in range(ROOMS):
            http_b = httpx.AsyncClient(base_url=url_b, timeout=30)
            guest = Client(http_b)
            guests.append((guest, (await open_room(guest, "manyproc"))["room"]["id"], http_b))
        try:
            # The host watches every visitor pane through A; the guests write through B.
            async with asyncio.TaskGroup() as group:
                seen = [
                    group.create_task(_watch(ws_a, host, room_id, n))
                    for n, (_guest, room_id, _http) in enumerate(guests)
                ]
                # Most subscriptions are open by now, so their events come live through
                # Redis; one a busy machine opened late replays the post (see _watch).
                await asyncio.sleep(0.5)
                for n, (guest, room_id, _http) in enumerate(guests):
                    await post(guest, room_id, f"Hello from guest {n}")
            events = [task.result() for task in seen]
        finally:
            for _guest, _room, http in guests:
                await http.aclose()

    for n, pane in enumerate(events):
        cursors = [event["cursor"] for event in pane]
        assert len(cursors) == len(set(cursors)), f"room {n}: an event arrived twice"
        authors = [event["message"]["authorKind"] for event in pane]
        own = [e for e in pane if e["message"]["body"] == f"Hello from guest {n}"]
        assert len(own) == 1, f"room {n}: the guest's line arrived {len(own)} times"
        assert authors[authors.index("PARTICIPANT") :].count("AGENT") >= 1
    runs, done, replies = await _counts(pg_url)
    # every turn ran, once: each persona run finished and posted one reply, none twice
    assert runs >= ROOMS
    assert (done, replies) == (runs, runs)


async def _watch(ws_url: str, host: Client, room_id: str, n: int) -> list[dict[str, Any]]:
    """The visitor pane's messages as the host reads them, until the agent has answered the
    guest and the pane has then been quiet for two seconds (a duplicate would show up here).
    From the pane's start: a subscription the server opened only after the guest's post (a
    busy machine) replays it instead of starting past it."""
    variables = {"roomId": room_id, "seat": "VISITOR", "after": event_cursor(0)}
    messages: list[dict[str, Any]] = []
    async with subscribe(ws_url, MESSAGES, variables, init=ws_init_for(host)) as stream:
        deadline = asyncio.get_running_loop().time() + 90
        answered = False
        while True:
            wait = 2.0 if answered else deadline - asyncio.get_running_loop().time()
            try:
                event = await stream.event(timeout=max(0.1, wait))
            except TimeoutError:
                if answered:
                    return messages
                raise AssertionError(f"room {n}: no agent reply; saw {messages}") from None
            if event["__typename"] != "MessageAdded":
                continue
            messages.append(event)
            kinds = [m["message"]["authorKind"] for m in messages]
            answered = "PARTICIPANT" in kinds and "AGENT" in kinds[kinds.index("PARTICIPANT") :]


async def test_children_stop_when_their_supervisor_is_killed(pg_url: str, tmp_path: Path) -> None:
    """A supervisor killed outright (SIGKILL, the OOM killer) must not leave its children
    serving the port and claiming agent runs with nobody managing them."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log, _serve(pg_url, port, log) as supervisor:
        await wait_healthy(f"http://127.0.0.1:{port}", supervisor)
        children = [
            c for c in psutil.Process(supervisor.pid).children() if "spawn_main" in c.cmdline()[-2]
        ]
        assert len(children) == 2
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait(timeout=10)
        # an exited child whose new parent does not reap it (no init in a container) is a
        # zombie: it runs nothing
        deadline = time.monotonic() + 60
        alive = [c for c in children if _running(c)]
        while alive and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            alive = [c for c in alive if _running(c)]
        for child in alive:  # fail, but never leave them behind
            child.kill()
        assert alive == [], "a child outlived its supervisor"


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


_PAUSE_PID = re.compile(r"^gc_pause generation=\d.* pid=(\d+)$", re.MULTILINE)


async def test_every_child_logs_its_gc_pauses(pg_url: str, tmp_path: Path) -> None:
    """Each child of ``serve --processes 2`` times its own collections (the supervisor's are
    not the ones that pause a request): with the log threshold at 0.001 ms and a young
    collection at every allocation, each child's collections are logged under its pid."""
    port = free_port()
    path = tmp_path / "server.log"
    with (
        path.open("wb") as log,
        _serve(
            pg_url, port, log, DEALROOM_GC_PAUSE_LOG_MS="0.001", DEALROOM_GC_YOUNG_THRESHOLD="1"
        ) as supervisor,
    ):
        await wait_healthy(f"http://127.0.0.1:{port}", supervisor)
        children = {
            c.pid
            for c in psutil.Process(supervisor.pid).children()
            if "spawn_main" in c.cmdline()[-2]
        }
        logged: set[int] = set()
        deadline = time.monotonic() + 30
        while logged != children and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            # Only whole lines: the children write while we read, and the last may be cut.
            text = path.read_text(errors="replace")
            whole = text[: text.rfind("\n") + 1]
            logged = {int(pid) for pid in _PAUSE_PID.findall(whole)}
    assert len(children) == 2
    assert logged == children


async def test_connections_spread_over_the_children(pg_url: str, tmp_path: Path) -> None:
    """Each child listens on a socket of its own (``dealroom/supervisor.py``), so a burst of
    keep-alive connections, as a load balancer or a benchmark's clients open them, is spread
    over both children, not taken by whichever woke first (with one shared socket, 16 such
    connections all went to one child in half the trials, and 32 split 29 to 3). The kernel
    spreads by each connection's addresses: 32 connections leave a child fewer than 4 about
    once in 400,000 bursts."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log, _serve(pg_url, port, log) as supervisor:
        base_url = f"http://127.0.0.1:{port}"
        await wait_healthy(base_url, supervisor)
        children = [
            c for c in psutil.Process(supervisor.pid).children() if "spawn_main" in c.cmdline()[-2]
        ]
        assert len(children) == 2
        deadline = time.monotonic() + 60  # /health answered: one child is up, maybe not both
        listening = [_listening_sockets(child, port) for child in children]
        while not all(listening) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            listening = [_listening_sockets(child, port) for child in children]
        assert all(listening)
        assert not listening[0] & listening[1]  # a socket each
        for _ in range(3):  # a fresh burst each time
            clients = [httpx.AsyncClient(base_url=base_url) for _ in range(32)]
            try:
                answers = await asyncio.gather(*(client.get("/health") for client in clients))
                assert all(answer.status_code == 200 for answer in answers)
                held = [_established(child, port) for child in children]
            finally:
                await asyncio.gather(*(client.aclose() for client in clients))
            assert sum(held) == 32
            assert min(held) >= 4, f"connections per child: {held}"


async def test_a_child_that_dies_is_started_again_on_its_own_socket(
    pg_url: str, tmp_path: Path
) -> None:
    """The supervisor keeps every child's socket: a child killed outright is replaced by one
    listening on the same socket (connections the kernel sends to it wait in its backlog
    meanwhile), never by one on the survivor's, which would leave half the port unserved."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log, _serve(pg_url, port, log) as supervisor:
        await wait_healthy(f"http://127.0.0.1:{port}", supervisor)
        before = await _children_listening(supervisor.pid, port)
        victim, survivor = list(before)
        psutil.Process(victim).kill()
        deadline = time.monotonic() + 120
        after = await _children_listening(supervisor.pid, port)
        while victim in after and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            after = await _children_listening(supervisor.pid, port)
        assert set(after) - {survivor}, "no child was started again"
        (replacement,) = set(after) - {survivor}
        assert after[survivor] == before[survivor]
        assert after[replacement] == before[victim]


async def test_a_rolling_restart_starts_each_child_again_on_its_socket(
    pg_url: str, tmp_path: Path
) -> None:
    """SIGHUP (uvicorn's rolling restart) replaces the children one by one, each replacement
    on its predecessor's socket: after it, new processes listen on the same two sockets."""
    port = free_port()
    with (tmp_path / "server.log").open("wb") as log, _serve(pg_url, port, log) as supervisor:
        await wait_healthy(f"http://127.0.0.1:{port}", supervisor)
        before = await _children_listening(supervisor.pid, port)
        supervisor.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 240
        after = await _children_listening(supervisor.pid, port)
        while set(after) & set(before) and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            after = await _children_listening(supervisor.pid, port)
        assert not set(after) & set(before), "the children were not replaced"
        assert sorted(map(sorted, after.values())) == sorted(map(sorted, before.values()))


async def _children_listening(supervisor: int, port: int) -> dict[int, set[str]]:
    """Each serving child of ``supervisor`` by pid, with the sockets it listens on, once every
    child listens (a child just started may still be loading)."""
    deadline = time.monotonic() + 120
    while True:
        found = {}
        for child in psutil.Process(supervisor).children():
            try:
                command = child.cmdline()
                if len(command) >= 2 and "spawn_main" in command[-2]:
                    found[child.pid] = _listening_sockets(child, port)
            except (psutil.NoSuchProcess, FileNotFoundError):
                pass  # a child just killed or ending (a zombie, or its fds already closed)
        if (len(found) == 2 and all(found.values())) or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.2)


def _established(process: psutil.Process, port: int) -> int:
    return sum(
        1
        for connection in process.net_connections(kind="tcp")
        if connection.status == psutil.CONN_ESTABLISHED and connection.laddr.port == port
    )


def _listening_sockets(process: psutil.Process, port: int) -> set[str]:
    """The sockets ``process`` listens on ``port`` with, by their kernel identity."""
    return {
        os.readlink(f"/proc/{process.pid}/fd/{connection.fd}")
        for connection in process.net_connections(kind="tcp")
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port == port
    }
