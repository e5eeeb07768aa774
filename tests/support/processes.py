"""Server processes for the tests that need more than one (or need to kill one): a free
loopback port, and waiting until a `dealroom serve` process answers /health."""

from __future__ import annotations

import asyncio
import socket
import subprocess

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def wait_healthy(base_url: str, process: subprocess.Popen[bytes], tries: int = 300) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        for _ in range(tries):
            if process.poll() is not None:
                raise AssertionError(f"server exited with {process.returncode}")
            try:
                if (await http.get("/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError(f"{base_url} never became healthy")
