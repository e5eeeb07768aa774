"""Server processes for the tests that need more than one (or need to kill one): a free
loopback port, and waiting until a `dealroom serve` process answers /health."""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import httpx

from tests.support.backends import REDIS_FOR_BROKER_TESTS
from tests.support.graphql import TLS

PORTS_FROM = 20000
"""The first port of the test servers' blocks: below the kernel's ephemeral range (32768 and
up by default), so no bind to port 0 and no outgoing connection is handed one of them."""
PORTS_PER_WORKER = 1000
WORKER_BLOCKS = 12
"""Blocks of ``PORTS_PER_WORKER`` ports, one for each pytest-xdist worker (modulo this)."""

_handed = itertools.count()


def free_port() -> int:
    """A loopback port for a test's server that no other test of the run is handed.

    Each pytest-xdist worker takes the ports of its own block in turn (starting at an offset of its
    pid, so a run just after another does not start on its ports), skipping any that will not bind
    now. Any free port from the kernel is not enough: another worker could be handed the same one
    before the first server binds it, and as the servers' children bind with ``SO_REUSEPORT`` both
    servers would share it, one test's ``/health`` answered by another test's server."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    block = PORTS_FROM + (int(worker) if worker.isdigit() else 0) % WORKER_BLOCKS * PORTS_PER_WORKER
    for _ in range(PORTS_PER_WORKER):
        port = block + (os.getpid() + next(_handed)) % PORTS_PER_WORKER
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no port of {block}-{block + PORTS_PER_WORKER - 1} binds")


STARTUP_SECONDS = 180.0
"""How long a `dealroom serve` subprocess may take to answer /health: interpreter start,
imports and migrations on a busy 2-core machine (15 s was too short under load)."""


async def wait_healthy(
    base_url: str, process: subprocess.Popen[bytes], seconds: float = STARTUP_SECONDS
) -> None:
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base_url, verify=TLS) as http:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"server exited with {process.returncode}")
            try:
                if (await http.get("/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError(f"{base_url} never became healthy")


@contextmanager
def serve(
    database_url: str, port: int, log: IO[bytes], **settings: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``dealroom serve`` in its own process; ``settings`` are more ``DEALROOM_*`` values."""
    env = {
        **os.environ,
        "DEALROOM_DATABASE_URL": database_url,
        "DEALROOM_REDIS_URL": REDIS_FOR_BROKER_TESTS,
        "DEALROOM_PORT": str(port),
        "DEALROOM_HOST": "127.0.0.1",
        # Only the foundation's events: agent replies are covered by tests/e2e/test_turn*.
        "DEALROOM_WORKERS": "0",
        "DEALROOM_WEBHOOK_WORKERS": "0",  # no polling loop either
        **{f"DEALROOM_{name.upper()}": value for name, value in settings.items()},
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "dealroom.cli", "serve", "--processes", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
