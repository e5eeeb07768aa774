"""Server processes for the tests that need more than one (or need to kill one): a free
loopback port, and waiting until a `dealroom serve` process answers /health."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time

import httpx

from tests.support.graphql import TLS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


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
