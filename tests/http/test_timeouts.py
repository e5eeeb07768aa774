"""Read deadlines: a connection must send its request's headers within
DEALROOM_HTTP_HEADER_TIMEOUT (silent or trickling, it is closed) and its body within
DEALROOM_HTTP_BODY_TIMEOUT (408 REQUEST_TIMEOUT), so stalled clients cannot hold connections
and buffers forever. Raw sockets, because HTTP clients do not stall on purpose."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from dealroom.config import Settings
from dealroom.realtime import Broker
from tests.conftest import Server, serving
from tests.support.clock import ManualClock

DEADLINE = 0.5


@pytest.fixture
async def strict(
    settings: Settings, engine: AsyncEngine, broker: Broker, clock: ManualClock
) -> AsyncIterator[Server]:
    changed = settings.model_copy(
        update={"http_header_timeout": DEADLINE, "http_body_timeout": DEADLINE}
    )
    async with serving(changed, engine, broker, clock) as running:
        yield running


async def connect(server: Server) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    port = int(server.base_url.rsplit(":", 1)[1])
    return await asyncio.open_connection("127.0.0.1", port)


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sent before closing; fails if it is still open after ``seconds``.
    A close while our bytes were still unread arrives as a reset: closed all the same."""
    try:
        return await asyncio.wait_for(reader.read(), seconds)
    except ConnectionResetError:
        return b""


async def test_a_connection_that_sends_nothing_is_closed(strict: Server) -> None:
    reader, writer = await connect(strict)
    started = time.monotonic()

    assert await closed_within(reader, 10) == b""
    assert time.monotonic() - started < DEADLINE + 2
    writer.close()


async def test_headers_trickled_a_byte_at_a_time_are_cut_off(strict: Server) -> None:
    """Each byte would reset uvicorn's own keep-alive timer; the deadline counts from the
    request's first byte."""
    reader, writer = await connect(strict)
    request = b"GET /health/live HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 400

    async def trickle() -> None:
        with contextlib.suppress(ConnectionError):
            for byte in request:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.02)

    sender = asyncio.create_task(trickle())
    try:
        assert await closed_within(reader, 6) == b""
    finally:
        sender.cancel()
        writer.close()


async def test_a_stalled_body_is_408_with_a_code(strict: Server) -> None:
    reader, writer = await connect(strict)
    writer.write(
        b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n" + b'{"query": "{ __typ'
    )
    await writer.drain()

    answer = await closed_within(reader, 10)

    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert json.loads(body)["errors"][0]["extensions"]["code"] == "REQUEST_TIMEOUT"
    writer.close()


async def test_a_prompt_request_is_served_on_the_same_settings(strict: Server) -> None:
    response = await strict.client().http.post("/graphql", json={"query": "{ __typename }"})

    assert response.json() == {"data": {"__typename": "Query"}}
