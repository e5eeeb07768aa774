"""A partner's webhook endpoint on a loopback port: answers as scripted, records every
request, and verifies signatures with the ``standardwebhooks`` library's own verifier."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from standardwebhooks import Webhook as Verifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from dealroom.server import start_in_background

HANG = -1
"""A scripted answer: hold the request open until ``release`` (a worker killed mid-attempt)."""


@dataclass
class Received:
    headers: dict[str, str]
    body: str
    status: int
    """What the receiver answered (HANG: nothing)."""


@dataclass
class Receiver:
    url: str
    script: list[int] = field(default_factory=list)
    """Answers for the next requests, in order; 200 once it runs out."""
    requests: list[Received] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def accepted(self) -> list[Received]:
        return [r for r in self.requests if 200 <= r.status < 300]

    def verify(self, secret: str, received: Received) -> dict[str, Any]:
        """The library's verifier over the raw body and headers (raises if it fails)."""
        payload: dict[str, Any] = Verifier(secret).verify(received.body, received.headers)
        return payload

    async def wait_for(self, count: int, timeout: float = 20.0) -> None:
        async def enough() -> None:
            while len(self.requests) < count:
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(enough(), timeout)

    async def wait_accepted(self, count: int, timeout: float = 20.0) -> None:
        async def enough() -> None:
            while len(self.accepted) < count:
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(enough(), timeout)


@asynccontextmanager
async def receiver(script: list[int] | None = None) -> AsyncIterator[Receiver]:
    state = Receiver(url="", script=list(script or []))

    async def hook(request: Request) -> Response:
        body = (await request.body()).decode()
        status = state.script.pop(0) if state.script else 200
        received = Received(dict(request.headers), body, status)
        state.requests.append(received)
        state.arrived.set()
        if status == HANG:
            await state.release.wait()
            return PlainTextResponse("late", status_code=503)
        return PlainTextResponse("ok" if status < 300 else "nope", status_code=status)

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    running = await start_in_background(app)
    state.url = f"http://127.0.0.1:{running.port}/hook"
    try:
        yield state
    finally:
        state.release.set()
        await running.stop()
